// sampling/token_history.h: what a request has seen, as the penalties need it.
//
// The repetition penalty (HF / llama.cpp / vLLM) looks at prompt and
// generated tokens; presence and frequency penalties (OpenAI) look at
// generated tokens only, with their counts. Counts are kept incrementally so
// each step costs O(distinct tokens), not O(sequence length).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "sampling/sampling_params.h"

namespace folio::sampling {

class TokenHistory {
 public:
  TokenHistory() = default;
  explicit TokenHistory(std::span<const TokenId> prompt) : prompt_(prompt.begin(), prompt.end()) {}

  void add_generated(TokenId id) {
    ++generated_[id];
    ++num_generated_;
  }

  const std::unordered_set<TokenId>& prompt_tokens() const { return prompt_; }
  const std::unordered_map<TokenId, std::int32_t>& generated_counts() const { return generated_; }
  std::int32_t num_generated() const { return num_generated_; }

 private:
  std::unordered_set<TokenId> prompt_;
  std::unordered_map<TokenId, std::int32_t> generated_;
  std::int32_t num_generated_ = 0;
};

}  // namespace folio::sampling
