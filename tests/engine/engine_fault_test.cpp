// tests/engine/engine_fault_test.cpp: faults injected at every point of a
// workload (no model: tests/engine/fake_model_runner.h). After each fault the
// requests it hit end with an error, every other request gives the fake
// model's exact greedy tokens, no KV block leaks and nothing is left running:
//   - the model step throws, at each step of the run in turn;
//   - the KV pool is too small, at every size from one request's worth up,
//     so it runs out at every point of admission and growth (preemption);
//   - the engine thread stalls: healthy() turns false, and back when it moves.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

#include "core_fixture.h"
#include "engine/engine_loop.h"

namespace folio::engine::testing {
namespace {

struct Planned {
  std::vector<TokenId> prompt;
  std::int32_t max_tokens;
  std::int32_t n;
};

// 12 requests of 1..40 prompt tokens (every third shares a 9-token prefix),
// 1..20 output tokens, every fourth with n = 2.
std::vector<Planned> workload() {
  std::mt19937 rng(11);
  const auto shared = random_prompt(rng, 9);
  std::vector<Planned> w;
  for (int i = 0; i < 12; ++i) {
    auto p = i % 3 == 0 ? shared : std::vector<TokenId>{};
    const auto tail = random_prompt(rng, std::uniform_int_distribution<std::size_t>(1, 31)(rng));
    p.insert(p.end(), tail.begin(), tail.end());
    w.push_back({p, std::uniform_int_distribution<std::int32_t>(1, 20)(rng), i % 4 == 3 ? 2 : 1});
  }
  return w;
}

struct Outcome {
  int exact = 0;
  int failed = 0;
};

// Runs the workload in two waves (the second joins running decodes) and
// checks every request: exact greedy tokens, or (only when `may_fail`) the
// step's message with kError on every sample still running then. Then the pool must be whole.
Outcome run_and_check(Fixture& f, bool may_fail, const std::string& label) {
  const std::vector<Planned> w = workload();
  std::vector<std::shared_ptr<OutputChannel>> ch(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (i == w.size() / 2)
      for (int s = 0; s < 3; ++s) f.engine.step();
    ch[i] = f.engine.add_request(request(i + 1, w[i].prompt, w[i].max_tokens, w[i].n));
  }
  f.engine.run_until_idle();
  Outcome o;
  for (std::size_t i = 0; i < w.size(); ++i) {
    EXPECT_TRUE(ch[i]->finished()) << label << " request " << i;
    const auto items = ch[i]->drain();
    const auto samples = collect(items, w[i].n);
    if (!items.empty() && !items.back().error.empty()) {
      EXPECT_TRUE(may_fail) << label << " request " << i << ": " << items.back().error;
      EXPECT_EQ(items.back().error, "engine step failed: injected runner failure");
      // A sample that had already ended (n = 2) keeps its exact tokens.
      int errors = 0;
      for (const SampleResult& s : samples) {
        if (s.finish == FinishReason::kError) {
          ++errors;
        } else {
          EXPECT_EQ(s.finish, FinishReason::kLength) << label;
          EXPECT_EQ(s.tokens, fake_greedy(w[i].prompt, w[i].max_tokens)) << label;
        }
      }
      EXPECT_GE(errors, 1) << label << " request " << i;
      ++o.failed;
      continue;
    }
    for (const SampleResult& s : samples) {
      EXPECT_EQ(s.tokens, fake_greedy(w[i].prompt, w[i].max_tokens)) << label << " request " << i;
      EXPECT_EQ(s.finish, FinishReason::kLength) << label << " request " << i;
    }
    ++o.exact;
  }
  const EngineStats st = f.engine.stats();
  EXPECT_EQ(st.kv_blocks_used, 0) << label;
  EXPECT_EQ(st.num_running + st.num_waiting, 0) << label;
  EXPECT_FALSE(f.engine.has_unfinished()) << label;
  EXPECT_TRUE(f.runner.errors().empty()) << label << ": " << f.runner.errors().front();
  return o;
}

TEST(EngineFaults, StepFailureAtEveryStepOfARun) {
  int steps = 0;
  {
    Fixture reference(/*blocks=*/40);  // tight: preemption happens too
    const Outcome o = run_and_check(reference, false, "reference");
    EXPECT_EQ(o.exact, 12);
    steps = reference.runner.executes();
  }
  ASSERT_GT(steps, 10);
  for (int k = 1; k <= steps; ++k) {
    Fixture f(40);
    f.runner.fail_on(k);
    const Outcome o = run_and_check(f, true, "fail at step " + std::to_string(k));
    EXPECT_GE(o.failed, 1) << "step " << k << " had no request to fail";
    EXPECT_EQ(o.exact + o.failed, 12);
    // The engine goes on serving after the fault.
    auto again = f.engine.add_request(request(100, {5, 6, 7}, 4));
    f.engine.run_until_idle();
    EXPECT_EQ(collect(again->drain(), 1)[0].tokens, fake_greedy({5, 6, 7}, 4)) << k;
  }
}

TEST(EngineFaults, PoolExhaustedAtEveryPointOfAdmissionAndGrowth) {
  // The largest request needs 40 + 20 positions = 15 blocks of 4; n = 2
  // shares the prompt's blocks and grows two tails.
  std::int64_t preemptions = 0;
  for (std::int32_t blocks = 17; blocks <= 90; ++blocks) {
    Fixture f(blocks);
    const Outcome o = run_and_check(f, false, std::to_string(blocks) + " blocks");
    EXPECT_EQ(o.exact, 12);
    preemptions += f.engine.stats().num_preemptions;
  }
  EXPECT_GT(preemptions, 0);  // the small pools did run out mid-run
}

TEST(EngineFaults, StalledEngineTurnsUnhealthyAndRecovers) {
  Fixture f;
  EngineLoop loop(f.engine, nullptr, /*stall_seconds=*/0.2);
  EngineClient& client = loop;
  EXPECT_TRUE(client.healthy());
  f.runner.pause(true);  // the next step blocks inside the model
  auto ch = client.submit(client.limits().admit(request(1, {3, 4, 5}, 6), 0));
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (client.healthy() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(client.healthy());
  f.runner.pause(false);
  const auto r = collect(ch->wait_all(), 1);
  EXPECT_EQ(r[0].tokens, fake_greedy({3, 4, 5}, 6));
  EXPECT_TRUE(client.healthy());
}

}  // namespace
}  // namespace folio::engine::testing
