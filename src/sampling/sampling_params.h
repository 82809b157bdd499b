// sampling/sampling_params.h: the per-request sampling parameters.
//
// Field names and meanings follow the OpenAI / vLLM request API so the server
// can map a request body onto this struct one field at a time. validate()
// rejects out-of-range values with a folio::Error naming the field, so bad
// user input is caught once, at the boundary, never inside the hot loop.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/token_id.h"

namespace folio::sampling {

struct SamplingParams {
  float temperature = 1.0f;                // 0 = greedy; otherwise logits are divided by it
  float top_p = 1.0f;                      // (0, 1]; 1 disables
  std::int32_t top_k = 0;                  // 0 or -1 disables (vLLM accepts both)
  float min_p = 0.0f;                      // [0, 1]; 0 disables
  float presence_penalty = 0.0f;           // [-2, 2]; OpenAI: logit -= presence * [count > 0]
  float frequency_penalty = 0.0f;          // [-2, 2]; OpenAI: logit -= frequency * count
  float repetition_penalty = 1.0f;         // > 0; HF: positive logit / p, negative logit * p
  std::map<TokenId, float> logit_bias;     // token id -> bias added to its logit, [-100, 100]
  std::optional<std::uint64_t> seed;       // same seed -> same tokens; none -> random
  std::optional<std::int32_t> max_tokens;  // none = until the context is full
  std::int32_t min_tokens = 0;             // EOS / stop tokens are masked until this many
  std::vector<std::string> stop;           // stop strings, matched on detokenized text
  std::vector<TokenId> stop_token_ids;
  bool ignore_eos = false;
  bool include_stop_str_in_output = false;
  std::optional<std::int32_t> logprobs;  // top-N alternatives to report, [0, 20]

  bool greedy() const { return temperature == 0.0f; }

  // Throws folio::Error naming the first out-of-range field. `vocab_size`
  // bounds token ids in logit_bias and stop_token_ids.
  void validate(std::int32_t vocab_size) const;
};

// Limits on request-controlled sizes, so one request cannot make the sampler
// allocate or loop without bound.
inline constexpr std::size_t kMaxStopStrings = 16;
inline constexpr std::size_t kMaxStopStringBytes = 1024;
inline constexpr std::size_t kMaxLogitBias = 4096;
inline constexpr std::int32_t kMaxLogprobs = 20;

}  // namespace folio::sampling
