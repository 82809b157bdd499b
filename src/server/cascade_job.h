// server/cascade_job.h: answer with the small model; when it was unsure,
// answer again with the large one (a virtual model's "cascade").
//
// The small model's job runs with probe_confidence(): its output is held
// until it is done, then its confidence (server/confidence.h) decides. A
// confident answer is sent as it is; otherwise the request is submitted to
// the large model and that answer is sent instead (the small answer's
// tokens are counted as wasted in /metrics). A streamed cascade therefore
// starts streaming only when the answer is chosen. If the large model
// cannot take the request (full, shutting down, prompt too long for it),
// the small answer is sent. Headers name the model that answered
// (x-folio-route-reason "cascade" after an escalation).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "route/policy.h"
#include "server/generation_job.h"
#include "server/job.h"
#include "server/server_context.h"

namespace folio::server {

class CascadeJob final : public Job {
 public:
  // `on_large`: the request parsed for the large model (none: it cannot
  // take it, so the small answer stands).
  CascadeJob(ServerContext& ctx, const VirtualModel& v, ServedModel& small,
             GenerationRequest on_small, ServedModel& large,
             std::optional<GenerationRequest> on_large, route::RouteDecision decision);

  void submit();  // the small model's job; throws ApiError as GenerationJob::submit
  void attach(const std::function<void()>& notify) override;
  JobOutput poll() override;
  void cancel() override;
  bool streaming() const override { return stream_; }
  HeaderList headers() const override;
  bool head_ready() const override { return decided_; }

  bool escalated() const { return large_job_ != nullptr; }

 private:
  ServerContext& ctx_;
  const VirtualModel& virt_;
  ServedModel& small_;
  ServedModel& large_;
  std::optional<GenerationRequest> on_large_;
  route::RouteDecision decision_;
  bool stream_ = false;
  bool decided_ = false;  // the small job is done and the answer chosen
  std::function<void()> notify_;
  std::unique_ptr<GenerationJob> small_job_;
  std::unique_ptr<GenerationJob> large_job_;  // set once escalated
};

}  // namespace folio::server
