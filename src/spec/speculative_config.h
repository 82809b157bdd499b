// spec/speculative_config.h: --speculative-config, spelled as vLLM spells it.
//
//   --speculative-config '{"method": "ngram", "num_speculative_tokens": 4,
//                          "prompt_lookup_max": 4, "prompt_lookup_min": 2}'
//
// One JSON object. parse_speculative_config() names the key of any error
// (unknown key, wrong type, out of range) and fills vLLM's defaults: for
// "ngram", prompt_lookup_min and _max default to each other, or both to 5.
// Methods: "ngram" (prompt lookup, spec/ngram_proposer.h) and "layer_skip"
// (self-speculation: the target's first num_layers layers draft,
// spec/layer_skip_drafter.h; folio's own, not a vLLM method). Methods folio
// does not have ("draft_model", "eagle", ...) are refused, named.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace folio::spec {

enum class SpecMethod { kNone, kNgram, kLayerSkip };

// The default of max_batch_rows (measured on the 2-core AMD EPYC of
// docs/PERFORMANCE.md; set it per machine).
inline constexpr std::int32_t kDefaultMaxBatchRows = 32;

const char* spec_method_name(SpecMethod m);

struct SpeculativeConfig {
  SpecMethod method = SpecMethod::kNone;
  std::int32_t num_speculative_tokens = 0;  // K: draft tokens per request per step
  std::int32_t prompt_lookup_min = 0;       // ngram: shortest suffix matched
  std::int32_t prompt_lookup_max = 0;       // ngram: longest suffix matched
  // layer_skip: layers the draft runs; 0: the default for the model
  // (default_draft_layers), resolved when the engine starts. Which ones:
  // "first" (early exit: layers 0 .. num_layers - 1) or "ends" (the first
  // ceil(num_layers / 2) and the last floor(num_layers / 2), the middle
  // skipped).
  std::int32_t num_layers = 0;
  std::string layer_selection = "ends";
  // vLLM's disable_by_batch_size: no drafts while this many requests or
  // more are running (0: never off this way).
  std::int32_t disable_by_batch_size = 0;
  // folio's load rule (draft_tokens_per_request below): K shrinks as the
  // batch grows so that running x (1 + K) rows stay within this many per
  // step, past which a verifying step costs more than the drafts win
  // (measured, docs/PERFORMANCE.md). 0: no cap.
  std::int32_t max_batch_rows = kDefaultMaxBatchRows;

  bool enabled() const { return method != SpecMethod::kNone; }
  // The proposer runs a model over the KV cache, which must hold slots for
  // its K draft positions beyond the verified tokens (lookahead).
  bool drafts_with_model() const { return method == SpecMethod::kLayerSkip; }
  // "ngram k=4 lookup=[2,4]" (start-up line, folio info); "off" when disabled.
  std::string describe() const;
};

// Largest num_speculative_tokens accepted (each is a logit row per request).
inline constexpr std::int32_t kMaxSpeculativeTokens = 16;
// Longest n-gram prompt lookup matches.
inline constexpr std::int32_t kMaxPromptLookup = 64;

// layer_skip's default num_layers for a model of n_layer layers (measured,
// docs/PERFORMANCE.md).
std::int32_t default_draft_layers(std::int32_t n_layer);

// The layer indices a layer_skip draft runs in a model of n_layer layers.
// Throws folio::Error when num_layers is outside [1, n_layer].
std::vector<std::size_t> draft_layer_list(const SpeculativeConfig& c, std::int32_t n_layer);

// Draft tokens each request may get this step when `num_running` requests
// run: 0 when off, when disable_by_batch_size is reached, or when even one
// draft per request would pass max_batch_rows; else
// min(K, max_batch_rows / num_running - 1).
std::int32_t draft_tokens_per_request(const SpeculativeConfig& c, std::int32_t num_running);

// Throws folio::Error ("--speculative-config: ...") for bad JSON, an unknown
// key, a wrong type or an out-of-range value. An empty string is "off".
SpeculativeConfig parse_speculative_config(const std::string& json);

}  // namespace folio::spec
