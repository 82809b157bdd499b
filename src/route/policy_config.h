// route/policy_config.h: a RoutePolicy from the JSON object a virtual model's
// "policy" holds in the server config file.
//
//   {"threshold": 0.4,                      or "large_share": 0.3 (not both)
//    "weights": {"prompt_tokens": 0.3, "keywords": 0.2, "code": 0.2,
//                "math": 0.2, "turns": 0.05, "max_tokens": 0.05},
//    "scales": {"prompt_tokens": 1024},
//    "keywords": ["prove", "step by step"],
//    "load_wait_bound_s": 2.0, "load_threshold_raise": 0.2,
//    "head": "route-head.json", "head_weight": 1.0}      (learned_head.h)
//
// Every key is optional; an absent one keeps RoutePolicy's default. "weights",
// when given, is the whole weight vector: a term it omits weighs 0 (the
// weights are then divided by their sum). "scales" overrides only the terms it
// names. "keywords" replaces the default list (features.h). Nothing the user
// wrote is ignored: an unknown key, a wrong type or a value out of range
// throws folio::Error naming the key and what it expects.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "route/policy.h"

namespace folio::route {

struct PolicyConfig {
  RoutePolicy policy;
  // Set when the config asks for a share of large-routed requests instead of
  // a threshold: the server turns it into policy.threshold with a score
  // sample (calibrate_policy_threshold, calibration_prompts.h).
  std::optional<double> large_share;
  // "head": the learned head file to load (policy.head stays null here: the
  // caller reads files); "head_weight" is in policy.head_weight.
  std::string head_path;
};

// Throws folio::Error (message "route policy: ...") on any invalid input.
PolicyConfig parse_policy_config(const nlohmann::json& j);

}  // namespace folio::route
