// sampling/penalties.cpp: logit bias, repetition / presence / frequency penalties.
#include "sampling/penalties.h"

#include <limits>

#include "base/error.h"

namespace folio::sampling {
namespace {

// Ids come from validated params or from the model's own output; a bad one is a bug.
float& at(std::span<float> logits, TokenId id) {
  FOLIO_CHECK(id >= 0 && static_cast<std::size_t>(id) < logits.size(), "token id out of range");
  return logits[static_cast<std::size_t>(id)];
}

void penalize(float& logit, float penalty) {
  logit = logit > 0.0f ? logit / penalty : logit * penalty;
}

}  // namespace

void apply_logit_bias(std::span<float> logits, const std::map<TokenId, float>& bias) {
  for (const auto& [id, b] : bias) at(logits, id) += b;
}

void apply_repetition_penalty(std::span<float> logits, const TokenHistory& history, float penalty) {
  if (penalty == 1.0f) return;
  // Each distinct token is penalized once, whether seen in prompt, output or both.
  for (TokenId id : history.prompt_tokens()) penalize(at(logits, id), penalty);
  for (const auto& [id, count] : history.generated_counts()) {
    if (!history.prompt_tokens().contains(id)) penalize(at(logits, id), penalty);
  }
}

void apply_presence_frequency(std::span<float> logits, const TokenHistory& history, float presence,
                              float frequency) {
  if (presence == 0.0f && frequency == 0.0f) return;
  for (const auto& [id, count] : history.generated_counts()) {
    if (count > 0) at(logits, id) -= presence + frequency * static_cast<float>(count);
  }
}

void mask_tokens(std::span<float> logits, std::span<const TokenId> ids) {
  for (TokenId id : ids) at(logits, id) = -std::numeric_limits<float>::infinity();
}

}  // namespace folio::sampling
