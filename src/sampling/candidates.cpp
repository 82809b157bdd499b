// sampling/candidates.cpp: filling the candidate list from dense logits.
#include "sampling/candidates.h"

#include <algorithm>
#include <cmath>

namespace folio::sampling {

void Candidates::assign(std::span<const float> logits) {
  items.clear();
  items.reserve(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i) {
    items.push_back(Candidate{static_cast<TokenId>(i), logits[i]});
  }
  sorted = false;
}

void Candidates::assign_finite(std::span<const float> logits) {
  items.clear();
  for (std::size_t i = 0; i < logits.size(); ++i) {
    if (std::isfinite(logits[i])) items.push_back(Candidate{static_cast<TokenId>(i), logits[i]});
  }
  sorted = false;
}

void Candidates::assign_top_k(std::span<const float> logits, std::size_t k) {
  items.clear();
  items.reserve(k);
  for (std::size_t i = 0; i < k; ++i)
    items.push_back(Candidate{static_cast<TokenId>(i), logits[i]});
  // With `higher` as the order, the heap's front is the worst kept candidate.
  std::make_heap(items.begin(), items.end(), higher);
  for (std::size_t i = k; i < logits.size(); ++i) {
    const Candidate c{static_cast<TokenId>(i), logits[i]};
    if (!higher(c, items.front())) continue;
    std::pop_heap(items.begin(), items.end(), higher);
    items.back() = c;
    std::push_heap(items.begin(), items.end(), higher);
  }
  std::sort(items.begin(), items.end(), higher);
  sorted = true;
}

}  // namespace folio::sampling
