#include "route/policy.h"

#include <algorithm>

namespace folio::route {

const char* target_name(Target t) {
  return t == Target::kLarge ? "large" : "small";
}

double applied_threshold(const RoutePolicy& p, const LoadSnapshot& load) {
  const bool overloaded = p.load_wait_bound_s > 0 && load.large_queue_wait_s > p.load_wait_bound_s;
  if (!overloaded) return p.threshold;
  // A negative raise is treated as none, and a threshold already above the
  // cap stays where it is: the load rule only ever raises.
  const double raised =
      std::min(p.threshold + std::max(0.0, p.load_threshold_raise), kAboveAnyScore);
  return std::max(p.threshold, raised);
}

RouteDecision decide(const RouteRequest& r, const RoutePolicy& p, const LoadSnapshot& load) {
  RouteDecision d;
  d.features = extract_features(r.input, p.features);
  d.feature_score = route_score(d.features, p.weights);
  d.score = d.feature_score;
  if (p.head && r.head_score) {
    const double w = std::clamp(p.head_weight, 0.0, 1.0);
    d.head_score = std::clamp(*r.head_score, 0.0, 1.0);
    d.score = (1 - w) * d.feature_score + w * *d.head_score;
  }
  d.threshold = applied_threshold(p, load);
  if (!r.fits_small) {
    d.target = Target::kLarge;
    d.reason = "context";
  } else if (!r.small_missing.empty()) {
    d.target = Target::kLarge;
    d.reason = "feature:" + r.small_missing.front();
  } else if (d.score >= d.threshold) {
    d.target = Target::kLarge;
    d.reason = "score";
  } else {
    d.target = Target::kSmall;
    d.reason = d.score >= p.threshold ? "load" : "score_below";
  }
  return d;
}

}  // namespace folio::route
