// tests/engine/engine_core_test.cpp: the engine core through the model-runner
// seam, with no model (tests/engine/fake_model_runner.h): many requests with
// chunked prefill, prefix hits and preemption give the fake model's own
// greedy tokens; aborts and finish_sample free blocks at once; a failed step
// ends only its plan's requests; n samples; timing; the background loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <thread>

#include "base/timer.h"
#include "core_fixture.h"
#include "engine/engine_loop.h"
#include "engine/llm_engine.h"

namespace folio::engine::testing {
namespace {

// 60 requests arriving in waves (new prompts join running decodes), some
// sharing a 13-token prefix, through a pool too small for all of them: every
// output is the fake model's greedy continuation, computed straight from the
// tokens, and the pool is whole again at the end.
TEST(EngineCore, ManyRequestsWithPreemptionAndPrefixHitsMatchTheModel) {
  Fixture f(/*blocks=*/48);  // 192 positions for 16 seats of up to ~70
  std::mt19937 rng(7);
  const auto shared = random_prompt(rng, 13);
  struct Job {
    std::vector<TokenId> prompt;
    std::int32_t max_tokens;
    std::shared_ptr<OutputChannel> ch;
  };
  std::vector<Job> jobs;
  for (int i = 0; i < 60; ++i) {
    auto p = i % 3 == 0 ? shared : std::vector<TokenId>{};
    const auto tail = random_prompt(rng, std::uniform_int_distribution<std::size_t>(1, 40)(rng));
    p.insert(p.end(), tail.begin(), tail.end());
    jobs.push_back({p, std::uniform_int_distribution<std::int32_t>(1, 24)(rng), nullptr});
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (i % 10 == 0)
      for (int s = 0; s < 3; ++s) f.engine.step();
    jobs[i].ch = f.engine.add_request(request(i + 1, jobs[i].prompt, jobs[i].max_tokens));
  }
  f.engine.run_until_idle();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    ASSERT_TRUE(jobs[i].ch->finished());
    const auto r = collect(jobs[i].ch->drain(), 1);
    EXPECT_EQ(r[0].tokens, fake_greedy(jobs[i].prompt, jobs[i].max_tokens)) << "request " << i;
    EXPECT_EQ(r[0].finish, FinishReason::kLength);
  }
  const EngineStats s = f.engine.stats();
  EXPECT_GT(s.num_preemptions, 0);
  EXPECT_GT(s.prefix_cache_hits, 0);
  EXPECT_EQ(s.kv_blocks_used, 0);
  EXPECT_EQ(s.num_running + s.num_waiting, 0);
  EXPECT_TRUE(f.runner.errors().empty()) << f.runner.errors().front();
}

TEST(EngineCore, AbortFreesBlocksInTheSameStep) {
  Fixture f;
  std::mt19937 rng(1);
  auto a = f.engine.add_request(request(1, random_prompt(rng, 30), 40));
  auto b = f.engine.add_request(request(2, random_prompt(rng, 20), 40));
  for (int i = 0; i < 3; ++i) f.engine.step();
  const std::int32_t before = f.engine.stats().kv_blocks_used;
  ASSERT_GT(before, 0);
  ASSERT_TRUE(f.engine.abort(RequestId{1}));
  EXPECT_FALSE(f.engine.abort(RequestId{1}));
  EXPECT_LT(f.engine.stats().kv_blocks_used, before);
  auto items = a->drain();
  ASSERT_FALSE(items.empty());
  EXPECT_TRUE(items.back().finished);
  EXPECT_EQ(collect(items, 1)[0].finish, FinishReason::kAbort);
  f.engine.run_until_idle();
  EXPECT_EQ(collect(b->drain(), 1)[0].tokens.size(), 40u);
  EXPECT_EQ(f.engine.stats().kv_blocks_used, 0);
}

// The runner throws on the third step: exactly the requests of that plan end
// with kError and the message, their blocks come back, and the engine goes on.
TEST(EngineCore, FailedStepEndsItsPlanAndTheNextStepWorks) {
  Fixture f;
  std::mt19937 rng(2);
  const auto pa = random_prompt(rng, 10), pb = random_prompt(rng, 6);
  auto a = f.engine.add_request(request(1, pa, 20));
  auto b = f.engine.add_request(request(2, pb, 20));
  f.runner.fail_on(3);
  for (int i = 0; i < 3; ++i) f.engine.step();
  for (auto* ch : {&a, &b}) {
    ASSERT_TRUE((*ch)->finished());
    const auto items = (*ch)->drain();
    EXPECT_EQ(items.back().error, "engine step failed: injected runner failure");
    EXPECT_EQ(collect(items, 1)[0].finish, FinishReason::kError);
  }
  EXPECT_EQ(f.engine.stats().kv_blocks_used, 0);
  EXPECT_FALSE(f.engine.has_unfinished());
  auto c = f.engine.add_request(request(3, pa, 12));
  f.engine.run_until_idle();
  EXPECT_EQ(collect(c->drain(), 1)[0].tokens, fake_greedy(pa, 12));
  EXPECT_TRUE(f.runner.errors().empty()) << f.runner.errors().front();
}

// n = 3: before the fork one sequence draws for all three; finish_sample
// before the fork ends sample 2 with no tokens, after it ends sample 1 early
// and frees its blocks; the others run to max_tokens. Greedy samples agree.
TEST(EngineCore, FinishSampleBeforeAndAfterTheFork) {
  Fixture f;
  std::mt19937 rng(3);
  const auto p = random_prompt(rng, 9);
  auto ch = f.engine.add_request(request(1, p, 10, /*n=*/3));
  ASSERT_TRUE(f.engine.finish_sample(RequestId{1}, 2));
  EXPECT_FALSE(f.engine.finish_sample(RequestId{1}, 2));  // already finished
  EXPECT_FALSE(f.engine.finish_sample(RequestId{1}, 3));  // no such sample
  for (int i = 0; i < 20 && collect(ch->drain(), 3)[1].tokens.empty(); ++i)
    f.engine.step();  // until the first tokens: forked
  f.engine.step();
  const std::int32_t before = f.engine.stats().kv_blocks_used;
  ASSERT_TRUE(f.engine.finish_sample(RequestId{1}, 1));
  EXPECT_LT(f.engine.stats().kv_blocks_used, before);
  f.engine.run_until_idle();
  EXPECT_EQ(f.engine.stats().kv_blocks_used, 0);
  EXPECT_TRUE(f.runner.errors().empty()) << f.runner.errors().front();
}

TEST(EngineCore, NSamplesSeededAreReproducibleAndDistinct) {
  const auto run = [](std::uint64_t seed, std::int32_t n) {
    Fixture f;
    std::mt19937 rng(4);
    auto r = request(1, random_prompt(rng, 5), 16, n);
    r.params.temperature = 1.0f;
    r.params.seed = seed;
    auto ch = f.engine.add_request(std::move(r));
    f.engine.run_until_idle();
    return collect(ch->drain(), n);
  };
  const auto a = run(42, 3), b = run(42, 3);
  std::set<std::vector<TokenId>> distinct;
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(a[k].tokens, b[k].tokens);
    EXPECT_EQ(a[k].tokens.size(), 16u);
    distinct.insert(a[k].tokens);
  }
  EXPECT_GE(distinct.size(), 2u);
  EXPECT_EQ(run(42, 1)[0].tokens, a[0].tokens);  // sample 0 of n is the lone request's draw
}

// The consumer's arrival time is honoured: a request that "arrived" 5 s ago
// reports at least 5 s queued; the phases are on the final item only.
TEST(EngineCore, TimingStartsAtTheConsumersArrival) {
  Fixture f;
  std::mt19937 rng(5);
  auto r = request(1, random_prompt(rng, 40), 3);
  r.arrival_time = monotonic_seconds() - 5.0;
  auto ch = f.engine.add_request(std::move(r));
  f.engine.run_until_idle();
  const auto items = ch->drain();
  for (std::size_t i = 0; i + 1 < items.size(); ++i) EXPECT_FALSE(items[i].timing.has_value());
  ASSERT_TRUE(items.back().timing.has_value());
  EXPECT_GE(items.back().timing->queued_s, 5.0);
  EXPECT_GE(items.back().timing->prefill_s, 0.0);
  EXPECT_GE(items.back().timing->decode_s, 0.0);
  EXPECT_EQ(items.back().num_prompt_tokens, 40);
}

TEST(EngineCore, DuplicateLiveIdIsRefusedAndLimitsApply) {
  Fixture f;
  auto ok = f.engine.add_request(request(7, {1, 2, 3}, 2));
  EXPECT_THROW(f.engine.add_request(request(7, {1, 2, 3}, 2)), Error);
  EXPECT_THROW(f.engine.add_request(request(8, {}, 2)), Error);
  EXPECT_THROW(f.engine.add_request(request(9, {kFakeVocab}, 2)), Error);
  f.engine.run_until_idle();
  EXPECT_TRUE(ok->finished());
  // Once finished, the id may be used again.
  auto again = f.engine.add_request(request(7, {1, 2, 3}, 2));
  f.engine.run_until_idle();
  EXPECT_TRUE(again->finished());
}

// EngineLoop is the server's EngineClient: 8 threads submit 25 requests each
// through admit + submit; every output is right, an abort lands, no step
// failed, and the pool is whole.
TEST(EngineLoop, ServesManyThreadsThroughTheClientInterface) {
  Fixture f;
  EngineLoop loop(f.engine);
  EngineClient& client = loop;
  std::vector<std::thread> threads;
  std::vector<std::vector<std::pair<std::vector<TokenId>, std::shared_ptr<OutputChannel>>>> got(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(100 + t);
      for (int i = 0; i < 25; ++i) {
        auto p = random_prompt(rng, std::uniform_int_distribution<std::size_t>(1, 20)(rng));
        const std::uint64_t id =
            100 * static_cast<std::uint64_t>(t) + static_cast<std::uint64_t>(i) + 1;
        auto ch = client.submit(client.limits().admit(request(id, p, 8), monotonic_seconds()));
        got[static_cast<std::size_t>(t)].emplace_back(std::move(p), std::move(ch));
      }
    });
  }
  for (auto& th : threads) th.join();
  for (auto& list : got)
    for (auto& [prompt, ch] : list)
      EXPECT_EQ(collect(ch->wait_all(), 1)[0].tokens, fake_greedy(prompt, 8));
  // An abort lands between steps, however long a step takes.
  f.runner.pause(true);
  auto long_one = client.submit(client.limits().admit(request(9999, {5, 6}, 120), 0));
  client.abort(RequestId{9999});
  f.runner.pause(false);
  const auto r = collect(long_one->wait_all(), 1);
  EXPECT_EQ(r[0].finish, FinishReason::kAbort);
  EXPECT_LT(r[0].tokens.size(), 120u);
  EXPECT_EQ(loop.num_errors(), 0);
  EXPECT_TRUE(client.healthy());
  for (int i = 0; i < 100 && client.stats().kv_blocks_used != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(client.stats().kv_blocks_used, 0);
}

}  // namespace
}  // namespace folio::engine::testing
