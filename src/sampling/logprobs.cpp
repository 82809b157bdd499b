// sampling/logprobs.cpp: log_softmax of one token plus the top-N, in two passes.
#include "sampling/logprobs.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace folio::sampling {

Logprobs compute_logprobs(std::span<const float> logits, TokenId chosen, std::int32_t n_top) {
  FOLIO_CHECK(chosen >= 0 && static_cast<std::size_t>(chosen) < logits.size(), "chosen id");
  float m = -INFINITY;
  for (float v : logits) m = std::max(m, v);
  double sum = 0.0;
  for (float v : logits) sum += static_cast<double>(std::exp(v - m));  // float exp, double sum
  const double log_z = static_cast<double>(m) + std::log(sum);
  auto lp = [&](std::size_t i) { return static_cast<float>(logits[i] - log_z); };

  Logprobs out{{chosen, lp(static_cast<std::size_t>(chosen))}, {}};
  const std::size_t n =
      std::min<std::size_t>(static_cast<std::size_t>(std::max(n_top, 0)), logits.size());
  if (n == 0) return out;
  // Small sorted buffer (n <= 20): insertion beats a heap and keeps ties by id.
  std::vector<std::size_t> best;
  best.reserve(n + 1);
  for (std::size_t i = 0; i < logits.size(); ++i) {
    if (best.size() == n && !(logits[i] > logits[best.back()])) continue;
    auto pos = std::find_if(best.begin(), best.end(),
                            [&](std::size_t j) { return logits[i] > logits[j]; });
    best.insert(pos, i);
    if (best.size() > n) best.pop_back();
  }
  for (std::size_t i : best) out.top.push_back({static_cast<TokenId>(i), lp(i)});
  return out;
}

}  // namespace folio::sampling
