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
  explicit EngineLoop(LLMEngine& engine, StepGate* gate = nullptr);
  ~EngineLoop() override;  // stops the thread; requests still live are aborted
  EngineLoop(const EngineLoop&) = delete;
  EngineLoop& operator=(const EngineLoop&) = delete;

  const RequestLimits& limits() const override { return engine_.limits(); }
  std::shared_ptr<OutputChannel> submit(AdmittedRequest r) override;
  void abort(RequestId id) override;
  void finish_sample(RequestId id, std::int32_t index) override;
  EngineStats stats() const override { return engine_.stats(); }
  // Unhealthy when work is pending but the engine has not completed a step
  // for kStallSeconds.
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
  int gate_member_ = -1;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::function<void(LLMEngine&)>> commands_;  // guarded by mu_
  bool stop_ = false;                                      // guarded by mu_
  std::string last_error_;                                 // guarded by mu_
  int num_errors_ = 0;                                     // guarded by mu_
  mutable std::uint64_t last_steps_ = 0;                   // guarded by mu_ (progress watch)
  mutable double last_progress_ = 0;                       // guarded by mu_
  std::thread thread_;
};

}  // namespace folio::engine
