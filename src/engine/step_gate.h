// engine/step_gate.h: engines that share one kernel thread pool take turns.
//
// Several models in one process (folio serve -m A -m B) share the CPU's
// kernel threads: one ThreadPool, which runs one parallel_for at a time.
// Each EngineLoop enters the gate around a step, so at most one engine
// computes at a time, and turns are granted first come, first served
// (a ticket lock): an engine that has a step to run waits at most for the
// steps already queued, one per other engine, so a saturated model cannot
// starve another's decodes (its ITL grows by at most one step of each other
// model; a long prefill step is bounded by --max-num-batched-tokens).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace folio::engine {

class StepGate {
 public:
  // Holds the gate while alive.
  class Turn {
   public:
    explicit Turn(StepGate* gate) : gate_(gate) {
      if (gate_ != nullptr) gate_->enter();
    }
    ~Turn() {
      if (gate_ != nullptr) gate_->leave();
    }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;

   private:
    StepGate* gate_;
  };

  void enter() {
    std::unique_lock lock(mu_);
    const std::uint64_t ticket = next_++;
    cv_.wait(lock, [&] { return serving_ == ticket; });
  }
  void leave() {
    {
      std::lock_guard lock(mu_);
      ++serving_;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t next_ = 0;     // the next ticket handed out
  std::uint64_t serving_ = 0;  // the ticket that may run
};

}  // namespace folio::engine
