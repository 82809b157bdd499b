// server/router.cpp: the route table and error mapping.
#include "server/router.h"

#include <string_view>

#include "server/api_error.h"
#include "server/auth.h"
#include "server/cors.h"
#include "server/handlers.h"
#include "server/web_assets.h"

namespace folio::server {
namespace {

using Handler = HttpReply (*)(ServerContext&, const HttpRequest&);

struct Route {
  std::string_view path;
  std::string_view method;
  Handler handler;
};

constexpr Route kRoutes[] = {
    {"/v1/completions", "POST", handle_completions},
    {"/v1/chat/completions", "POST", handle_chat},
    {"/v1/embeddings", "POST", handle_embeddings},
    {"/v1/models", "GET", handle_models},
    {"/tokenize", "POST", handle_tokenize},
    {"/detokenize", "POST", handle_detokenize},
    {"/health", "GET", handle_health},
    {"/livez", "GET", handle_livez},
    {"/version", "GET", handle_version},
    {"/metrics", "GET", handle_metrics},
    {"/openapi.json", "GET", handle_openapi},
};

std::string_view path_of(std::string_view target) {
  const auto q = target.find_first_of("?#");
  std::string_view p = target.substr(0, q);
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);  // "/v1/models/" too
  return p;
}

// Runs a handler: an ApiError becomes its OpenAI error body; any other
// exception is a folio bug (500 with a fresh id, logged).
template <class F>
HttpReply guarded(ServerContext& ctx, const HttpRequest& req, std::string_view path, F&& handler) {
  try {
    return handler();
  } catch (const ApiError& e) {
    HttpReply r = error_reply(e.status(), e.what(), e.param());
    if (e.retry_after_s())
      r.headers.emplace_back("Retry-After", std::to_string(*e.retry_after_s()));
    return r;
  } catch (const std::exception& e) {
    const std::string id = ctx.response_id("err-");
    ctx.log.error("internal error " + id + " on " + req.method + " " + std::string(path) + ": " +
                  e.what());
    return error_reply(500, "internal server error (request id " + id + ")");
  }
}

// The methods `path` answers ("" for an unknown path).
std::string allowed_methods(std::string_view path) {
  if (path.starts_with("/v1/models/") || is_web_ui_path(path)) return "GET";
  std::string allow;
  for (const Route& rt : kRoutes) {
    if (rt.path != path) continue;
    if (!allow.empty()) allow += ", ";
    allow += rt.method;
  }
  return allow;
}

HttpReply method_not_allowed(const HttpRequest& req, std::string_view path,
                             const std::string& allow) {
  HttpReply r = error_reply(405, "method " + req.method + " not allowed on " + std::string(path) +
                                     " (allowed: " + allow + ")");
  r.headers.emplace_back("Allow", allow);
  return r;
}

// Everything but the CORS headers every reply gets.
HttpReply route_unshared(ServerContext& ctx, const HttpRequest& req) {
  const std::string_view path = path_of(req.target);
  // Under --no-webui the page's paths are unknown routes like any other.
  const bool page = is_web_ui_path(path);
  const bool no_page = page && ctx.config.no_webui;
  if (ctx.cors.enabled() && is_preflight(req)) {
    const std::string allow = no_page ? "" : allowed_methods(path);
    if (!allow.empty()) return ctx.cors.preflight(req.origin, allow);
  }
  if ((no_page || route_needs_key(path, ctx.config.metrics_require_key)) &&
      !ctx.api_keys.authorized(req.authorization)) {
    HttpReply r =
        error_reply(401, "invalid or missing API key (send 'Authorization: Bearer <key>')");
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    return r;
  }
  // The chat page: static files, not API routes, so it is outside kRoutes
  // and openapi.json (which describes the API).
  if (no_page) return error_reply(404, "route " + std::string(path) + " not found (--no-webui)");
  if (page) {
    if (req.method != "GET") return method_not_allowed(req, path, "GET");
    return guarded(ctx, req, path, [&] { return handle_web_ui(ctx, req, path); });
  }
  if (path.starts_with("/v1/models/")) {
    if (req.method != "GET") return method_not_allowed(req, path, "GET");
    return guarded(ctx, req, path, [&] {
      return handle_model(ctx, req, path.substr(std::string_view("/v1/models/").size()));
    });
  }
  const Route* match = nullptr;
  for (const Route& rt : kRoutes) {
    if (rt.path == path && rt.method == req.method) match = &rt;
  }
  const std::string allow = allowed_methods(path);
  if (allow.empty()) return error_reply(404, "route " + std::string(path) + " not found");
  if (!match) return method_not_allowed(req, path, allow);
  return guarded(ctx, req, path, [&] { return match->handler(ctx, req); });
}

}  // namespace

HttpReply json_reply(int status, std::string body) {
  HttpReply r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

HttpReply error_reply(int status, const std::string& message,
                      const std::optional<std::string>& param) {
  return json_reply(status, error_body(status, message, param));
}

HttpReply route(ServerContext& ctx, const HttpRequest& req) {
  HttpReply r = route_unshared(ctx, req);
  const HeaderList cors = ctx.cors.reply_headers(req.origin);
  r.headers.insert(r.headers.end(), cors.begin(), cors.end());
  return r;
}

}  // namespace folio::server
