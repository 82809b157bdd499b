// fuzz/sync_engine.h: an engine::EngineClient that answers at once, for the
// HTTP fuzz target.
//
// tests/server/fake_engine.h steps on its own thread, which a fuzz target
// cannot wait for input after input; this one has no thread: submit()
// pushes the whole answer, finished, onto the request's channel before it
// returns, so a job is done after its first poll(). It honours the contract
// of engine/engine_client.h: the real RequestLimits, max_tokens (kLength),
// logprobs, pooled states for pooling requests, and a last item with
// finished == true; abort() and finish_sample() are no-ops (nothing is ever
// in flight).
//
// What a sample says: the request's own prompt tokens from the last
// kTailTokens on (the end of the last message and the generation prompt),
// shifted by the sample's index, cyclically, at most kMaxAnswerTokens of
// them (then EOS, kStop): the fuzzer steers the answer text (tool calls,
// stop strings) through the prompt.
#pragma once

#include <memory>

#include "engine/engine_client.h"

namespace folio::fuzz {

class SyncEngine : public engine::EngineClient {
 public:
  static constexpr std::int32_t kMaxAnswerTokens = 24;
  static constexpr std::size_t kTailTokens = 32;

  // `eos`: the stop token that ends an answer cut at kMaxAnswerTokens.
  SyncEngine(const engine::RequestLimits::Values& limits, TokenId eos, std::int32_t hidden_size);

  const engine::RequestLimits& limits() const override { return limits_; }
  std::shared_ptr<engine::OutputChannel> submit(engine::AdmittedRequest request) override;
  void abort(engine::RequestId) override {}
  void finish_sample(engine::RequestId, std::int32_t) override {}
  engine::EngineStats stats() const override { return {}; }
  bool healthy() const override { return true; }

 private:
  engine::RequestLimits limits_;
  TokenId eos_;
  std::int32_t hidden_size_;
};

}  // namespace folio::fuzz
