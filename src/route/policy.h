// route/policy.h: the routing decision for a request to a virtual model:
// SMALL or LARGE, and why.
//
// Rules, in order:
//   1. hard rules, whatever the load: the request does not fit the small
//      model's context -> large ("context"); it uses something the small model
//      lacks (tools, a chat template, ...) -> large ("feature:<name>");
//   2. the score (score.h) against the threshold: score >= threshold -> large
//      ("score"), else small ("score_below"). With a learned head
//      (learned_head.h) and its output for the request, the score is
//      (1 - head_weight) * feature score + head_weight * head;
//   3. the load rule, which only ever raises the threshold of rule 2: while the
//      large model's queue wait exceeds load_wait_bound_s, the threshold is
//      raised by load_threshold_raise (at most to kAboveAnyScore, which sends
//      everything that is not hard to the small model). A request that rule 2
//      alone would have sent large and the raised threshold sends small is
//      reported as "load".
// decide() is a pure function: the same request, policy and load give the
// same decision.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "route/features.h"
#include "route/learned_head.h"
#include "route/score.h"

namespace folio::route {

enum class Target { kSmall, kLarge };

const char* target_name(Target t);  // "small" / "large"

// The large model's load at decision time, from its engine.
struct LoadSnapshot {
  double large_queue_wait_s = 0;   // estimated wait of a new request on the large model's queue
  std::int32_t large_waiting = 0;  // requests waiting there (for logs; the rule reads the wait)
};

// The default threshold. The score is a weighted sum with no weight above
// 0.25, so 0.5 would take two strong dimensions at once (code with keywords,
// long with math) and sends none of the built-in calibration sample
// (calibration_prompts.h) large; 0.25 sends its top 10-15%: multi-step
// proofs, code to debug or refactor. Configs normally give "threshold" or
// "large_share" (policy_config.h).
inline constexpr double kDefaultThreshold = 0.25;

struct RoutePolicy {
  double threshold = kDefaultThreshold;  // score >= threshold -> large
  ScoreWeights weights;
  FeatureConfig features;
  double load_wait_bound_s = 0;       // 0 = off; when large_queue_wait_s > bound, raise the
  double load_threshold_raise = 0.2;  // threshold by this much (to kAboveAnyScore at most)
  // Optional learned head; the server pools the prompt on the small model
  // and passes its output as RouteRequest::head_score.
  std::shared_ptr<const LearnedHead> head;
  double head_weight = 1.0;  // in [0, 1]: the head's share of the score
};

// What decide() needs beyond the features.
struct RouteRequest {
  RouteInput input;
  bool fits_small = true;  // prompt + max_tokens fit the small model's context
  // Request features the small model lacks (e.g. "tools", "chat_template");
  // non-empty -> large, the reason naming the first.
  std::vector<std::string> small_missing;
  // The policy's learned head on this request's pooled prompt (unset: no
  // head, or the small model could not pool it; the feature score alone).
  std::optional<double> head_score;
};

struct RouteDecision {
  Target target = Target::kSmall;
  // "context", "feature:<name>", "score", "score_below" or "load" (see above).
  std::string reason;
  double score = 0;                  // always computed (also for the hard rules), for the histogram
  double feature_score = 0;          // the feature score alone (score.h)
  std::optional<double> head_score;  // the learned head's output, when it took part
  double threshold = 0;              // the threshold applied, after the load rule
  RouteFeatures features;
};

// The threshold decide() applies under `load`: policy.threshold, raised while
// the large model is overloaded; never below policy.threshold.
double applied_threshold(const RoutePolicy& p, const LoadSnapshot& load);

RouteDecision decide(const RouteRequest& r, const RoutePolicy& p, const LoadSnapshot& load);

}  // namespace folio::route
