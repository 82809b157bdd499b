// sampling/draw.cpp: argmax and the categorical draw.
#include "sampling/draw.h"

#include <cmath>

#include "base/error.h"

namespace folio::sampling {

TokenId argmax(std::span<const float> logits) {
  FOLIO_CHECK(!logits.empty(), "argmax over an empty vocabulary");
  std::size_t best = 0;
  float best_v = logits[0];
  for (std::size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > best_v) {
      best_v = logits[i];
      best = i;
    }
  }
  return static_cast<TokenId>(best);
}

TokenId draw(const Candidates& c, Rng& rng, std::vector<float>& weights) {
  FOLIO_CHECK(!c.items.empty(), "draw from an empty candidate list");
  float m = -INFINITY;
  for (const Candidate& x : c.items) m = std::max(m, x.logit);
  if (!std::isfinite(m)) return c.items.front().id;  // everything masked: nothing to weigh
  weights.resize(c.items.size());
  double total = 0.0;
  for (std::size_t i = 0; i < c.items.size(); ++i) {
    weights[i] = std::exp(c.items[i].logit - m);
    total += static_cast<double>(weights[i]);
  }
  const double u = uniform01(rng) * total;
  double cum = 0.0;
  TokenId last_positive = c.items.front().id;
  for (std::size_t i = 0; i < c.items.size(); ++i) {
    if (weights[i] <= 0.0f) continue;
    cum += static_cast<double>(weights[i]);
    last_positive = c.items[i].id;
    if (u < cum) return c.items[i].id;
  }
  return last_positive;  // u landed in the rounding gap at the top end
}

}  // namespace folio::sampling
