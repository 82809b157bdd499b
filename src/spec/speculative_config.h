// spec/speculative_config.h: --speculative-config, spelled as vLLM spells it.
//
//   --speculative-config '{"method": "ngram", "num_speculative_tokens": 4,
//                          "prompt_lookup_max": 4, "prompt_lookup_min": 2}'
//
// One JSON object. parse_speculative_config() names the key of any error
// (unknown key, wrong type, out of range) and fills vLLM's defaults: for
// "ngram", prompt_lookup_min and _max default to each other, or both to 5.
// Methods: "ngram" (prompt lookup, spec/ngram_proposer.h), "draft_model" (a
// second, smaller GGUF with the target's vocabulary, "model": PATH, run by
// spec/model_drafter.h over its own K/V in the target's blocks) and
// "layer_skip" (self-speculation: the target's first num_layers layers
// draft, spec/model_drafter.h; folio's own, not a vLLM method). Methods
// folio does not have ("eagle", "medusa", ...) are refused, named.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/row_cost.h"

namespace folio::spec {

enum class SpecMethod { kNone, kNgram, kDraftModel, kLayerSkip };

// The default of max_batch_rows (measured on the 2-core AMD EPYC of
// docs/PERFORMANCE.md; set it per machine).
inline constexpr std::int32_t kDefaultMaxBatchRows = 8;
// The default of draft_p_min (measured with layer_skip and draft_model,
// docs/PERFORMANCE.md).
inline constexpr float kDefaultDraftPMin = 0.5f;

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
  // draft_model: the draft GGUF's path (vLLM's "model").
  std::string draft_model;
  // layer_skip and draft_model: a draft whose own top probability is below
  // this ends the run (llama.cpp's --draft-p-min); 0: never.
  float draft_p_min = kDefaultDraftPMin;
  // layer_skip and draft_model: what one draft token costs, as a fraction
  // of a single-stream target step (the adaptive rule charges it, see
  // adaptive_draft_length). < 0: resolved when the engine starts, as the
  // drafter's weight bytes per token over the target's (decode streams
  // every weight once), then measured while it runs (spec/draft_cost.h);
  // draft_cost_pinned (the "draft_cost" key): this value throughout.
  // ngram drafts cost nothing: 0.
  float draft_cost = -1;
  bool draft_cost_pinned = false;
  // vLLM's disable_by_batch_size: no drafts while this many requests or
  // more are running (0: never off this way).
  std::int32_t disable_by_batch_size = 0;
  // folio's load rule (draft_tokens_per_request below): K shrinks as the
  // batch grows so that running x (1 + K) rows stay within this many per
  // step, past which a verifying step costs more than the drafts win
  // (measured, docs/PERFORMANCE.md). 0: no cap.
  std::int32_t max_batch_rows = kDefaultMaxBatchRows;
  // folio's per-request rule (adaptive_draft_length below): each request
  // drafts only as many tokens as its own acceptance record makes worth a
  // verification row. false: always K (within the load rule).
  bool adaptive = true;
  // What one verification row costs, as a fraction of a single-stream
  // target step (the adaptive rule charges it). < 0: measured while the
  // engine runs (spec/row_cost.h), kDefaultRowCost until then.
  float row_cost = -1;

  bool enabled() const { return method != SpecMethod::kNone; }
  // The proposer runs a model over the KV cache, which must hold slots for
  // its K draft positions beyond the verified tokens (lookahead).
  bool drafts_with_model() const {
    return method == SpecMethod::kLayerSkip || method == SpecMethod::kDraftModel;
  }
  // "ngram k=4 lookup=[2,4]" (start-up line, folio info); "off" when disabled.
  std::string describe() const;
};

// Largest num_speculative_tokens accepted (each is a logit row per request).
inline constexpr std::int32_t kMaxSpeculativeTokens = 16;
static_assert(RowCostEstimate::kMaxRows == kMaxSpeculativeTokens + 1);
// Longest n-gram prompt lookup matches.
inline constexpr std::int32_t kMaxPromptLookup = 64;

// layer_skip's default num_layers for a model of n_layer layers: 4/5 of them (measured,
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

// What the adaptive rule charges for a draft token, in units of a
// single-stream target step: the verification row it adds (`row`: measured,
// RowCostEstimate) and making it (`draft`: 0 for ngram, about the drafter's
// share of the target's weight bytes for a model drafter).
struct DraftCosts {
  double row = kDefaultRowCost;
  double draft = 0;
};

// Per-request adaptive draft length. `acceptance` is the request's running
// estimate of the chance that a draft token is accepted (AcceptanceEstimate);
// the j-th draft of a round is verified only when all before it were
// accepted, so it yields acceptance^j tokens, and it costs costs.row +
// costs.draft. It is worth it while acceptance^j >= costs.row + costs.draft.
// Returns the largest such j <= k (0: draft nothing this step).
std::int32_t adaptive_draft_length(double acceptance, std::int32_t k, DraftCosts costs = {});

// Whether a round of j drafts pays for itself when each draft costs
// costs.row + costs.draft and `spare` more draft forwards (one whose token
// draft_p_min dropped) cost costs.draft each: it yields acceptance +
// acceptance^2 + ... + acceptance^j tokens beyond the step's own. A drafter
// that agrees with the target almost always but costs about a step per
// token (the same network at another quantization) does not pay: plain
// decoding is faster, and the rule says so.
bool round_pays(double acceptance, std::int32_t j, DraftCosts costs, double spare);

// Whether a model drafter's probe after `idle` steps without drafts could
// pay: a round of k drafts, all accepted, yields more than their cost, the
// `spare` forwards and the catch-up of the idle tokens' K/V (one forward of
// `idle` rows: 1 + (idle - 1) x costs.row draft forwards). Free drafts
// (costs.draft 0) always may.
bool probe_pays(std::int32_t k, DraftCosts costs, double spare, std::int32_t idle);

// Whether a draft model that lacks the K/V of a sequence's last `lag`
// positions should catch up on them to draft `j` tokens a round for the
// rest of it: the catch-up is a forward of `lag` rows (1 + (lag - 1) x
// costs.row draft forwards at costs.draft each) that all `running`
// sequences wait for; drafting as now saves 1 - (1 + cost) / (1 + gain) of
// a step per output (round_pays' terms), over at most `remaining` outputs.
// Right after a prompt the rest of the output is ahead and this pays; a
// request that ran undrafted in a full batch for most of its output, the
// batch now small enough to draft, usually does not (its catch-up is its
// whole context and stalls the batch).
bool catch_up_pays(double acceptance, std::int32_t j, DraftCosts costs, double spare,
                   std::int32_t lag, std::int32_t remaining, std::int32_t running);

// Running estimate of a request's per-token acceptance: accepted / judged
// tokens, both sums decaying by (1 - kWeight) a verification round, where a
// round with k drafts and a accepted judged a + 1 tokens (a < k) or k
// (a == k). Counting tokens, not rounds, makes it the chance a draft token
// is accepted: one first-token miss after rounds of four accepted weighs
// one token against their sixteen, where an average of rounds' ratios
// would fall by kWeight at once (for a cheap model drafter on the Xeon of
// docs/PERFORMANCE.md, below its cost: requests stopped drafting for good).
// Starts optimistic (kPriorTokens accepted of as many judged) so every
// request gets a first try, and with one spare forward a round (a
// drafter's cost is charged in full until measured: a drafter that would
// not pay even then is never tried, because trying a model drafter first
// catches its K/V up on the whole context). A request whose estimate fell
// to zero drafts still gets a probe every kProbeEvery steps (one token for
// ngram), so it can recover when its output starts to repeat or the drafter
// to agree.
// A model drafter's probe first catches its K/V up on the kProbeEvery
// tokens since its last draft (a forward of that many rows), so it probes
// only where a round of k drafts all accepted would pay for that too
// (probe_pays), and with that round of k (one token tells little for the
// catch-up's price): a drafter that costs about a step per token never
// probes.
struct AcceptanceEstimate {
  static constexpr double kWeight = 0.3;
  static constexpr double kPriorTokens = 3;
  static constexpr std::int32_t kProbeEvery = 16;
  double accepted = kPriorTokens;  // decaying sums of draft tokens
  double judged = kPriorTokens;
  double value() const { return accepted / judged; }
  double spare = 1.0;  // the same average of draft forwards beyond the drafts a round got
  std::int32_t idle_steps = 0;

  void observe(std::int32_t drafts, std::int32_t num_accepted);
  // A proposal took `forwards` model forwards for `drafts` tokens.
  void observe_forwards(std::int32_t forwards, std::int32_t drafts);
  // Drafts to ask for this step, at most k (adaptive_draft_length, then
  // round_pays).
  std::int32_t draft_length(std::int32_t k, DraftCosts costs = {});
};

// Throws folio::Error ("--speculative-config: ...") for bad JSON, an unknown
// key, a wrong type or an out-of-range value. An empty string is "off".
SpeculativeConfig parse_speculative_config(const std::string& json);

}  // namespace folio::spec
