#include "server/engine_submit.h"

#include <string>

#include "base/error.h"
#include "server/api_error.h"

namespace folio::server {

std::vector<engine::AdmittedRequest> admit_requests(ServerContext& ctx, ServedModel& model,
                                                    std::vector<engine::EngineRequest> requests,
                                                    double now) {
  if (ctx.draining) throw ApiError(503, "the server is shutting down").retry_after(5);
  std::vector<engine::AdmittedRequest> admitted;
  std::vector<RequestId> ids;
  for (engine::EngineRequest& r : requests) {
    try {
      admitted.push_back(model.engine.limits().admit(std::move(r), now));
    } catch (const Error& e) {
      throw ApiError(400, e.what());
    }
    ids.push_back(admitted.back().request().id);
  }
  // The model's waiting queue: what it holds beyond the requests its engine
  // runs now. New requests count at once; running ones as of the last step.
  std::int64_t lane_limit = -1;
  const std::int32_t max_waiting = ctx.config.max_waiting_requests;
  if (max_waiting >= 0) lane_limit = model.engine.stats().num_running + std::int64_t{max_waiting};
  switch (ctx.admission.try_acquire(ids, &model, lane_limit)) {
    case Admission::Result::kAdmitted:
      break;
    case Admission::Result::kServerFull:
      throw ApiError(429, "the server is at capacity (" + std::to_string(ctx.config.max_queue) +
                              " requests in flight, --max-queue); retry later")
          .retry_after(1);
    case Admission::Result::kLaneFull:
      throw ApiError(503, "model " + model.model.name() +
                              " is overloaded: " + std::to_string(max_waiting) +
                              " requests already wait for it (--max-waiting-requests); retry "
                              "later")
          .retry_after(1);
  }
  return admitted;
}

}  // namespace folio::server
