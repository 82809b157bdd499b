#include "route/threshold.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <string>

#include "base/error.h"
#include "route/score.h"

namespace folio::route {

double calibrate_threshold(std::vector<double> scores, double large_share) {
  if (scores.empty()) throw Error("route calibration: the score sample is empty");
  if (!(large_share >= 0 && large_share <= 1))
    throw Error("route calibration: large_share must be in [0, 1], got " +
                std::to_string(large_share));
  for (double s : scores) {
    if (!std::isfinite(s))
      throw Error("route calibration: the score sample holds a non-finite value");
  }
  std::sort(scores.begin(), scores.end(), std::greater<>());  // descending
  const double n = static_cast<double>(scores.size());

  // Candidate cuts, from "nothing large" down: after taking the first k
  // scores (a whole tie block at a time), the share is k / n.
  double best_threshold = std::max(kAboveAnyScore, std::nextafter(scores.front(), HUGE_VAL));
  double best_error = large_share;  // the share of "nothing large" is 0
  std::size_t k = 0;
  while (k < scores.size()) {
    const double v = scores[k];
    while (k < scores.size() && scores[k] == v) ++k;  // take the tie block
    const double error = std::abs(static_cast<double>(k) / n - large_share);
    // Strictly better only: on an exact tie the smaller share (seen first) stays.
    if (error < best_error) {
      best_error = error;
      // Midpoint to the next lower distinct score (v itself when the two are
      // adjacent doubles and the midpoint rounds down to the lower one); the
      // minimum itself at the end.
      best_threshold = v;
      if (k < scores.size()) {
        const double mid = v + (scores[k] - v) / 2;
        if (mid > scores[k]) best_threshold = mid;
      }
    }
  }
  return best_threshold;
}

double share_at_or_above(std::span<const double> scores, double threshold) {
  if (scores.empty()) return 0;
  const auto large =
      std::count_if(scores.begin(), scores.end(), [threshold](double s) { return s >= threshold; });
  return static_cast<double>(large) / static_cast<double>(scores.size());
}

}  // namespace folio::route
