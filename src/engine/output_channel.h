// engine/output_channel.h: one request's output channel (engine -> consumer).
//
// The engine thread pushes one RequestOutput per step in which the request
// produced something (new tokens, text, a finish). Each request has its own
// channel with its own mutex and condition variable, so a step wakes exactly
// the consumers whose requests advanced (DESIGN.md: nothing wakes all
// waiters). A consumer either blocks (wait_drain, for tools and tests) or
// registers an edge-triggered callback (set_notify, for async IO).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "sampling/logprobs.h"
#include "sched/request.h"

namespace folio::engine {

using TokenId = std::int32_t;
using FinishReason = sched::FinishReason;

// New output of one sample (index in [0, n)) since the previous item.
struct SampleDelta {
  std::int32_t index = 0;
  std::vector<TokenId> token_ids;
  std::vector<sampling::Logprobs> logprobs;  // one per token when params.logprobs is set
  std::string text;  // detokenized delta, stop strings applied (empty without a tokenizer)
  FinishReason finish = FinishReason::kNone;
  std::string stop_reason;  // the stop string that matched, if any
};

struct RequestOutput {
  std::uint64_t request_id = 0;
  std::vector<SampleDelta> samples;    // only the samples that changed
  std::int32_t num_prompt_tokens = 0;
  std::int32_t num_cached_tokens = 0;  // prefix-cache hit at admission
  bool finished = false;               // last item: every sample has finished
  std::string error;                   // engine failure (samples finish kError)
  double ttft_s = 0;                   // add_request -> first token (set once known)
  double queue_s = 0;                  // add_request -> first scheduled (set once known)
};

class OutputChannel {
 public:
  // Producer (engine thread).
  void push(RequestOutput item);

  // Consumer. `notify` runs on the producer's thread when items arrive while
  // the consumer is drained (edge triggered); it must be cheap and must not
  // call into this channel. Called at once when items are already waiting.
  void set_notify(std::function<void()> notify);
  std::vector<RequestOutput> drain();
  // Blocks up to `timeout` for at least one item (returns what is there).
  std::vector<RequestOutput> wait_drain(std::chrono::milliseconds timeout);
  // Blocks until the final item was pushed; returns everything not drained.
  std::vector<RequestOutput> wait_all();
  bool finished() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<RequestOutput> queue_;
  bool armed_ = true;
  bool finished_ = false;
  std::mutex notify_mu_;  // held while calling notify_, so set_notify fences it
  std::function<void()> notify_;
};

}  // namespace folio::engine
