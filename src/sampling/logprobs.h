// sampling/logprobs.h: log-probabilities for the OpenAI `logprobs` field.
//
// Computed from the RAW model logits (log_softmax over the whole vocabulary),
// before bias, penalties, temperature or truncation: this matches vLLM's
// default (logprobs of the model's own distribution), and it means a token
// removed by top-k still has a finite logprob.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sampling/sampling_params.h"

namespace folio::sampling {

struct TokenLogprob {
  TokenId id;
  float logprob;
};

struct Logprobs {
  TokenLogprob chosen;
  std::vector<TokenLogprob> top;  // n_top best, by descending logprob (ties: lower id)
};

Logprobs compute_logprobs(std::span<const float> logits, TokenId chosen, std::int32_t n_top);

}  // namespace folio::sampling
