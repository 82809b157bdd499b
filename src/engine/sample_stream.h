// engine/sample_stream.h: one sample's state inside the engine core.
//
// One SampleStream per sample of a request (n of them). It owns the
// sample's Sampler (its RNG and penalty history) and turns each drawn token
// into the sample's pending delta: token id, logprobs, and the token-level
// stop verdict for the scheduler (EOS unless ignore_eos, stop_token_ids:
// kStop, the token kept as the delta's last). max_tokens is the scheduler's
// verdict (kLength). Text and stop strings are not the engine core's: the
// consumer's OutputProcessor renders the ids (engine/output_processor.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/protocol.h"
#include "grammar/matcher.h"
#include "kv/types.h"
#include "sampling/sampler.h"
#include "spec/rejection.h"
#include "spec/speculative_config.h"

namespace folio::engine {

class SampleStream {
 public:
  // `eos` must outlive this. `grammar` (may be null) constrains the tokens
  // (structured output): each draw and verify sees only the tokens it
  // allows next, and the sample stops where it is complete.
  SampleStream(std::int32_t index, const sampling::SamplingParams& params, std::int32_t vocab_size,
               std::span<const TokenId> eos, std::span<const TokenId> prompt,
               std::shared_ptr<const grammar::CompiledGrammar> grammar = nullptr);

  // Draws this sample's next token from one row of logits.
  sampling::SampledToken draw(std::span<const float> logits) {
    constrain();
    return sampler_.sample(logits);
  }
  // Verifies a draft token against one row of logits (spec/rejection.h):
  // the token to keep (the draft when accepted) and whether it was accepted.
  // Like draw(), does not commit it: accept() does.
  struct Verified {
    sampling::SampledToken token;
    bool accepted = false;
  };
  Verified verify(std::span<const float> logits, TokenId draft);
  // Commits a drawn token; returns the token-level stop verdict (kNone or kStop).
  FinishReason accept(const sampling::SampledToken& t);
  // The scheduler (or an abort, a consumer's finish_sample) finished the sample.
  void finish(FinishReason reason);

  std::int32_t index() const { return pending_.index; }
  bool done() const { return done_; }
  bool has_pending() const { return dirty_; }
  // Moves the pending delta out (dirty flag cleared).
  SampleDelta take_pending();

  kv::SeqId seq;                        // its scheduler sequence (invalid until it exists there)
  spec::AcceptanceEstimate acceptance;  // of its drafts (adaptive draft length)
  std::int32_t drafted_to = 0;          // its tokens when its drafter last ran (a draft
                                        // model's K/V covers about that far)

 private:
  // The grammar's mask for the next token into the sampler (no-op when free).
  void constrain();

  sampling::Sampler sampler_;
  std::unique_ptr<grammar::GrammarMatcher> matcher_;
  std::vector<std::uint64_t> mask_;
  std::vector<TokenId> stop_ids_;  // the matcher's: eos and stop_token_ids
  bool grammar_complete_ = false;
  std::vector<double> weights_;  // verify() scratch
  std::span<const TokenId> eos_;
  SampleDelta pending_;
  std::int32_t generated_ = 0;
  bool dirty_ = false;
  bool done_ = false;
};

// Seed of sample k: the request's seed + k, so n samples are distinct and
// each is reproducible; no seed stays random.
sampling::SamplingParams sample_params(const sampling::SamplingParams& p, std::int32_t k);

}  // namespace folio::engine
