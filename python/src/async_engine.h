// python/src/async_engine.h: `AsyncLLM`: the engine on its own thread
// (engine/engine_loop.h, as `folio serve` runs it), streamed to asyncio.
//
// Each request's channel gets a notify callback (base/notify_queue.h) that
// runs on the engine thread: it records the request as ready and bumps an
// eventfd, and never takes the GIL. The Python side watches the eventfd
// with loop.add_reader, takes the ready ids and drains those requests: one
// wake-up per step, only the streams that advanced are touched.
//
// Request ids are the caller's (unique among live requests), so the caller
// can be waiting for an id before it is submitted.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/engine_loop.h"
#include "model_session.h"
#include "request.h"

namespace folio::python {

class AsyncEngine {
 public:
  AsyncEngine(const std::string& model, const cli::EngineFlags& flags);
  ~AsyncEngine();  // stops the engine thread (live requests are aborted)
  AsyncEngine(const AsyncEngine&) = delete;
  AsyncEngine& operator=(const AsyncEngine&) = delete;

  const ModelSession& session() const { return session_; }
  int wake_fd() const { return fd_; }

  // Throws folio::Error for a bad request or an id already live.
  void submit(std::uint64_t id, const Request& request);
  // Reads the eventfd; the ids with new output since the last call.
  std::vector<std::uint64_t> take_ready();
  // The request's whole result so far (cumulative), or nothing when no new
  // output arrived. The finished result is the last; then release() it.
  std::optional<Result> drain(std::uint64_t id);
  // Stops the request (its stream ends with finish_reason "abort").
  void abort(std::uint64_t id);
  // Forgets a request; aborts it first if it is still running.
  void release(std::uint64_t id);
  std::size_t num_live() const;

 private:
  struct Stream {
    std::shared_ptr<engine::OutputChannel> channel;
    std::unique_ptr<engine::OutputProcessor> out;
    Result result;
  };

  ModelSession session_;
  std::unique_ptr<engine::EngineLoop> loop_;
  int fd_ = -1;
  mutable std::mutex mu_;
  std::unordered_map<std::uint64_t, Stream> streams_;  // guarded by mu_
  std::vector<std::uint64_t> ready_;                   // guarded by mu_
};

}  // namespace folio::python
