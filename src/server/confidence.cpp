// server/confidence.cpp: confidence of an answer, and when to escalate it.
#include "server/confidence.h"

#include <cmath>
#include <string>

#include "base/error.h"

namespace folio::server {

void ConfidenceMeter::add(double chosen, std::optional<double> top1, std::optional<double> second) {
  sum_logprob_ += chosen;
  ++tokens_;
  if (top1 && second) {
    sum_margin_ += *top1 - *second;
    ++margins_;
  }
}

Confidence ConfidenceMeter::result() const {
  Confidence c;
  c.tokens = tokens_;
  if (tokens_ > 0) c.mean_logprob = sum_logprob_ / static_cast<double>(tokens_);
  if (margins_ > 0) c.mean_margin = sum_margin_ / static_cast<double>(margins_);
  return c;
}

bool escalate(const Confidence& c, const CascadePolicy& p) {
  if (!p.enabled) return false;
  if (c.tokens == 0) return true;
  if (p.min_mean_logprob && c.mean_logprob < *p.min_mean_logprob) return true;
  if (p.min_mean_margin && c.mean_margin < *p.min_mean_margin) return true;
  return false;
}

CascadePolicy parse_cascade_policy(const nlohmann::json& j) {
  if (!j.is_object()) throw Error("cascade must be an object");
  CascadePolicy p;
  p.enabled = true;
  for (const auto& [key, v] : j.items()) {
    if (!v.is_number() || !std::isfinite(v.get<double>())) {
      throw Error("cascade." + key + " must be a number");
    }
    const double x = v.get<double>();
    if (key == "min_mean_logprob") {
      if (x > 0) throw Error("cascade.min_mean_logprob must be <= 0 (a log-probability)");
      p.min_mean_logprob = x;
    } else if (key == "min_mean_margin") {
      if (x < 0) throw Error("cascade.min_mean_margin must be >= 0");
      p.min_mean_margin = x;
    } else {
      throw Error("cascade." + key +
                  " is not a cascade setting (min_mean_logprob, min_mean_margin)");
    }
  }
  if (!p.min_mean_logprob && !p.min_mean_margin) {
    throw Error("cascade needs min_mean_logprob or min_mean_margin");
  }
  return p;
}

}  // namespace folio::server
