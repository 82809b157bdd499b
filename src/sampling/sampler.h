// sampling/sampler.h: one request's sampler (mutable, per-request state).
//
// Owns the request's params, its RNG (seeded from params.seed, so the same
// seed gives the same tokens), its token history for the penalties, and
// scratch buffers reused across steps so sampling a token allocates nothing
// after the first step.
//
//   Sampler s(params, vocab_size, eos_ids, prompt_tokens);
//   for (;;) { auto t = s.sample(logits_of_last_position); s.accept(t.id); ... }
//
// Speculative verification (spec/rejection.h) needs the distribution a draw
// would use rather than a draw: target() runs the same chain and returns the
// candidate list (greedy: the argmax alone), and rng() is the same RNG.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "sampling/candidates.h"
#include "sampling/draw.h"
#include "sampling/logprobs.h"
#include "sampling/sampler_chain.h"
#include "sampling/sampling_params.h"
#include "sampling/token_history.h"

namespace folio::sampling {

struct SampledToken {
  TokenId id;
  std::optional<Logprobs> logprobs;  // set when params.logprobs is set
};

class Sampler {
 public:
  // Validates `params` (throws folio::Error). `eos_ids` are the model's
  // end-of-generation tokens; `prompt` feeds the repetition penalty.
  Sampler(SamplingParams params, std::int32_t vocab_size, std::span<const TokenId> eos_ids,
          std::span<const TokenId> prompt);

  // Chooses the next token from one position's logits (vocab_size floats).
  // Does not change the history: call accept() with the token kept.
  SampledToken sample(std::span<const float> logits);

  void accept(TokenId id) { history_.add_generated(id); }

  // Constrained decoding (grammar/matcher.h): tokens whose bit is clear in
  // `bits` (vocab_size bits, 64 per word) are removed before every other
  // step, for the next sample()/target() calls; nullptr removes nothing.
  // Logprobs stay those of the model's own distribution (vLLM's default
  // "raw" logprobs). `bits` must outlive those calls.
  void set_allowed(const std::uint64_t* bits) { allowed_ = bits; }

  // The distribution sample() would draw from for `logits`: the candidates
  // left after the whole chain, with their final logits (probability =
  // softmax over the list). Greedy: one candidate, the argmax. Valid until
  // the next call.
  const Candidates& target(std::span<const float> logits);
  Rng& rng() { return rng_; }

  const SamplingParams& params() const { return params_; }
  const SamplerChain& chain() const { return chain_; }
  const TokenHistory& history() const { return history_; }

 private:
  SamplingParams params_;
  std::int32_t vocab_size_;
  Rng rng_;
  TokenHistory history_;
  SamplerChain chain_;
  std::vector<float> scratch_;  // dense logits the logit steps edit
  Candidates candidates_;
  std::vector<float> weights_;  // draw() scratch
  const std::uint64_t* allowed_ = nullptr;
};

}  // namespace folio::sampling
