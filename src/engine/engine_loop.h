// engine/engine_loop.h: a background thread that drives an LLMEngine.
//
// Other threads (HTTP sessions, tools) call add_request / abort /
// finish_sample; these validate on the caller's thread (so a bad request
// fails there, synchronously), then queue a command and wake the loop. The
// loop thread applies queued commands between steps, steps while there is
// work, and sleeps on a condition variable otherwise, so an idle engine
// costs no CPU. Outputs travel on each request's own OutputChannel.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/llm_engine.h"

namespace folio::engine {

class EngineLoop {
 public:
  // `engine` must outlive the loop; from now on only the loop thread touches it.
  explicit EngineLoop(LLMEngine& engine);
  ~EngineLoop();  // stops the thread; requests still live are aborted
  EngineLoop(const EngineLoop&) = delete;
  EngineLoop& operator=(const EngineLoop&) = delete;

  // Throws folio::Error for a request that can never run (see LLMEngine::validate).
  std::shared_ptr<OutputChannel> add_request(GenerateRequest r);
  void abort(RequestId id);
  void finish_sample(RequestId id, std::int32_t index);

  EngineStats stats() const { return engine_.stats(); }
  // Steps that threw out of the engine (each aborted every live request),
  // and the last such message.
  int num_errors() const;
  std::string last_error() const;

 private:
  void run();

  LLMEngine& engine_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::function<void(LLMEngine&)>> commands_;  // guarded by mu_
  bool stop_ = false;                                      // guarded by mu_
  std::string last_error_;                                 // guarded by mu_
  int num_errors_ = 0;                                     // guarded by mu_
  std::thread thread_;
};

}  // namespace folio::engine
