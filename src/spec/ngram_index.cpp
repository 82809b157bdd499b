#include "spec/ngram_index.h"

#include <algorithm>

#include "base/error.h"

namespace folio::spec {

namespace {

// Hash of tokens[end - n, end), built right to left so one pass over
// n = 1 .. max_n yields every length.
inline std::uint64_t mix(std::uint64_t h, TokenId t) {
  h ^= static_cast<std::uint64_t>(static_cast<std::uint32_t>(t)) + 0x9e3779b97f4a7c15ull +
       (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

std::uint64_t hash_ngram(std::span<const TokenId> tokens, std::int32_t end, std::int32_t n) {
  std::uint64_t h = 0;
  for (std::int32_t i = 1; i <= n; ++i) h = mix(h, tokens[static_cast<std::size_t>(end - i)]);
  return h;
}

}  // namespace

NgramIndex::NgramIndex(std::int32_t min_n, std::int32_t max_n) : min_n_(min_n), max_n_(max_n) {
  FOLIO_CHECK(min_n >= 1 && min_n <= max_n, "n-gram lengths must satisfy 1 <= min <= max");
  by_n_.resize(static_cast<std::size_t>(max_n) - static_cast<std::size_t>(min_n) + 1);
}

void NgramIndex::extend(std::span<const TokenId> tokens) {
  const auto len = static_cast<std::int32_t>(tokens.size());
  FOLIO_CHECK(len >= fed_, "an n-gram index only grows");
  // Index the n-grams ending at fed_ .. len - 1; those ending at len wait
  // for the next token (they are the suffix we look up).
  for (std::int32_t end = std::max(fed_, 1); end < len; ++end) {
    std::uint64_t h = 0;
    for (std::int32_t n = 1; n <= std::min(max_n_, end); ++n) {
      h = mix(h, tokens[static_cast<std::size_t>(end - n)]);
      if (n >= min_n_) by_n_[static_cast<std::size_t>(n - min_n_)][h] = end;
    }
  }
  fed_ = len;
}

void NgramIndex::propose(std::span<const TokenId> tokens, std::int32_t k,
                         std::vector<TokenId>& out) const {
  const auto len = static_cast<std::int32_t>(tokens.size());
  FOLIO_CHECK(len == fed_, "propose() on tokens the index has not seen");
  if (k < 1) return;
  for (std::int32_t n = std::min(max_n_, len - 1); n >= min_n_; --n) {
    const auto& map = by_n_[static_cast<std::size_t>(n - min_n_)];
    auto it = map.find(hash_ngram(tokens, len, n));
    if (it == map.end()) continue;
    const std::int32_t end = it->second;
    if (!std::equal(tokens.begin() + (end - n), tokens.begin() + end, tokens.end() - n)) continue;
    const std::int32_t stop = std::min(end + k, len);
    out.insert(out.end(), tokens.begin() + end, tokens.begin() + stop);
    return;
  }
}

}  // namespace folio::spec
