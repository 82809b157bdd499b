// tests/server/fake_engine.h: a deterministic engine::EngineClient with no model.
//
// Its own thread "steps" every `step_latency`: each live sample emits the
// next token of `script` (sample s of a request starts at script offset s),
// with made-up logprobs when asked. It speaks the one protocol
// (engine/protocol.h) and honours the contract of engine/engine_client.h:
// the real RequestLimits (so the server's 400s are the engine's own),
// max_tokens (kLength), EOS unless ignore_eos and stop_token_ids after
// min_tokens (kStop, token included), abort (kAbort, within one step) and
// finish_sample. Tests read back what it saw: submitted requests, aborts.
// A pooling request's mean hidden state is fake_pooled(prompt).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "engine/engine_client.h"

namespace folio::server::testing {

using engine::EngineClient;
using engine::EngineRequest;
using engine::EngineStats;
using engine::OutputChannel;
using engine::RequestId;
using engine::RequestOutput;

// The fake's pooled state of a prompt: (mean token id, length, 1).
inline std::vector<float> fake_pooled(const std::vector<TokenId>& prompt) {
  double sum = 0;
  for (TokenId t : prompt) sum += t;
  const auto n = static_cast<double>(prompt.size());
  return {static_cast<float>(sum / n), static_cast<float>(n), 1.0F};
}

struct FakeEngineOptions {
  std::vector<TokenId> script = {1, 2, 3, 4};    // tokens produced in a loop
  std::chrono::microseconds step_latency{1000};  // time per engine step
  std::optional<TokenId> eos;                    // EOS id (stops unless ignore_eos)
  std::int32_t cached_tokens = 0;                // reported prefix-cache hit
  // max_model_len, max_num_seqs, KV blocks, block size, vocabulary
  engine::RequestLimits::Values limits{256, 256, 1 << 20, 16, 50257};
};

class FakeEngine : public EngineClient {
 public:
  explicit FakeEngine(FakeEngineOptions opts);
  ~FakeEngine() override;

  const engine::RequestLimits& limits() const override { return limits_; }
  std::shared_ptr<OutputChannel> submit(engine::AdmittedRequest request) override;
  void abort(RequestId id) override;
  void finish_sample(RequestId id, std::int32_t sample_index) override;
  EngineStats stats() const override;
  bool healthy() const override { return healthy_; }

  // ---- test hooks ----
  void set_healthy(bool h) { healthy_ = h; }
  void pause(bool p);        // paused: no steps (requests stay in flight)
  std::size_t live() const;  // requests not yet finished
  std::vector<EngineRequest> submitted() const;
  std::set<RequestId> aborted() const;  // ids whose abort freed a live request
  // Waits until `count` live requests have been aborted (true) or timeout.
  bool wait_aborted(std::size_t count, std::chrono::milliseconds timeout) const;
  bool wait_live(std::size_t count, std::chrono::milliseconds timeout) const;
  std::uint64_t steps() const { return steps_; }

 private:
  struct Live {
    EngineRequest req;
    std::shared_ptr<OutputChannel> stream;
    std::vector<std::int32_t> generated;  // per sample
    std::vector<bool> done;
    bool abort = false;
    std::set<std::int32_t> finish_requested;
    double first_scheduled = 0, first_token = 0;
  };
  void loop();
  // One step for one request; returns the item to push and whether it finished.
  RequestOutput step(Live& l, bool& finished);

  FakeEngineOptions opts_;
  engine::RequestLimits limits_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::map<RequestId, Live> live_;
  std::vector<EngineRequest> submitted_;
  std::set<RequestId> aborted_;
  bool paused_ = false;
  bool stop_ = false;
  std::atomic<bool> healthy_{true};
  std::atomic<std::uint64_t> steps_{0};
  std::thread thread_;
};

}  // namespace folio::server::testing
