// route/threshold.h: turning a target share of large-routed requests into a
// score threshold, over a sample of scores.
//
// "Send 30% of the traffic to the large model" is what an operator knows; the
// score threshold that does it depends on the traffic. Over a sample, each
// distinct score v is a possible cut: routing `score >= v` large sends the
// share of the sample at or above v. The cut whose share is nearest the target
// wins. With distinct scores the shares step by 1/n, so the nearest is within
// 1/(2n) of any target; a tie block of k equal scores makes a step of k/n that
// no threshold can split, and then the nearest achievable share is taken (on
// an exact tie between two, the smaller share: when in doubt, the small model).
#pragma once

#include <span>
#include <vector>

namespace folio::route {

// A threshold such that the share of `scores` routed large (score >=
// threshold) is as close as possible to `large_share`, in [0, 1].
//   - The threshold for a cut at distinct value v is the midpoint between v
//     and the next lower distinct score, which gives the same share on the
//     sample and leaves room on both sides for unseen scores; the cut at the
//     minimum returns the minimum (share 1).
//   - Share 0 (or a target nearest to 0) returns a value above the maximum and
//     above 1 (kAboveAnyScore, score.h), so that no route_score goes large.
// Throws folio::Error when `scores` is empty or holds a non-finite value, or
// `large_share` is outside [0, 1].
double calibrate_threshold(std::vector<double> scores, double large_share);

// The share of `scores` at or above `threshold` (0 for an empty sample).
double share_at_or_above(std::span<const double> scores, double threshold);

}  // namespace folio::route
