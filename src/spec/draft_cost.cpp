#include "spec/draft_cost.h"

#include <algorithm>
#include <cmath>

namespace folio::spec {

DraftCostEstimate DraftCostEstimate::pinned(double cost) {
  DraftCostEstimate e(std::max(0.0, cost));
  e.pinned_ = true;
  return e;
}

void DraftCostEstimate::observe(std::int32_t forwards, double seconds) {
  if (pinned_ || forwards < 1 || !std::isfinite(seconds) || seconds <= 0) return;
  const double per_forward = seconds / forwards;
  // The plain mean of the first 1 / kWeight proposals, then a running one.
  const double w = std::max(kWeight, 1.0 / (count_ + 1));
  mean_ += w * (per_forward - mean_);
  if (count_ < (1 << 30)) ++count_;
}

bool DraftCostEstimate::measured() const {
  return !pinned_ && count_ >= kMinProposals;
}

double DraftCostEstimate::value(double step_seconds) const {
  if (!measured() || !(step_seconds > 0)) return prior_;
  return std::clamp(mean_ / step_seconds, kMinCost, kMaxCost);
}

}  // namespace folio::spec
