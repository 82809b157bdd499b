// spec/ngram_index.h: prompt lookup over one sequence, updated incrementally.
//
// For every n in [min_n, max_n] a hash map holds, per n-gram, where its most
// recent occurrence ends. extend() indexes only the tokens added since the
// last call (max_n - min_n + 1 insertions per token), so a step costs the
// same on a 100-token and a 100k-token context: no rescans.
//
// propose(tokens, k): for n = max_n down to min_n, look up the last n
// tokens; at the first n with an earlier occurrence (tokens compared, so a
// hash collision never proposes), return the up to k tokens that followed
// it. The current suffix itself is never a match: the n-grams ending at the
// last position are indexed only once a token follows them.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/token_id.h"

namespace folio::spec {

class NgramIndex {
 public:
  // 1 <= min_n <= max_n.
  NgramIndex(std::int32_t min_n, std::int32_t max_n);

  // `tokens` must start with everything passed before (it only grows).
  void extend(std::span<const TokenId> tokens);
  // Appends up to k tokens to `out`. Call extend(tokens) first.
  void propose(std::span<const TokenId> tokens, std::int32_t k, std::vector<TokenId>& out) const;

  std::int32_t num_indexed() const { return fed_; }

 private:
  std::int32_t min_n_, max_n_;
  // by_n_[n - min_n]: n-gram hash -> end (exclusive) of its latest occurrence
  std::vector<std::unordered_map<std::uint64_t, std::int32_t>> by_n_;
  std::int32_t fed_ = 0;  // tokens seen; n-grams ending before fed_ are indexed
};

}  // namespace folio::spec
