// server/engine_submit.h: admitting a job's engine requests, all or none.
#pragma once

#include <vector>

#include "engine/request_limits.h"
#include "server/server_context.h"

namespace folio::server {

// Refuses while the server drains (503); admits every request against
// `model`'s engine limits (400 naming the limit: a request that can never
// run is the client's fault whether or not there is room now); then takes
// their admission slots, all or none (429 when --max-queue is full). Throws
// ApiError; on return the caller owns the slots (Admission::release).
std::vector<engine::AdmittedRequest> admit_requests(ServerContext& ctx, ServedModel& model,
                                                    std::vector<engine::EngineRequest> requests,
                                                    double now);

}  // namespace folio::server
