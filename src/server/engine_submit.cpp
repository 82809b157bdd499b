#include "server/engine_submit.h"

#include <string>

#include "base/error.h"
#include "server/api_error.h"

namespace folio::server {

std::vector<engine::AdmittedRequest> admit_requests(ServerContext& ctx, ServedModel& model,
                                                    std::vector<engine::EngineRequest> requests,
                                                    double now) {
  if (ctx.draining) throw ApiError(503, "the server is shutting down");
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
  if (!ctx.admission.try_acquire(ids)) {
    throw ApiError(429, "the server is at capacity (" + std::to_string(ctx.config.max_queue) +
                            " requests in flight, --max-queue); retry later");
  }
  return admitted;
}

}  // namespace folio::server
