#include "spec/rejection.h"

#include <cmath>

#include "base/error.h"

namespace folio::spec {

namespace {

// weights[i] = exp(logit_i - max); returns their sum (0 when all are -inf).
double softmax_weights(const sampling::Candidates& p, std::vector<double>& w) {
  FOLIO_CHECK(!p.items.empty(), "verification against an empty distribution");
  float m = -INFINITY;
  for (const sampling::Candidate& c : p.items) m = std::max(m, c.logit);
  w.resize(p.items.size());
  if (!std::isfinite(m)) {  // everything masked: the draw takes the first (draw.cpp)
    for (double& x : w) x = 0;
    w[0] = 1;
    return 1;
  }
  double total = 0;
  for (std::size_t i = 0; i < p.items.size(); ++i) {
    w[i] = std::exp(static_cast<double>(p.items[i].logit) - static_cast<double>(m));
    total += w[i];
  }
  return total;
}

// Draws index i with probability w[i] / total.
TokenId draw_weighted(const sampling::Candidates& p, const std::vector<double>& w, double total,
                      sampling::Rng& rng) {
  const double u = sampling::uniform01(rng) * total;
  double cum = 0;
  TokenId last = p.items.front().id;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i] <= 0) continue;
    cum += w[i];
    last = p.items[i].id;
    if (u < cum) return p.items[i].id;
  }
  return last;  // u in the rounding gap at the top
}

}  // namespace

double probability(const sampling::Candidates& p, TokenId id, std::vector<double>& weights) {
  const double total = softmax_weights(p, weights);
  for (std::size_t i = 0; i < p.items.size(); ++i)
    if (p.items[i].id == id) return weights[i] / total;
  return 0;
}

Verdict verify_one_hot(const sampling::Candidates& p, TokenId draft, sampling::Rng& rng,
                       std::vector<double>& weights) {
  const double total = softmax_weights(p, weights);
  std::size_t at = p.items.size();
  for (std::size_t i = 0; i < p.items.size(); ++i) {
    if (p.items[i].id == draft) {
      at = i;
      break;
    }
  }
  const double pd = at < p.items.size() ? weights[at] / total : 0.0;
  if (pd >= 1.0) return {draft, true};
  if (pd > 0.0 && sampling::uniform01(rng) < pd) return {draft, true};
  // Rejected: the residual max(0, p - onehot(d)) is p without d.
  if (p.items.size() == 1) return {p.items.front().id, false};  // greedy: no draw
  double rest = total;
  if (at < weights.size()) {
    rest -= weights[at];
    weights[at] = 0;
  }
  if (!(rest > 0)) return {draft, true};  // p(d) is 1 up to rounding
  return {draw_weighted(p, weights, rest, rng), false};
}

}  // namespace folio::spec
