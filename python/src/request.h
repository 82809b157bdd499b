// python/src/request.h: one request of the Python API and what it returns.
//
// The Python layer (python/folio/) turns vLLM-shaped arguments into a
// Request; the engines (offline_engine.h, async_engine.h) turn the engine's
// protocol (engine/protocol.h) back into Completions through the same
// OutputProcessor `folio serve` and `folio generate` use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/token_id.h"
#include "engine/output_processor.h"
#include "sampling/sampling_params.h"

namespace folio::python {

struct Request {
  std::vector<TokenId> prompt;
  sampling::SamplingParams params;
  std::int32_t n = 1;
  bool skip_special_tokens = true;
  std::int32_t priority = 0;
  // Structured output (vLLM's guided decoding): "" none, "json" (a JSON
  // Schema in constraint_text), "json_object", "regex", "choice"
  // (constraint_choices) or "grammar" (GBNF).
  std::string constraint_kind;
  std::string constraint_text;
  std::vector<std::string> constraint_choices;
};

// One alternative of a token's logprobs: the token, its logprob, its text.
struct TokenLogprob {
  TokenId id = 0;
  float logprob = 0;
  std::string text;
};

// One sample of a request (vLLM's CompletionOutput).
struct Completion {
  std::int32_t index = 0;
  std::string text;
  std::vector<TokenId> token_ids;
  std::string finish_reason;  // "" while running; "stop", "length", "abort", "error"
  std::string stop_reason;    // the stop string that ended it, if one did
  // Per generated token when logprobs were asked for: the chosen token
  // first, then the top alternatives by descending logprob.
  std::vector<std::vector<TokenLogprob>> logprobs;
  double cumulative_logprob = 0;
};

// A request's outputs so far (all of them once finished).
struct Result {
  std::vector<Completion> outputs;
  std::int32_t num_prompt_tokens = 0;
  std::int32_t num_cached_tokens = 0;
  bool finished = false;
  std::string error;  // the engine step failed, or a token could not be rendered
};

// An empty result of `n` samples, indexed 0..n-1.
Result make_result(std::int32_t n);

// Appends one text delta of sample d.index to `r` (its logprobs are there
// only when the request asked for them).
void append(Result& r, const engine::TextDelta& d);

// Applies the engine's items to `r` through `out`; returns the indexes of
// samples whose stop string matched (the caller tells the engine).
std::vector<std::int32_t> apply(Result& r, engine::OutputProcessor& out,
                                const std::vector<engine::RequestOutput>& items);

}  // namespace folio::python
