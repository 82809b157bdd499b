// engine/engine_client.h: the engine as its asynchronous consumers see it.
//
// The HTTP server (and anything else on other threads) talks to an engine
// only through this interface: EngineLoop implements it over the real
// engine, tests/server/fake_engine.h with a scripted one. Requests and
// outputs are the one protocol of engine/protocol.h.
//
// Threading contract for an implementation:
//   - every method may be called from any thread, concurrently, and must not
//     block on a model step (queue the command for the engine thread);
//   - limits() is immutable: admit requests with it before submit();
//   - outputs arrive on the request's own OutputChannel, pushed from the
//     engine's thread; the last item has finished == true (after abort too:
//     unfinished samples carry FinishReason::kAbort) and nothing follows it;
//   - abort(id) frees the request's KV blocks within one engine step;
//   - token-level stops (EOS unless ignore_eos, stop_token_ids, max_tokens,
//     min_tokens masking) are the engine's; stop strings are the consumer's
//     OutputProcessor, which calls finish_sample() when one matches (tokens
//     the engine produced after that are not the consumer's to show).
#pragma once

#include <cstdint>
#include <memory>

#include "engine/engine_stats.h"
#include "engine/protocol.h"
#include "engine/request_limits.h"

namespace folio::engine {

class EngineClient {
 public:
  virtual ~EngineClient() = default;

  virtual const RequestLimits& limits() const = 0;
  virtual std::shared_ptr<OutputChannel> submit(AdmittedRequest request) = 0;
  // Stops the request (all samples); idempotent; unknown ids are ignored.
  virtual void abort(RequestId id) = 0;
  // A stop string matched in this sample: stop it and free what it holds.
  virtual void finish_sample(RequestId id, std::int32_t sample_index) = 0;
  virtual EngineStats stats() const = 0;
  // True while the engine is alive and making progress (not wedged).
  virtual bool healthy() const = 0;
};

}  // namespace folio::engine
