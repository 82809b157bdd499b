// engine/sample_stream.h: per-sample post-processing of drawn tokens.
//
// One SampleStream per sample of a request (n of them). It owns the
// sample's Sampler (its RNG and penalty history), and turns each drawn token
// into the sample's pending delta: token id, logprobs, detokenized text with
// stop strings applied (StopMatcher holds back any possible stop-string
// prefix, so text never leaks one), and the caller's stop verdict for the
// scheduler (EOS / stop token / stop string -> kStop). max_tokens is the
// scheduler's verdict (kLength); the stream only flushes held text then.
//
// EOS and stop-token ids stay in token_ids but add no text (vLLM).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/output_channel.h"
#include "sampling/sampler.h"
#include "sampling/stop_matcher.h"
#include "sched/request.h"
#include "tokenizer/detokenizer.h"

namespace folio::engine {

class SampleStream {
 public:
  // `tok` may be null (no text, no stop strings); it and `eos` must outlive this.
  SampleStream(std::int32_t index, const sampling::SamplingParams& params,
               std::int32_t vocab_size, std::span<const TokenId> eos,
               std::span<const TokenId> prompt, const tokenizer::Tokenizer* tok);

  // Draws this sample's next token from one row of logits.
  sampling::SampledToken draw(std::span<const float> logits) { return sampler_.sample(logits); }
  // Commits a drawn token; returns the stop verdict for the scheduler.
  FinishReason accept(const sampling::SampledToken& t);
  // The scheduler (or an abort) finished the sample.
  void finish(FinishReason reason);

  std::int32_t index() const { return pending_.index; }
  std::int32_t num_generated() const { return generated_; }
  bool done() const { return done_; }
  bool has_pending() const { return dirty_; }
  // Moves the pending delta out (dirty flag cleared).
  SampleDelta take_pending();

  sched::RequestId seq = 0;  // scheduler sequence id (0 until this sample exists there)

 private:
  void flush_text();

  sampling::Sampler sampler_;
  std::span<const TokenId> eos_;
  std::optional<tokenizer::StreamingDetokenizer> detok_;
  std::optional<sampling::StopMatcher> stops_;
  std::vector<std::string> stop_strings_;
  SampleDelta pending_;
  std::int32_t generated_ = 0;
  bool dirty_ = false;
  bool done_ = false;
};

// Seed of sample k: the request's seed + k, so n samples are distinct and
// each is reproducible; no seed stays random.
sampling::SamplingParams sample_params(const sampling::SamplingParams& p, std::int32_t k);

}  // namespace folio::engine
