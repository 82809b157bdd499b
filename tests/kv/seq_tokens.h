// tests/kv/seq_tokens.h: n consecutive token ids from `first`, the prompts
// the KV bookkeeping tests cache and look up.
#pragma once

#include <cstddef>
#include <numeric>
#include <vector>

#include "base/token_id.h"

namespace folio::kv {

inline std::vector<TokenId> seq_tokens(TokenId first, int n) {
  std::vector<TokenId> t(static_cast<std::size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

}  // namespace folio::kv
