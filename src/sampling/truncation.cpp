// sampling/truncation.cpp: temperature, top-k, top-p, min-p.
#include "sampling/truncation.h"

#include <algorithm>
#include <cmath>

namespace folio::sampling {
namespace {

float max_logit(const Candidates& c) {
  if (c.sorted) return c.items.front().logit;
  float m = -INFINITY;
  for (const Candidate& x : c.items) m = std::max(m, x.logit);
  return m;
}

// First prefix length tried by top-p; grown 8x per round. Real distributions
// put mass p into a few hundred tokens, so one round is the common case.
constexpr std::size_t kTopPFirstPrefix = 256;

}  // namespace

void apply_temperature(Candidates& c, float temperature) {
  if (temperature == 1.0f) return;
  const float inv = 1.0f / temperature;
  for (Candidate& x : c.items) x.logit *= inv;
}

void apply_top_k(Candidates& c, std::int32_t k) {
  if (k <= 0 || static_cast<std::size_t>(k) >= c.items.size()) return;
  auto kth = c.items.begin() + k;
  if (!c.sorted) {
    std::nth_element(c.items.begin(), kth, c.items.end(), higher);
    std::sort(c.items.begin(), kth, higher);
  }
  c.items.erase(kth, c.items.end());
  c.sorted = true;
}

void apply_top_p(Candidates& c, float p) {
  if (p >= 1.0f || c.items.size() <= 1) return;
  const float m = max_logit(c);
  // Float exp (vectorizable, ~4x cheaper than double) with double sums: the
  // mass is exact to ~1e-7 relative, far below any meaningful top_p step.
  double total = 0.0;
  for (const Candidate& x : c.items) total += static_cast<double>(std::exp(x.logit - m));
  const double target = static_cast<double>(p) * total;

  const std::size_t n = c.items.size();
  std::size_t done = 0;  // items[0, done) are sorted and summed into `cum`
  double cum = 0.0;
  std::size_t prefix = c.sorted ? n : std::min(n, kTopPFirstPrefix);
  for (;;) {
    if (!c.sorted) {
      // Select the next best (prefix - done) items from the unsorted rest in
      // O(n), then sort only them; the summed prefix stays in place.
      const auto b = c.items.begin() + static_cast<std::ptrdiff_t>(done);
      const auto e = c.items.begin() + static_cast<std::ptrdiff_t>(prefix);
      if (e != c.items.end()) std::nth_element(b, e, c.items.end(), higher);
      std::sort(b, e, higher);
    }
    for (; done < prefix; ++done) {
      cum += static_cast<double>(std::exp(c.items[done].logit - m));
      if (cum >= target) {
        c.items.resize(done + 1);
        c.sorted = true;
        return;
      }
    }
    if (prefix == n) break;  // rounding left the sum just short of target: keep all
    prefix = std::min(n, prefix * 8);
  }
  c.sorted = true;
}

void apply_min_p(Candidates& c, float min_p) {
  if (min_p <= 0.0f || c.items.empty()) return;
  const float m = max_logit(c);
  // Ratio test p_i / p_max = exp(l_i - l_max) >= min_p, done in logit space
  // (no exp per token). Independent of normalization, and the top token
  // always passes, so the list never empties.
  const float threshold = m + std::log(min_p);
  std::erase_if(c.items, [&](const Candidate& x) { return x.logit < threshold; });
}

}  // namespace folio::sampling
