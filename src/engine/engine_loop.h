// engine/engine_loop.h: a background thread that drives an LLMEngine, and
// the EngineClient the server uses.
//
// Other threads (HTTP sessions, tools) call submit / abort / finish_sample;
// these queue a command and wake the loop. The loop thread applies queued
// commands between steps, steps while there is work, and sleeps on a
// condition variable otherwise, so an idle engine costs no CPU. Outputs
// travel on each request's own OutputChannel.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine_client.h"
#include "engine/llm_engine.h"
#include "engine/step_gate.h"

namespace folio::engine {

class EngineLoop final : public EngineClient {
 public:
  // `engine` must outlive the loop; from now on only the loop thread touches
  // it. `gate` (optional, outlives the loop): steps are taken in turn with
  // the other loops sharing it (engine/step_gate.h).
  // `stall_seconds`: how long pending work may go without a completed step
  // before healthy() turns false (tests shorten it).
  explicit EngineLoop(LLMEngine& engine, StepGate* gate = nullptr,
                      double stall_seconds = kStallSeconds);
  ~EngineLoop() override;  // stops the thread; requests still live are aborted
  EngineLoop(const EngineLoop&) = delete;
  EngineLoop& operator=(const EngineLoop&) = delete;

  const RequestLimits& limits() const override { return engine_.limits(); }
  std::shared_ptr<OutputChannel> submit(AdmittedRequest r) override;
  void abort(RequestId id) override;
  void finish_sample(RequestId id, std::int32_t index) override;
  EngineStats stats() const override { return engine_.stats(); }
  // Unhealthy when the loop has had work for stall_seconds (default
  // kStallSeconds) without completing a step (wedged in a step, or behind
  // the StepGate); healthy again once a step completes or it is idle. Read
  // from the loop itself, not from the engine's published stats, which lag
  // by a step.
  bool healthy() const override;

  // Steps that threw out of the engine (each aborted every live request),
  // and the last such message.
  int num_errors() const;
  std::string last_error() const;

  static constexpr double kStallSeconds = 30;

 private:
  void run();
  void post(std::function<void(LLMEngine&)> command);

  LLMEngine& engine_;
  StepGate* gate_;
  double stall_seconds_;
  int gate_member_ = -1;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::function<void(LLMEngine&)>> commands_;  // guarded by mu_
  bool stop_ = false;                                      // guarded by mu_
  std::string last_error_;                                 // guarded by mu_
  int num_errors_ = 0;                                     // guarded by mu_
  // The progress watch (healthy()): when the loop last took work after
  // being idle (0 while idle), and when its last step ended.
  double busy_since_ = 0;     // guarded by mu_
  double last_step_end_ = 0;  // guarded by mu_
  std::thread thread_;
};

}  // namespace folio::engine
