// server/confidence.h: how sure a model was of its answer, and the cascade
// rule that reruns an unsure small-model answer on the large model.
//
// Confidence of one sample, from the engine's raw logprobs of each token:
//   mean_logprob  the mean log-probability of the tokens it chose
//   mean_margin   the mean gap top-1 minus top-2 log-probability (a wide gap
//                 means the model had one clear choice)
// A cascaded answer is escalated when any of its samples falls below either
// bound that is set (an empty answer has no evidence and is escalated).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

namespace folio::server {

struct CascadePolicy {
  bool enabled = false;
  std::optional<double> min_mean_logprob;  // e.g. -1.0 (a mean token probability of ~37%)
  std::optional<double> min_mean_margin;   // e.g. 1.0 (top-1 e times as likely as top-2)
};

struct Confidence {
  double mean_logprob = 0;
  double mean_margin = 0;
  std::int64_t tokens = 0;
};

class ConfidenceMeter {
 public:
  // `second`: the runner-up's logprob (none when only one alternative is known).
  void add(double chosen, std::optional<double> top1, std::optional<double> second);
  Confidence result() const;

 private:
  double sum_logprob_ = 0;
  double sum_margin_ = 0;
  std::int64_t tokens_ = 0;
  std::int64_t margins_ = 0;
};

// True when `c` is below a bound of `p` (rerun on the large model).
bool escalate(const Confidence& c, const CascadePolicy& p);

// From a virtual model's "cascade" object: {"min_mean_logprob": -1.0,
// "min_mean_margin": 1.0} (at least one). Throws folio::Error naming the key.
CascadePolicy parse_cascade_policy(const nlohmann::json& j);

}  // namespace folio::server
