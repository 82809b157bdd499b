// server/cascade_job.cpp: small first, large when the small answer is unsure.
#include "server/cascade_job.h"

#include <algorithm>

#include "server/api_error.h"
#include "server/model_routing.h"

namespace folio::server {

CascadeJob::CascadeJob(ServerContext& ctx, const VirtualModel& v, ServedModel& small,
                       GenerationRequest on_small, ServedModel& large,
                       std::optional<GenerationRequest> on_large, route::RouteDecision decision)
    : ctx_(ctx),
      virt_(v),
      small_(small),
      large_(large),
      on_large_(std::move(on_large)),
      decision_(std::move(decision)),
      stream_(on_small.stream),
      small_job_(std::make_unique<GenerationJob>(ctx, small, std::move(on_small))) {
  small_job_->probe_confidence();
}

void CascadeJob::submit() {
  small_job_->submit();
}

void CascadeJob::attach(const std::function<void()>& notify) {
  notify_ = notify;
  (large_job_ ? large_job_ : small_job_)->attach(notify);
}

void CascadeJob::cancel() {
  (large_job_ ? large_job_ : small_job_)->cancel();
}

JobOutput CascadeJob::poll() {
  if (large_job_) return large_job_->poll();
  JobOutput small = small_job_->poll();
  if (!small.done) return small;
  decided_ = true;
  if (!on_large_ || small.status != 200) return small;
  const std::vector<Confidence> conf = small_job_->confidence();
  const bool unsure = std::any_of(conf.begin(), conf.end(),
                                  [&](const Confidence& c) { return escalate(c, virt_.cascade); });
  if (!unsure) return small;
  auto job = std::make_unique<GenerationJob>(ctx_, large_, std::move(*on_large_));
  on_large_.reset();
  try {
    job->submit();
  } catch (const ApiError& e) {
    ctx_.log.warn("cascade of `" + virt_.name + "`: the large model refused the rerun (" +
                  e.what() + "); answering with the small model");
    return small;
  }
  ctx_.route_metrics.cascade_escalated(virt_.name, small_job_->completion_tokens());
  large_job_ = std::move(job);
  if (notify_) large_job_->attach(notify_);
  return large_job_->poll();
}

HeaderList CascadeJob::headers() const {
  if (large_job_) return route_headers(large_.model.name(), "cascade", decision_.score);
  return route_headers(small_.model.name(), decision_.reason, decision_.score);
}

}  // namespace folio::server
