// tests/engine/step_gate_test.cpp: engines sharing a kernel pool take turns
// by least compute time used (engine/step_gate.h).
#include "engine/step_gate.h"

#include <gtest/gtest.h>

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

TEST(StepGateTest, TheWaiterThatUsedLeastTimeGoesFirst) {
  StepGate g;
  const int holder = g.add_member();
  const int heavy = g.add_member();
  const int light = g.add_member();
  g.enter(heavy);
  g.leave(heavy, 5.0);  // used 5 s
  g.enter(light);
  g.leave(light, 1.0);  // used 1 s
  g.enter(holder);      // holds the gate while both queue
  std::vector<int> order;
  std::mutex mu;
  const auto take = [&](int m) {
    g.enter(m);
    {
      std::lock_guard l(mu);
      order.push_back(m);
    }
    g.leave(m, 0.001);
  };
  std::thread th(take, heavy);  // heavy asks first ...
  until_waiting(g, 1);
  std::thread tl(take, light);
  until_waiting(g, 2);
  g.leave(holder, 0.001);
  th.join();
  tl.join();
  EXPECT_EQ(order, (std::vector<int>{light, heavy}));  // ... light, owed time, goes first
}

TEST(StepGateTest, EqualTimeGoesFirstComeFirstServed) {
  StepGate g;
  const int holder = g.add_member();
  const int x = g.add_member();
  const int y = g.add_member();
  g.enter(holder);
  std::vector<int> order;
  std::mutex mu;
  const auto take = [&](int m) {
    g.enter(m);
    {
      std::lock_guard l(mu);
      order.push_back(m);
    }
    g.leave(m, 0.0);
  };
  std::thread ty(take, y);
  until_waiting(g, 1);
  std::thread tx(take, x);
  until_waiting(g, 2);
  g.leave(holder, 0.0);
  ty.join();
  tx.join();
  EXPECT_EQ(order, (std::vector<int>{y, x}));
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
  g.enter(holder);
  std::vector<int> order;
  std::mutex mu;
  const auto take = [&](int m, double s) {
    g.enter(m);
    {
      std::lock_guard l(mu);
      order.push_back(m);
    }
    g.leave(m, s);
  };
  std::thread tb(take, busy, 1.0);
  until_waiting(g, 1);
  // `idle` comes back: it starts level with `busy` (10 s), not 10 s ahead,
  // and, level, queues behind it.
  std::thread ti(take, idle, 1.0);
  until_waiting(g, 2);
  g.leave(holder, 0.0);
  tb.join();
  ti.join();
  EXPECT_EQ(order, (std::vector<int>{busy, idle}));
}

TEST(StepGateTest, AnEngineOwedTimeKeepsItsTurnsUntilItHasUsedItsShare) {
  StepGate g(/*grace_s=*/60);  // a grace far longer than the test: no timing involved
  const int fast = g.add_member();
  const int slow = g.add_member();
  g.enter(slow);
  g.leave(slow, 5.0);  // the slow engine took one 5 s step
  std::vector<int> order;
  std::mutex mu;
  g.enter(fast);  // fast holds the gate while slow queues for its next step
  std::thread ts([&] {
    g.enter(slow);
    {
      std::lock_guard l(mu);
      order.push_back(slow);
    }
    g.leave(slow, 5.0);
  });
  until_waiting(g, 1);
  for (int i = 0; i < 7; ++i) {
    if (i > 0) g.enter(fast);
    {
      std::lock_guard l(mu);
      order.push_back(fast);
    }
    g.leave(fast, 1.0);  // 1 s steps: owed time until it has used more than 5 s
  }
  ts.join();
  // fast ran 6 steps (used 0 .. 5, ties keep the turn) before slow's; its 7th waited for slow.
  EXPECT_EQ(order, (std::vector<int>{fast, fast, fast, fast, fast, fast, slow, fast}));
}

}  // namespace
}  // namespace folio::engine
