#include "server/head_route_job.h"

#include <algorithm>

#include "base/error.h"
#include "server/api_error.h"
#include "server/cascade_job.h"
#include "server/generation_job.h"

namespace folio::server {
namespace {

// A GenerationJob reporting the route headers of its decision.
class RoutedGenerationJob final : public Job {
 public:
  RoutedGenerationJob(std::unique_ptr<GenerationJob> job, HeaderList headers)
      : job_(std::move(job)), headers_(std::move(headers)) {}
  void attach(const std::function<void()>& notify) override { job_->attach(notify); }
  JobOutput poll() override { return job_->poll(); }
  void cancel() override { job_->cancel(); }
  bool streaming() const override { return job_->streaming(); }
  HeaderList headers() const override { return headers_; }

 private:
  std::unique_ptr<GenerationJob> job_;
  HeaderList headers_;
};

JobOutput error_output(const ApiError& e) {
  return {.bytes = error_body(e.status(), e.what(), e.param()), .done = true, .status = e.status()};
}

}  // namespace

std::unique_ptr<Job> start_routed(ServerContext& ctx, ApiKind kind, const nlohmann::json& body,
                                  const nlohmann::ordered_json& ordered, RoutedRequest routed) {
  if (routed.virt != nullptr && routed.virt->cascade.enabled &&
      routed.model == &ctx.models[routed.virt->small]) {
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
    return job;  // it names the answering model itself
  }
  HeaderList headers = route_headers(routed);
  auto job = std::make_unique<GenerationJob>(ctx, *routed.model, std::move(routed.request));
  job->submit();
  if (headers.empty()) return job;
  return std::make_unique<RoutedGenerationJob>(std::move(job), std::move(headers));
}

HeadRouteJob::HeadRouteJob(ServerContext& ctx, ApiKind kind, nlohmann::json body,
                           nlohmann::ordered_json ordered, PendingRoute pending)
    : ctx_(ctx),
      kind_(kind),
      body_(std::move(body)),
      ordered_(std::move(ordered)),
      pending_(std::move(pending)),
      stream_(pending_->on_small->stream) {
  run_ = std::make_unique<PoolingRun>(ctx_, ctx_.models[pending_->virt->small],
                                      pending_->on_small->prompts);
}

void HeadRouteJob::submit() {
  run_->submit();
}

void HeadRouteJob::attach(const std::function<void()>& notify) {
  notify_ = notify;
  if (inner_) {
    inner_->attach(notify);
  } else {
    run_->attach(notify);
  }
}

void HeadRouteJob::cancel() {
  if (inner_) return inner_->cancel();
  run_->cancel();
  failed_ = true;
}

// The head on each prompt's pooled state; the highest decides (one hard
// prompt of several sends the request large). None when pooling failed.
std::optional<double> HeadRouteJob::head_score() {
  const route::LearnedHead& head = *pending_->virt->policy.head;
  if (!run_->error().empty()) {
    ctx_.log.warn("route `" + pending_->virt->name + "`: pooling for the learned head failed (" +
                  run_->error() + "); the feature score decides");
    return std::nullopt;
  }
  double best = 0;
  try {
    for (const auto& mean : run_->means()) best = std::max(best, head.score(mean));
  } catch (const Error& e) {
    ctx_.log.warn("route `" + pending_->virt->name + "`: " + e.what());
    return std::nullopt;
  }
  return best;
}

JobOutput HeadRouteJob::poll() {
  if (inner_) return inner_->poll();
  if (failed_) return {.bytes = {}, .done = true, .status = 499};
  if (!run_->poll()) return {};
  const std::optional<double> score = head_score();
  run_.reset();  // its requests are finished: nothing to abort
  try {
    RoutedRequest routed = finish_route(ctx_, std::move(*pending_), kind_, body_, ordered_, score);
    pending_.reset();
    inner_ = start_routed(ctx_, kind_, body_, ordered_, std::move(routed));
  } catch (const ApiError& e) {
    failed_ = true;
    return error_output(e);
  }
  if (notify_) inner_->attach(notify_);
  return inner_->poll();
}

}  // namespace folio::server
