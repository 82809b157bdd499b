// tests/engine/step_gate_test.cpp: engines sharing a kernel pool take turns
// by least compute time used (engine/step_gate.h).
#include "engine/step_gate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace folio::engine {
namespace {

// Waits until `n` members wait on the gate.
void until_waiting(const StepGate& g, int n) {
  while (g.waiting() < n) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// The order in which members got their turns.
struct Order {
  std::vector<int> seen;
  std::mutex mu;
  void record(int m) {
    std::lock_guard l(mu);
    seen.push_back(m);
  }
};

// A thread taking one turn as `m`, recorded in `o`, that uses `s` seconds.
std::thread one_turn(StepGate& g, Order& o, int m, double s) {
  return std::thread([&g, &o, m, s] {
    g.enter(m);
    o.record(m);
    g.leave(m, s);
  });
}

TEST(StepGateTest, OneEngineAtATime) {
  StepGate g;
  const int a = g.add_member();
  const int b = g.add_member();
  int inside = 0;
  int most = 0;
  std::mutex mu;
  const auto work = [&](int m) {
    for (int i = 0; i < 200; ++i) {
      const StepGate::Turn turn(&g, m);
      {
        std::lock_guard l(mu);
        most = std::max(most, ++inside);
      }
      std::this_thread::yield();
      std::lock_guard l(mu);
      --inside;
    }
  };
  std::thread ta(work, a);
  std::thread tb(work, b);
  ta.join();
  tb.join();
  EXPECT_EQ(most, 1);
}

// `holder` holds the gate while `first` then `second` queue; then it leaves.
std::vector<int> queued_order(StepGate& g, int holder, int first, int second) {
  Order o;
  g.enter(holder);
  std::thread t1 = one_turn(g, o, first, 0.001);
  until_waiting(g, 1);
  std::thread t2 = one_turn(g, o, second, 0.001);
  until_waiting(g, 2);
  g.leave(holder, 0.0);
  t1.join();
  t2.join();
  return o.seen;
}

TEST(StepGateTest, TheWaiterThatUsedLeastTimeGoesFirst) {
  StepGate g;
  const int holder = g.add_member();
  const int heavy = g.add_member();
  const int light = g.add_member();
  Order setup;
  g.enter(heavy);
  std::thread tl = one_turn(g, setup, light, 0.001);  // light waits ...
  until_waiting(g, 1);
  g.leave(heavy, 5.0);  // ... while heavy takes a 5 s step, then takes a short one
  tl.join();
  // heavy asks first, but light, owed time, goes first.
  EXPECT_EQ(queued_order(g, holder, heavy, light), (std::vector<int>{light, heavy}));
}

TEST(StepGateTest, EqualTimeGoesFirstComeFirstServed) {
  StepGate g;
  const int holder = g.add_member();
  const int x = g.add_member();
  const int y = g.add_member();
  EXPECT_EQ(queued_order(g, holder, y, x), (std::vector<int>{y, x}));
}

TEST(StepGateTest, IdlingBanksNoCredit) {
  StepGate g;
  const int busy = g.add_member();
  const int idle = g.add_member();
  const int holder = g.add_member();
  g.enter(busy);
  g.leave(busy, 10.0);  // `busy` has used 10 s while `idle` used none
  g.enter(holder);
  g.leave(holder, 10.0);
  // `idle` comes back after `busy` queued: it starts level with it (10 s),
  // not 10 s ahead, and, level, queues behind it.
  EXPECT_EQ(queued_order(g, holder, busy, idle), (std::vector<int>{busy, idle}));
}

TEST(StepGateTest, AnEngineOwedTimeKeepsItsTurnsUntilItHasUsedItsShare) {
  StepGate g(/*grace_s=*/60);  // a grace far longer than the test: no timing involved
  const int fast = g.add_member();
  const int slow = g.add_member();
  Order o;
  g.enter(slow);  // slow holds the gate while fast queues
  std::thread tf([&] {
    for (int i = 0; i < 7; ++i) {
      g.enter(fast);
      o.record(fast);
      if (i == 0) until_waiting(g, 1);  // slow has queued its next step
      g.leave(fast, 1.0);  // 1 s steps: owed time until it has used more than slow's 5 s
    }
  });
  until_waiting(g, 1);
  g.leave(slow, 5.0);  // slow's 5 s step; it asks again at once
  g.enter(slow);
  o.record(slow);
  g.leave(slow, 5.0);
  tf.join();
  // fast ran 6 steps (used 0 .. 5, ties keep the turn) before slow's next; its 7th waited.
  EXPECT_EQ(o.seen, (std::vector<int>{fast, fast, fast, fast, fast, fast, slow, fast}));
}

TEST(StepGateTest, AnEngineThatWasIdleWhileAnotherRanAloneHasNoCredit) {
  StepGate g;
  const int early = g.add_member();
  const int late = g.add_member();
  const int holder = g.add_member();
  g.enter(early);
  g.leave(early, 1.0);  // early used 1 s, then idled
  g.enter(late);
  g.leave(late, 100.0);  // late then ran 100 s alone
  g.enter(holder);
  g.leave(holder, 0.0);  // holder, idle throughout, comes back level
  // early queues first (from idle), then late: early is not owed the 99 s
  // late ran while it idled (the defect PERFORMANCE.md describes); level,
  // they take turns, early first, twice.
  EXPECT_EQ(queued_order(g, holder, early, late), (std::vector<int>{early, late}));
  EXPECT_EQ(queued_order(g, holder, early, late), (std::vector<int>{early, late}));
}

}  // namespace
}  // namespace folio::engine
