// server/admission.cpp: slot accounting for in-flight engine requests.
#include "server/admission.h"

namespace folio::server {

bool Admission::try_acquire(const std::vector<RequestId>& ids) {
  std::lock_guard l(mu_);
  if (live_.size() + ids.size() > static_cast<std::size_t>(capacity_)) return false;
  for (RequestId id : ids) live_.insert(id);
  return true;
}

void Admission::release(RequestId id) {
  std::lock_guard l(mu_);
  live_.erase(id);
}

std::size_t Admission::in_flight() const {
  std::lock_guard l(mu_);
  return live_.size();
}

std::vector<RequestId> Admission::live() const {
  std::lock_guard l(mu_);
  return {live_.begin(), live_.end()};
}

}  // namespace folio::server
