// server/handlers_generate.cpp: /v1/completions, /v1/chat/completions and
// /v1/embeddings.
#include <string>

#include "server/api_error.h"
#include "server/embedding_job.h"
#include "server/handlers.h"
#include "server/head_route_job.h"
#include "server/json_fields.h"
#include "server/model_routing.h"

namespace folio::server {
namespace {

HttpReply start_job(ServerContext& ctx, ApiKind kind, const HttpRequest& req) {
  const auto body = parse_body(req.body);
  const auto ordered = parse_body_ordered(req.body);
  Fields fields(body);
  const ServerContext::Target t = ctx.resolve(fields.string("model"));
  HttpReply r;
  bool stream = false;
  if (t.virt != nullptr) {
    PendingRoute pending = prepare_route(ctx, *t.virt, kind, body, ordered);
    if (needs_head(pending)) {  // the decision waits for the head's pooled prompt
      stream = pending.on_small->stream;
      auto job = std::make_unique<HeadRouteJob>(ctx, kind, body, ordered, std::move(pending));
      job->submit();
      r.job = std::move(job);
    } else {
      RoutedRequest routed =
          finish_route(ctx, std::move(pending), kind, body, ordered, std::nullopt);
      stream = routed.request.stream;
      r.job = start_routed(ctx, kind, body, ordered, std::move(routed));
    }
  } else {
    RoutedRequest routed{
        .model = t.model,
        .request = parse_for_model(kind, body, t.model->model, ctx.config, ordered),
        .decision = std::nullopt,
        .virt = nullptr};
    stream = routed.request.stream;
    r.job = start_routed(ctx, kind, body, ordered, std::move(routed));
  }
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

HttpReply handle_embeddings(ServerContext& ctx, const HttpRequest& req) {
  const auto body = parse_body(req.body);
  Fields fields(body);
  ServedModel& model = ctx.concrete(fields.string("model"));
  auto job = std::make_unique<EmbeddingJob>(ctx, model,
                                            parse_embedding_request(body, model.model, ctx.config));
  job->submit();
  HttpReply r;
  r.job = std::move(job);
  return r;
}

}  // namespace folio::server
