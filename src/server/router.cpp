// server/router.cpp: the route table and error mapping.
#include "server/router.h"

#include <string_view>

#include "server/api_error.h"
#include "server/auth.h"
#include "server/handlers.h"

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
    {"/version", "GET", handle_version},
    {"/metrics", "GET", handle_metrics},
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
    return error_reply(e.status(), e.what(), e.param());
  } catch (const std::exception& e) {
    const std::string id = ctx.response_id("err-");
    ctx.log.error("internal error " + id + " on " + req.method + " " + std::string(path) + ": " +
                  e.what());
    return error_reply(500, "internal server error (request id " + id + ")");
  }
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
  const std::string_view path = path_of(req.target);
  if ((path == "/v1" || path.starts_with("/v1/")) && !authorized(ctx.api_key, req.authorization)) {
    HttpReply r =
        error_reply(401, "invalid or missing API key (send 'Authorization: Bearer <key>')");
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    return r;
  }
  if (path.starts_with("/v1/models/")) {
    if (req.method != "GET") {
      HttpReply r = error_reply(
          405, "method " + req.method + " not allowed on " + std::string(path) + " (allowed: GET)");
      r.headers.emplace_back("Allow", "GET");
      return r;
    }
    return guarded(ctx, req, path, [&] {
      return handle_model(ctx, req, path.substr(std::string_view("/v1/models/").size()));
    });
  }
  const Route* match = nullptr;
  std::string allow;
  for (const Route& rt : kRoutes) {
    if (rt.path != path) continue;
    if (!allow.empty()) allow += ", ";
    allow += rt.method;
    if (rt.method == req.method) match = &rt;
  }
  if (allow.empty()) return error_reply(404, "route " + std::string(path) + " not found");
  if (!match) {
    HttpReply r = error_reply(405, "method " + req.method + " not allowed on " + std::string(path) +
                                       " (allowed: " + allow + ")");
    r.headers.emplace_back("Allow", allow);
    return r;
  }
  return guarded(ctx, req, path, [&] { return match->handler(ctx, req); });
}

}  // namespace folio::server
