// sampling/stop_conditions.h: token-level reasons to end a sample.
//
// Checked after each accepted token, in vLLM's order: nothing stops a
// sample before min_tokens; then EOS (unless ignore_eos) and stop_token_ids
// (FinishReason::kStop: the token is counted but not rendered), and finally
// max_tokens (kLength). Stop *strings* live in stop_matcher.h because they
// are matched on detokenized text, by the output processor.
#pragma once

#include <cstdint>
#include <span>

#include "base/finish_reason.h"
#include "sampling/sampling_params.h"

namespace folio::sampling {

// `num_generated` counts output tokens including `token`. Returns kNone,
// kStop or kLength.
FinishReason check_token_stop(const SamplingParams& params, std::span<const TokenId> eos_ids,
                              TokenId token, std::int32_t num_generated);

}  // namespace folio::sampling
