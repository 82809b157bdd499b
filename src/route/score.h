// route/score.h: a request's difficulty score in [0, 1], from its features.
//
//   score = sum_i w_i * (1 - exp(-x_i / s_i))
//
// x_i is a count (below), s_i its scale: the count at which the term reaches
// 1 - 1/e = 63% of its weight (2 s_i: 86%, 3 s_i: 95%). The weights are
// non-negative and divided by their sum, so the score is in [0, 1]. Each term
// rises with its count and saturates: the score never falls when a feature
// grows, and no single feature can take it past its weight (a huge paste of
// plain text alone scores at most w_prompt_tokens).
//
//   term           x_i                  weight  scale  why
//   prompt_tokens  prompt tokens        0.25    512    long context is the broadest signal of
//                                                      work, but a long paste is often easy
//   keywords       keyword hits         0.20    2      "prove", "step by step": one hit is a
//                                                      strong hint (39%), two nearly sure (63%)
//   code           code signals         0.20    4      a snippet yields several signals at once
//                                                      (a keyword line and a `;` per line)
//   math           math signals         0.20    6      every number counts, so it takes a few:
//                                                      "What is 2+3?" (3 signals) gets 39%
//   max_tokens     requested max_tokens 0.10    512    asking for a long answer hints at work
//   turns          user turns - 1       0.05    4      long conversations, weakly
#pragma once

#include <span>

#include "route/features.h"

namespace folio::route {

// No score reaches this (scores are at most 1): a threshold at it routes
// nothing large by score.
inline constexpr double kAboveAnyScore = 1.0 + 1e-9;

struct ScoreWeights {
  // Relative weights: route_score divides them by their sum.
  double prompt_tokens = 0.25;
  double turns = 0.05;
  double code = 0.20;
  double math = 0.20;
  double keywords = 0.20;
  double max_tokens = 0.10;
  // Scales, in the unit of each count.
  double prompt_tokens_scale = 512;
  double turns_scale = 4;
  double code_scale = 4;
  double math_scale = 6;
  double keywords_scale = 2;
  double max_tokens_scale = 512;
};

// One row per term: its name (the key in the policy config's "weights" and
// "scales"), its weight and scale in ScoreWeights, and its count. Adding a
// term is one row here and two fields above.
struct ScoreTerm {
  const char* name;
  double ScoreWeights::*weight;
  double ScoreWeights::*scale;
  double (*count)(const RouteFeatures&);  // x_i; negative inputs count as 0
};
std::span<const ScoreTerm> score_terms();

// Throws folio::Error when a weight is negative or not finite, all weights
// are zero, or a scale is not a positive finite number.
void validate_weights(const ScoreWeights& w);

// `w` validated, with the weights divided by their sum (so they sum to 1).
ScoreWeights normalize_weights(ScoreWeights w);

// The score of `f`, in [0, 1]; throws as validate_weights does.
double route_score(const RouteFeatures& f, const ScoreWeights& w);

}  // namespace folio::route
