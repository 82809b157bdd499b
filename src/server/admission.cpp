// server/admission.cpp: slot accounting for in-flight engine requests.
#include "server/admission.h"

namespace folio::server {

Admission::Result Admission::try_acquire(const std::vector<RequestId>& ids, const void* lane,
                                         std::int64_t lane_limit) {
  std::lock_guard l(mu_);
  if (live_.size() + ids.size() > static_cast<std::size_t>(capacity_)) return Result::kServerFull;
  const auto it = per_lane_.find(lane);
  const std::size_t in_lane = it == per_lane_.end() ? 0 : it->second;
  if (lane_limit >= 0 && in_lane + ids.size() > static_cast<std::size_t>(lane_limit)) {
    return Result::kLaneFull;
  }
  for (RequestId id : ids) {
    if (live_.emplace(id, lane).second) ++per_lane_[lane];
  }
  return Result::kAdmitted;
}

void Admission::release(RequestId id) {
  std::lock_guard l(mu_);
  const auto it = live_.find(id);
  if (it == live_.end()) return;
  const auto lane = per_lane_.find(it->second);
  if (--lane->second == 0) per_lane_.erase(lane);
  live_.erase(it);
}

std::size_t Admission::in_flight() const {
  std::lock_guard l(mu_);
  return live_.size();
}

std::size_t Admission::in_flight(const void* lane) const {
  std::lock_guard l(mu_);
  const auto it = per_lane_.find(lane);
  return it == per_lane_.end() ? 0 : it->second;
}

std::vector<RequestId> Admission::live() const {
  std::lock_guard l(mu_);
  std::vector<RequestId> out;
  out.reserve(live_.size());
  for (const auto& [id, lane] : live_) out.push_back(id);
  return out;
}

}  // namespace folio::server
