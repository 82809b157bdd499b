#include "engine/engine_loop.h"

#include <algorithm>
#include <exception>

#include "base/timer.h"

namespace folio::engine {

EngineLoop::EngineLoop(LLMEngine& engine, StepGate* gate, double stall_seconds)
    : engine_(engine),
      gate_(gate),
      stall_seconds_(stall_seconds),
      gate_member_(gate != nullptr ? gate->add_member() : -1),
      thread_([this] { run(); }) {}

EngineLoop::~EngineLoop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

void EngineLoop::post(std::function<void(LLMEngine&)> command) {
  {
    std::lock_guard lock(mu_);
    commands_.push_back(std::move(command));
  }
  cv_.notify_one();
}

std::shared_ptr<OutputChannel> EngineLoop::submit(AdmittedRequest r) {
  auto channel = std::make_shared<OutputChannel>();
  post([r = std::move(r), channel](LLMEngine& e) mutable {
    const RequestId id = r.request().id;
    try {
      e.add_request(std::move(r), channel);
    } catch (const std::exception& ex) {  // e.g. a duplicate id
      RequestOutput out;
      out.request_id = id;
      out.finished = true;
      out.error = ex.what();
      channel->push(std::move(out));
    }
  });
  return channel;
}

void EngineLoop::abort(RequestId id) {
  post([id](LLMEngine& e) { e.abort(id); });
}

void EngineLoop::finish_sample(RequestId id, std::int32_t index) {
  post([id, index](LLMEngine& e) { e.finish_sample(id, index); });
}

bool EngineLoop::healthy() const {
  const double now = monotonic_seconds();
  std::lock_guard lock(mu_);
  if (busy_since_ == 0) return true;  // waiting for work
  return now - std::max(busy_since_, last_step_end_) < stall_seconds_;
}

void EngineLoop::run() {
  std::vector<std::function<void(LLMEngine&)>> batch;
  while (true) {
    {
      std::unique_lock lock(mu_);
      if (commands_.empty() && !engine_.has_unfinished()) busy_since_ = 0;
      cv_.wait(lock, [&] { return stop_ || !commands_.empty() || engine_.has_unfinished(); });
      if (stop_) break;
      batch.swap(commands_);
      if (busy_since_ == 0) busy_since_ = monotonic_seconds();
    }
    for (auto& c : batch) c(engine_);
    batch.clear();
    try {
      const StepGate::Turn turn(gate_, gate_member_);
      engine_.step();
    } catch (const std::exception& e) {
      // An internal invariant broke: end every live request (their
      // consumers see kAbort) rather than leave them waiting forever.
      {
        std::lock_guard lock(mu_);
        last_error_ = e.what();
        ++num_errors_;
      }
      engine_.abort_all();
    }
    std::lock_guard lock(mu_);
    last_step_end_ = monotonic_seconds();
  }
  // Whatever is still live ends as aborted, so no consumer waits forever.
  std::vector<std::function<void(LLMEngine&)>> rest;
  {
    std::lock_guard lock(mu_);
    rest.swap(commands_);
  }
  for (auto& c : rest) c(engine_);
  engine_.abort_all();
}

int EngineLoop::num_errors() const {
  std::lock_guard lock(mu_);
  return num_errors_;
}

std::string EngineLoop::last_error() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

}  // namespace folio::engine
