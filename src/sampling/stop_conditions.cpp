// sampling/stop_conditions.cpp: EOS, stop tokens, max_tokens.
#include "sampling/stop_conditions.h"

#include <algorithm>

namespace folio::sampling {

FinishReason check_token_stop(const SamplingParams& p, std::span<const TokenId> eos_ids,
                              TokenId token, std::int32_t num_generated) {
  if (num_generated < p.min_tokens) return FinishReason::kNone;
  const bool eos =
      !p.ignore_eos && std::find(eos_ids.begin(), eos_ids.end(), token) != eos_ids.end();
  const bool stop_token =
      std::find(p.stop_token_ids.begin(), p.stop_token_ids.end(), token) != p.stop_token_ids.end();
  if (eos || stop_token) return FinishReason::kStop;
  if (p.max_tokens && num_generated >= *p.max_tokens) return FinishReason::kLength;
  return FinishReason::kNone;
}

}  // namespace folio::sampling
