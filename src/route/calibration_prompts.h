// route/calibration_prompts.h: the built-in score sample that turns a
// policy's large_share into a threshold when the server is given no sample of
// its own traffic.
//
// About 60 prompts in the proportions of a general assistant's traffic: easy
// chit-chat and simple facts (about half), then multi-step math, code
// questions with snippets, and analysis requests, of differing lengths. The
// server extracts their features (prompt_tokens counted by its own tokenizer,
// turns 1, max_tokens 0) and calls calibrate_policy_threshold. A threshold
// calibrated on this sample sends roughly large_share of traffic that looks
// like it to the large model; a sample of real traffic calibrates better.
#pragma once

#include <string>
#include <vector>

#include "route/features.h"
#include "route/policy.h"

namespace folio::route {

std::vector<std::string> builtin_calibration_prompts();

// calibrate_threshold (threshold.h) over the route_score of each of `sample`
// under `p.weights`: the threshold that routes about `large_share` of the
// sample large. Throws folio::Error as calibrate_threshold does (an empty
// sample, a share outside [0, 1]) or as route_score does (invalid weights).
double calibrate_policy_threshold(const std::vector<RouteFeatures>& sample, const RoutePolicy& p,
                                  double large_share);

}  // namespace folio::route
