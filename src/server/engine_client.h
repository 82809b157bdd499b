// server/engine_client.h: the port between the HTTP server and an engine.
//
// The server never sees the scheduler or the model. It submits a request
// (prompt token ids + sampling parameters + n samples) and gets back a
// RequestStream: that request's own output channel, carrying deltas (new
// token ids per sample, their logprobs, finish reasons) until the final item.
// Nothing is shared between requests' channels, so the engine wakes exactly
// the one consumer whose request advanced (DESIGN.md: "every request has its
// own output channel").
//
// Threading contract for an implementation (the engine adapter):
//   - submit/abort/finish_sample/stats/healthy are called from server IO
//     threads, concurrently; they must be thread-safe and must not block on
//     a model step (queue the command for the engine loop instead).
//   - The engine pushes StreamItems from its own thread; the last one has
//     `finished = true` (also after abort: then every unfinished sample
//     carries FinishReason::kAbort). Nothing is pushed after it.
//   - abort(id) frees the request's KV blocks within one engine step.
//   - Token-level stops (EOS unless ignore_eos, stop_token_ids, max_tokens,
//     min_tokens masking) are the engine's job; stop *strings* are matched by
//     the server on detokenized text, which then calls finish_sample().
//   - A sample that stops on a token (FinishReason::kStop) includes that
//     token as its last delta token; the server does not render it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/notify_queue.h"
#include "base/timer.h"
#include "sampling/logprobs.h"
#include "sampling/sampling_params.h"
#include "sched/request.h"

namespace folio::server {

using TokenId = sampling::TokenId;
using RequestId = std::uint64_t;
using FinishReason = sched::FinishReason;

struct EngineRequest {
  RequestId id = 0;                 // unique per process, chosen by the server
  std::vector<TokenId> prompt;      // already tokenized (chat template applied)
  sampling::SamplingParams params;  // validated; max_tokens always set
  std::int32_t n = 1;               // independent samples of this prompt
  double arrival_time = 0;          // steady-clock seconds (see steady_seconds())
  std::int32_t priority = 0;        // lower = served first (--scheduling-policy priority)
};

// New output of one sample since the previous item.
struct SampleDelta {
  std::int32_t index = 0;                   // sample index in [0, n)
  std::vector<TokenId> tokens;              // new token ids, in order
  std::vector<sampling::Logprobs> logprobs; // one per token when params.logprobs is set
  FinishReason finish = FinishReason::kNone;
};

// Engine-measured phases of a finished request (seconds; 0 when unknown).
struct RequestTiming {
  double queued_s = 0;   // arrival -> first scheduled
  double prefill_s = 0;  // first scheduled -> first token
  double decode_s = 0;   // first token -> finished
};

struct StreamItem {
  std::vector<SampleDelta> samples;
  std::int32_t num_prompt_tokens = 0;  // set on every item (cheap) so any one suffices
  std::int32_t num_cached_tokens = 0;  // prefix-cache hit at admission
  bool finished = false;               // last item: every sample has finished
  std::optional<RequestTiming> timing; // on the last item
  std::string error;                   // engine failure message (samples finish kError)
};

// One request's output channel. Producer: the engine thread. Consumer:
// exactly one (an HTTP session), by callback (set_notify + drain, for async
// IO) or by blocking (wait_drain, for tests). Contract: base/notify_queue.h.
using RequestStream = NotifyQueue<StreamItem>;

// Aggregate engine state for /metrics and /health.
struct EngineStats {
  std::int32_t num_running = 0;
  std::int32_t num_waiting = 0;
  double kv_cache_usage = 0;  // fraction of KV blocks in use, [0, 1]
  std::uint64_t prefix_cache_queries = 0;  // tokens looked up in the prefix cache
  std::uint64_t prefix_cache_hits = 0;     // tokens found
  std::uint64_t num_preemptions = 0;
  std::uint64_t num_steps = 0;
  // Cumulative seconds per engine stage, e.g. {"schedule", 1.2}, {"attention", 30.1},
  // {"ffn", 50.3}, {"sampling", 2.0}, {"model_load", 0.8}. The server adds its
  // own "tokenize" and "detokenize" stages.
  std::vector<std::pair<std::string, double>> stage_seconds;
};

// Thrown by submit() when the engine cannot take the request now (the server
// answers 503); any other folio::Error from submit() is the request's fault (400).
class EngineOverloaded : public Error {
 public:
  using Error::Error;
};

class EngineClient {
 public:
  virtual ~EngineClient() = default;
  virtual std::shared_ptr<RequestStream> submit(EngineRequest request) = 0;
  // Stops the request (all samples); idempotent; unknown ids are ignored.
  virtual void abort(RequestId id) = 0;
  // The server matched a stop string in this sample: stop it and free what it
  // holds. The engine then finishes the sample with FinishReason::kStop (its
  // further tokens, if any were already produced, are ignored by the server).
  virtual void finish_sample(RequestId id, std::int32_t sample_index) = 0;
  virtual EngineStats stats() const = 0;
  // True while the engine loop is alive and making progress (not wedged).
  virtual bool healthy() const = 0;
};

// Monotonic seconds used for arrival times and latency metrics.
inline double steady_seconds() { return monotonic_seconds(); }

}  // namespace folio::server
