// server/admission.h: the bounded admission queue and the live-request registry.
//
// Every engine request the server has submitted and not yet seen finish holds
// a slot; at most `capacity` slots exist (--max-queue). A request that does
// not fit is refused at once (429), never queued in the server. The registry
// also lets shutdown abort whatever is still running after the grace period.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "engine/protocol.h"

namespace folio::server {

using engine::RequestId;

class Admission {
 public:
  explicit Admission(std::int32_t capacity) : capacity_(capacity) {}

  // Reserves slots for all `ids` or none; false when they do not fit.
  bool try_acquire(const std::vector<RequestId>& ids);
  void release(RequestId id);  // idempotent
  std::size_t in_flight() const;
  std::vector<RequestId> live() const;

 private:
  std::int32_t capacity_;
  mutable std::mutex mu_;
  std::unordered_set<RequestId> live_;
};

}  // namespace folio::server
