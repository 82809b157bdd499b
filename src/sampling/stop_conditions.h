// sampling/stop_conditions.h: token-level reasons to end a sequence.
//
// Checked after each accepted token, in vLLM's order: nothing stops a
// sequence before min_tokens; then EOS (unless ignore_eos), stop_token_ids,
// and finally max_tokens. Stop *strings* live in stop_matcher.h because they
// are matched on detokenized text.
#pragma once

#include <cstdint>
#include <span>

#include "sampling/sampling_params.h"

namespace folio::sampling {

enum class StopReason { kNone, kEos, kStopToken, kMaxTokens, kStopString };

// OpenAI finish_reason for a reason: "stop", "length" or "" (not finished).
const char* finish_reason(StopReason r);

// `num_generated` counts output tokens including `token`.
StopReason check_token_stop(const SamplingParams& params, std::span<const TokenId> eos_ids,
                            TokenId token, std::int32_t num_generated);

}  // namespace folio::sampling
