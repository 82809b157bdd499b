#include "spec/row_cost.h"

#include <algorithm>
#include <cmath>

namespace folio::spec {

RowCostEstimate RowCostEstimate::pinned(double cost) {
  RowCostEstimate e;
  e.pinned_ = std::clamp(cost, kMinCost, kMaxCost);
  return e;
}

void RowCostEstimate::observe(std::int32_t rows, double seconds) {
  if (rows < 1 || rows > kMaxRows) return;
  if (!std::isfinite(seconds) || seconds <= 0) return;
  const auto r = static_cast<std::size_t>(rows);
  // The plain mean of the first 1 / kWeight steps, then a running one.
  const double w = std::max(kWeight, 1.0 / (count_[r] + 1));
  mean_[r] += w * (seconds - mean_[r]);
  if (count_[r] < (1 << 30)) ++count_[r];
}

bool RowCostEstimate::measured() const {
  if (pinned_ >= 0 || count_[1] < kMinOneRowSteps) return false;
  return std::any_of(count_.begin() + 2, count_.end(), [](std::int32_t c) { return c > 0; });
}

double RowCostEstimate::one_row_seconds() const {
  return count_[1] >= kMinOneRowSteps ? mean_[1] : 0.0;
}

double RowCostEstimate::value() const {
  if (pinned_ >= 0) return pinned_;
  if (!measured()) return kDefaultRowCost;
  // Each row count weighs as many steps as it has seen (so the prior fades)
  // times (r - 1)^2: a step's noise divides by r - 1 in its per-row cost.
  double sum = kPriorWeight * kDefaultRowCost, weight = kPriorWeight;
  for (std::size_t r = 2; r < mean_.size(); ++r) {
    if (count_[r] == 0) continue;
    const auto extra = static_cast<double>(r - 1);
    const double per_row = (mean_[r] / mean_[1] - 1) / extra;
    const double w = static_cast<double>(count_[r]) * extra * extra;
    sum += w * std::clamp(per_row, 0.0, kMaxCost);
    weight += w;
  }
  return std::clamp(sum / weight, kMinCost, kMaxCost);
}

}  // namespace folio::spec
