// server/admission.h: the bounded admission queue and the live-request registry.
//
// Every engine request the server has submitted and not yet seen finish holds
// a slot; at most `capacity` slots exist (--max-queue). Slots are also counted
// per lane (one lane per served model), so that a model's own queue can be
// bounded too (--max-waiting-requests: the caller passes the lane's limit).
// A request that does not fit is refused at once, never queued in the
// server. The registry also lets shutdown abort whatever is still running
// after the grace period.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "engine/protocol.h"

namespace folio::server {

using engine::RequestId;

class Admission {
 public:
  explicit Admission(std::int32_t capacity) : capacity_(capacity) {}

  enum class Result { kAdmitted, kServerFull, kLaneFull };
  // Reserves slots for all `ids` in `lane` or none: kServerFull when the
  // server's capacity would be exceeded, kLaneFull when the lane would hold
  // more than `lane_limit` (< 0: no lane limit).
  Result try_acquire(const std::vector<RequestId>& ids, const void* lane = nullptr,
                     std::int64_t lane_limit = -1);
  void release(RequestId id);  // idempotent
  std::size_t in_flight() const;
  std::size_t in_flight(const void* lane) const;
  std::vector<RequestId> live() const;

 private:
  std::int32_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<RequestId, const void*> live_;  // id -> lane
  std::unordered_map<const void*, std::size_t> per_lane_;
};

}  // namespace folio::server
