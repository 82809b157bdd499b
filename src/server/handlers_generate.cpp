// server/handlers_generate.cpp: /v1/completions and /v1/chat/completions.
#include <string>

#include "server/handlers.h"
#include "server/json_fields.h"

namespace folio::server {
namespace {

HttpReply start_job(ServerContext& ctx, GenerationRequest req) {
  HttpReply r;
  const bool stream = req.stream;
  r.job = std::make_unique<GenerationJob>(ctx, std::move(req));
  r.job->submit();
  if (stream) {
    r.content_type = "text/event-stream";
    r.headers.emplace_back("Cache-Control", "no-cache");
  }
  return r;
}

}  // namespace

HttpReply handle_completions(ServerContext& ctx, const HttpRequest& req) {
  const auto body = parse_body(req.body);
  const auto ordered = parse_body_ordered(req.body);
  return start_job(ctx, parse_completion_request(body, ctx.model, ctx.config, &ordered));
}

HttpReply handle_chat(ServerContext& ctx, const HttpRequest& req) {
  const auto body = parse_body(req.body);
  const auto ordered = parse_body_ordered(req.body);
  return start_job(ctx, parse_chat_request(body, ctx.model, ctx.config, &ordered));
}

}  // namespace folio::server
