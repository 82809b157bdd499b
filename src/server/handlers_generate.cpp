// server/handlers_generate.cpp: /v1/completions and /v1/chat/completions.
#include <string>

#include "server/api_error.h"
#include "server/cascade_job.h"
#include "server/handlers.h"
#include "server/json_fields.h"
#include "server/model_routing.h"

namespace folio::server {
namespace {

// A virtual model with a cascade, routed small: the small answer may be
// rerun on the large model (cascade_job.h).
std::unique_ptr<Job> cascade(ServerContext& ctx, ApiKind kind, const nlohmann::json& body,
                             const nlohmann::ordered_json& ordered, RoutedRequest routed) {
  const VirtualModel& v = *routed.virt;
  ServedModel& large = ctx.models[v.large];
  std::optional<GenerationRequest> on_large;
  try {
    on_large = parse_for_model(kind, body, large.model, ctx.config, ordered);
  } catch (const ApiError&) {
    // The large model cannot take it as sent: the small answer stands.
  }
  auto job = std::make_unique<CascadeJob>(ctx, v, *routed.model, std::move(routed.request), large,
                                          std::move(on_large), std::move(*routed.decision));
  job->submit();
  return job;
}

HttpReply start_job(ServerContext& ctx, ApiKind kind, const HttpRequest& req) {
  const auto body = parse_body(req.body);
  const auto ordered = parse_body_ordered(req.body);
  RoutedRequest routed = parse_routed(ctx, kind, body, ordered);
  HttpReply r;
  const bool stream = routed.request.stream;
  if (routed.virt != nullptr && routed.virt->cascade.enabled &&
      routed.model == &ctx.models[routed.virt->small]) {
    r.job = cascade(ctx, kind, body, ordered, std::move(routed));  // it names the model itself
  } else {
    r.headers = route_headers(routed);
    auto job = std::make_unique<GenerationJob>(ctx, *routed.model, std::move(routed.request));
    job->submit();
    r.job = std::move(job);
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

}  // namespace folio::server
