// sampling/sampling_params.cpp: range checks for SamplingParams.
#include "sampling/sampling_params.h"

#include <cmath>
#include <string>

#include "base/error.h"

namespace folio::sampling {
namespace {

[[noreturn]] void bad(const std::string& field, const std::string& why) {
  throw Error("invalid sampling parameter " + field + ": " + why);
}

void check_finite(const char* field, float v) {
  if (!std::isfinite(v)) bad(field, "must be a finite number, got " + std::to_string(v));
}

void check_token(const char* field, TokenId id, std::int32_t vocab_size) {
  if (id < 0 || id >= vocab_size) {
    bad(field, "token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                   std::to_string(vocab_size) + ")");
  }
}

}  // namespace

void SamplingParams::validate(std::int32_t vocab_size) const {
  check_finite("temperature", temperature);
  if (temperature < 0.0f) bad("temperature", "must be >= 0, got " + std::to_string(temperature));
  check_finite("top_p", top_p);
  if (!(top_p > 0.0f && top_p <= 1.0f)) {
    bad("top_p", "must be in (0, 1], got " + std::to_string(top_p));
  }
  if (top_k < -1)
    bad("top_k", "must be -1 or 0 (disabled) or positive, got " + std::to_string(top_k));
  check_finite("min_p", min_p);
  if (min_p < 0.0f || min_p > 1.0f) bad("min_p", "must be in [0, 1], got " + std::to_string(min_p));
  check_finite("presence_penalty", presence_penalty);
  if (presence_penalty < -2.0f || presence_penalty > 2.0f) {
    bad("presence_penalty", "must be in [-2, 2], got " + std::to_string(presence_penalty));
  }
  check_finite("frequency_penalty", frequency_penalty);
  if (frequency_penalty < -2.0f || frequency_penalty > 2.0f) {
    bad("frequency_penalty", "must be in [-2, 2], got " + std::to_string(frequency_penalty));
  }
  check_finite("repetition_penalty", repetition_penalty);
  if (repetition_penalty <= 0.0f) {
    bad("repetition_penalty", "must be > 0, got " + std::to_string(repetition_penalty));
  }
  if (logit_bias.size() > kMaxLogitBias) {
    bad("logit_bias", "at most " + std::to_string(kMaxLogitBias) + " entries");
  }
  for (const auto& [id, bias] : logit_bias) {
    check_token("logit_bias", id, vocab_size);
    check_finite("logit_bias", bias);
    if (bias < -100.0f || bias > 100.0f) {
      bad("logit_bias", "bias for token " + std::to_string(id) + " must be in [-100, 100]");
    }
  }
  if (max_tokens && *max_tokens < 1) {
    bad("max_tokens", "must be >= 1, got " + std::to_string(*max_tokens));
  }
  if (min_tokens < 0) bad("min_tokens", "must be >= 0, got " + std::to_string(min_tokens));
  if (max_tokens && min_tokens > *max_tokens) {
    bad("min_tokens", "must be <= max_tokens (" + std::to_string(*max_tokens) + "), got " +
                          std::to_string(min_tokens));
  }
  if (stop.size() > kMaxStopStrings) {
    bad("stop", "at most " + std::to_string(kMaxStopStrings) + " stop strings");
  }
  for (const auto& s : stop) {
    if (s.empty()) bad("stop", "stop strings must not be empty");
    if (s.size() > kMaxStopStringBytes) {
      bad("stop", "a stop string is longer than " + std::to_string(kMaxStopStringBytes) + " bytes");
    }
  }
  if (stop_token_ids.size() > kMaxLogitBias) bad("stop_token_ids", "too many entries");
  for (TokenId id : stop_token_ids) check_token("stop_token_ids", id, vocab_size);
  if (logprobs && (*logprobs < 0 || *logprobs > kMaxLogprobs)) {
    bad("logprobs",
        "must be in [0, " + std::to_string(kMaxLogprobs) + "], got " + std::to_string(*logprobs));
  }
}

}  // namespace folio::sampling
