// sampling/penalties.h: steps that edit a few logits in place, by token id.
//
// Each takes the dense logits of one sequence (index = token id) and touches
// only the tokens it names, so their cost does not depend on vocabulary size.
#pragma once

#include <map>
#include <span>

#include "sampling/sampling_params.h"
#include "sampling/token_history.h"

namespace folio::sampling {

// logit[id] += bias for every entry (OpenAI logit_bias).
void apply_logit_bias(std::span<float> logits, const std::map<TokenId, float>& bias);

// HF / llama.cpp / vLLM repetition penalty over every distinct token seen in
// the prompt or the output: a positive logit is divided by `penalty`, a
// negative one multiplied, so penalty > 1 always makes the token less likely.
void apply_repetition_penalty(std::span<float> logits, const TokenHistory& history, float penalty);

// OpenAI presence / frequency penalties over generated tokens:
// logit[id] -= presence * [count > 0] + frequency * count.
void apply_presence_frequency(std::span<float> logits, const TokenHistory& history, float presence,
                              float frequency);

// logit[id] = -inf for each id (min_tokens hides EOS and stop tokens).
void mask_tokens(std::span<float> logits, std::span<const TokenId> ids);

}  // namespace folio::sampling
