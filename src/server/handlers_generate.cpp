// server/handlers_generate.cpp: /v1/completions and /v1/chat/completions.
#include <string>

#include "server/handlers.h"
#include "server/json_fields.h"
#include "server/model_routing.h"

namespace folio::server {
namespace {

HttpReply start_job(ServerContext& ctx, ApiKind kind, const HttpRequest& req) {
  const auto body = parse_body(req.body);
  const auto ordered = parse_body_ordered(req.body);
  RoutedRequest routed = parse_routed(ctx, kind, body, ordered);
  HttpReply r;
  r.headers = route_headers(routed);
  const bool stream = routed.request.stream;
  r.job = std::make_unique<GenerationJob>(ctx, *routed.model, std::move(routed.request));
  r.job->submit();
  if (stream) {
    r.content_type = "text/event-stream";
    r.headers.emplace_back("Cache-Control", "no-cache");
  }
  return r;
}

}  // namespace

HttpReply handle_completions(ServerContext& ctx, const HttpRequest& req) {
  return start_job(ctx, ApiKind::kCompletion, req);
}

HttpReply handle_chat(ServerContext& ctx, const HttpRequest& req) {
  return start_job(ctx, ApiKind::kChat, req);
}

}  // namespace folio::server
