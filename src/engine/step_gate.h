// engine/step_gate.h: engines that share one kernel thread pool take turns,
// each getting an equal share of the compute time.
//
// Several models in one process (folio serve -m A -m B) share the CPU's
// kernel threads: one ThreadPool, which runs one parallel_for at a time.
// Each EngineLoop enters the gate around a step, so at most one engine
// computes at a time. The turn goes to the waiting engine that has used the
// least compute time so far (fair share, as a CPU scheduler's virtual
// runtime; ties first come, first served); an engine coming back from idle
// starts level with the engines busy now, and no lower than the least time
// the busy engines had reached when it left (`floor_`, which only rises, as
// a CPU scheduler's min_vruntime), so idling banks no credit: an engine idle
// while another ran for a minute does not then hold the pool for a minute. An engine that leaves
// while still owed time keeps the gate reserved for a moment (`grace`), the time its loop takes to
// come back for its next step: without that, whoever waits would take every gap between its steps,
// and turns would simply alternate. Measured (docs/PERFORMANCE.md, bench/multi_model.sh): a model
// decoding one request next to a saturated one keeps its short steps close together, instead of
// waiting one long prefill step of the other per token.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>

namespace folio::engine {

class StepGate {
 public:
  static constexpr double kDefaultGraceSeconds = 0.002;
  explicit StepGate(double grace_s = kDefaultGraceSeconds)
      : grace_(
            std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace_s))) {}

  // A new engine; returns its id for enter/leave.
  int add_member() {
    std::lock_guard lock(mu_);
    members_.push_back(Member{});
    return static_cast<int>(members_.size()) - 1;
  }

  // Holds the gate while alive (gate may be null: no gate).
  class Turn {
   public:
    Turn(StepGate* gate, int member) : gate_(gate), member_(member) {
      if (gate_ != nullptr) gate_->enter(member_);
      start_ = std::chrono::steady_clock::now();
    }
    ~Turn() {
      if (gate_ != nullptr) {
        const std::chrono::duration<double> held = std::chrono::steady_clock::now() - start_;
        gate_->leave(member_, held.count());
      }
    }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;

   private:
    StepGate* gate_;
    int member_;
    std::chrono::steady_clock::time_point start_;
  };

  void enter(int member) {
    std::unique_lock lock(mu_);
    Member& me = members_[static_cast<std::size_t>(member)];
    if (reserved_ == member && !busy_) {  // back within its grace: still its turn
      reserved_ = -1;
      take(me);
      return;
    }
    double floor = -1;  // the least time of the other engines still busy
    for (const Member& m : members_) {
      if (&m != &me && (m.waiting || m.running) && (floor < 0 || m.used_s < floor))
        floor = m.used_s;
    }
    if (floor_ > floor) floor = floor_;
    if (floor > me.used_s) me.used_s = floor;
    me.waiting = true;
    me.ticket = next_ticket_++;
    while (true) {
      if (busy_ || next() != &me) {
        cv_.wait(lock);
      } else if (reserved_ >= 0 && reserved_ != member && Clock::now() < reserved_until_) {
        cv_.wait_until(lock, reserved_until_);
      } else {
        break;
      }
    }
    reserved_ = -1;
    me.waiting = false;
    take(me);
  }

  void leave(int member, double seconds) {
    {
      std::lock_guard lock(mu_);
      Member& me = members_[static_cast<std::size_t>(member)];
      me.used_s += seconds;
      me.running = false;
      busy_ = false;
      const Member* waiter = next();
      // The least time among the engines busy now (this one and the waiting).
      const double least =
          waiter != nullptr && waiter->used_s < me.used_s ? waiter->used_s : me.used_s;
      if (least > floor_) floor_ = least;
      if (waiter != nullptr && waiter->used_s >= me.used_s) {
        reserved_ = member;  // still owed time: keep the turn for its next step
        reserved_until_ = Clock::now() + grace_;
      } else {
        reserved_ = -1;
      }
    }
    cv_.notify_all();
  }

  // Engines waiting for a turn (tests).
  int waiting() const {
    std::lock_guard lock(mu_);
    int n = 0;
    for (const Member& m : members_) n += m.waiting ? 1 : 0;
    return n;
  }

 private:
  using Clock = std::chrono::steady_clock;

  struct Member {
    double used_s = 0;  // compute time used (virtual: raised to a floor after idling)
    std::uint64_t ticket = 0;
    bool waiting = false;
    bool running = false;
  };

  void take(Member& me) {
    me.running = true;
    busy_ = true;
  }

  // The waiting member with the least time used (ties: the earliest ticket).
  const Member* next() const {
    const Member* best = nullptr;
    for (const Member& m : members_) {
      if (!m.waiting) continue;
      if (best == nullptr || m.used_s < best->used_s ||
          (m.used_s == best->used_s && m.ticket < best->ticket)) {
        best = &m;
      }
    }
    return best;
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Member> members_;  // guarded by mu_ (a deque: references survive add_member)
  std::uint64_t next_ticket_ = 0;
  bool busy_ = false;
  double floor_ = 0;  // the least time of the busy engines at the last step (never falls)
  Clock::duration grace_;
  int reserved_ = -1;  // a member that left still owed time, until reserved_until_
  Clock::time_point reserved_until_;
};

}  // namespace folio::engine
