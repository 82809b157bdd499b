// sampling/draw.h: the final choice of a token, greedy or random.
//
// Randomness is a per-request std::mt19937_64; the uniform variate is built
// from its bits by hand (not std::uniform_real_distribution, whose algorithm
// differs between standard libraries) so a seed gives the same tokens
// everywhere.
#pragma once

#include <random>
#include <span>
#include <vector>

#include "sampling/candidates.h"

namespace folio::sampling {

using Rng = std::mt19937_64;

// Uniform double in [0, 1) from the top 53 bits of one draw.
inline double uniform01(Rng& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

// Index of the largest logit (lowest id on ties): one pass, no allocation.
TokenId argmax(std::span<const float> logits);

// Draws one candidate with probability softmax(logit) over the list.
// `weights` is scratch space reused across calls (one exp per candidate).
TokenId draw(const Candidates& c, Rng& rng, std::vector<float>& weights);

}  // namespace folio::sampling
