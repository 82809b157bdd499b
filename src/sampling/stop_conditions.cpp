// sampling/stop_conditions.cpp: EOS, stop tokens, max_tokens.
#include "sampling/stop_conditions.h"

#include <algorithm>

namespace folio::sampling {

const char* finish_reason(StopReason r) {
  switch (r) {
    case StopReason::kNone: return "";
    case StopReason::kMaxTokens: return "length";
    case StopReason::kEos:
    case StopReason::kStopToken:
    case StopReason::kStopString: return "stop";
  }
  return "";
}

StopReason check_token_stop(const SamplingParams& p, std::span<const TokenId> eos_ids,
                            TokenId token, std::int32_t num_generated) {
  if (num_generated < p.min_tokens) return StopReason::kNone;
  if (!p.ignore_eos && std::find(eos_ids.begin(), eos_ids.end(), token) != eos_ids.end()) {
    return StopReason::kEos;
  }
  if (std::find(p.stop_token_ids.begin(), p.stop_token_ids.end(), token) !=
      p.stop_token_ids.end()) {
    return StopReason::kStopToken;
  }
  if (p.max_tokens && num_generated >= *p.max_tokens) return StopReason::kMaxTokens;
  return StopReason::kNone;
}

}  // namespace folio::sampling
