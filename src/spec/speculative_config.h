// spec/speculative_config.h: --speculative-config, spelled as vLLM spells it.
//
//   --speculative-config '{"method": "ngram", "num_speculative_tokens": 4,
//                          "prompt_lookup_max": 4, "prompt_lookup_min": 2}'
//
// One JSON object. parse_speculative_config() names the key of any error
// (unknown key, wrong type, out of range) and fills vLLM's defaults: for
// "ngram", prompt_lookup_min and _max default to each other, or both to 5.
// Methods: "ngram" (prompt lookup, spec/ngram_proposer.h); "draft_model" and
// "layer_skip" are refused until they are built (named in the message).
#pragma once

#include <cstdint>
#include <string>

namespace folio::spec {

enum class SpecMethod { kNone, kNgram };

// The default of max_batch_rows (measured on the 2-core AMD EPYC of
// docs/PERFORMANCE.md; set it per machine).
inline constexpr std::int32_t kDefaultMaxBatchRows = 32;

const char* spec_method_name(SpecMethod m);

struct SpeculativeConfig {
  SpecMethod method = SpecMethod::kNone;
  std::int32_t num_speculative_tokens = 0;  // K: draft tokens per request per step
  std::int32_t prompt_lookup_min = 0;       // ngram: shortest suffix matched
  std::int32_t prompt_lookup_max = 0;       // ngram: longest suffix matched
  // vLLM's disable_by_batch_size: no drafts while this many requests or
  // more are running (0: never off this way).
  std::int32_t disable_by_batch_size = 0;
  // folio's load rule (draft_tokens_per_request below): K shrinks as the
  // batch grows so that running x (1 + K) rows stay within this many per
  // step, past which a verifying step costs more than the drafts win
  // (measured, docs/PERFORMANCE.md). 0: no cap.
  std::int32_t max_batch_rows = kDefaultMaxBatchRows;

  bool enabled() const { return method != SpecMethod::kNone; }
  // "ngram k=4 lookup=[2,4]" (start-up line, folio info); "off" when disabled.
  std::string describe() const;
};

// Largest num_speculative_tokens accepted (each is a logit row per request).
inline constexpr std::int32_t kMaxSpeculativeTokens = 16;
// Longest n-gram prompt lookup matches.
inline constexpr std::int32_t kMaxPromptLookup = 64;

// Draft tokens each request may get this step when `num_running` requests
// run: 0 when off, when disable_by_batch_size is reached, or when even one
// draft per request would pass max_batch_rows; else
// min(K, max_batch_rows / num_running - 1).
std::int32_t draft_tokens_per_request(const SpeculativeConfig& c, std::int32_t num_running);

// Throws folio::Error ("--speculative-config: ...") for bad JSON, an unknown
// key, a wrong type or an out-of-range value. An empty string is "off".
SpeculativeConfig parse_speculative_config(const std::string& json);

}  // namespace folio::spec
