// tests/engine/engine_pool_test.cpp: mean pooling through the engine core with
// no model (tests/engine/fake_model_runner.h: a token's hidden state is
// (token, position)): the mean covers every prompt position once, across
// chunks, a prefix already cached, preemption and a batch of other requests;
// admission refuses what a pooling request cannot be; an abort returns none.
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "core_fixture.h"

namespace folio::engine::testing {
namespace {

// Eight seats and chunks of 16: prompts of 40 span three steps.
EngineConfig pool_config(std::int32_t blocks) {
  return config(blocks, /*max_num_seqs=*/8, /*max_num_batched_tokens=*/16);
}

// A greedy request of max_tokens tokens; `pool` asks for the prompt's mean.
EngineRequest pool_request(std::uint64_t id, std::vector<TokenId> prompt, std::int32_t max_tokens,
                           bool pool) {
  EngineRequest r = req(id, std::move(prompt), greedy(max_tokens));
  r.pool = pool;
  return r;
}

// The mean of (token, position) over the prompt: what the fake pools.
std::vector<float> expected_mean(const std::vector<TokenId>& prompt) {
  double tokens = std::accumulate(prompt.begin(), prompt.end(), 0.0);
  const double n = static_cast<double>(prompt.size());
  return {static_cast<float>(tokens / n), static_cast<float>((n - 1) / 2)};
}

struct Result {
  std::vector<float> pooled;
  std::vector<TokenId> tokens;
  std::int32_t cached = -1;
  bool finished = false;
};

Result drain(OutputChannel& ch) {
  Result r;
  for (const RequestOutput& o : ch.drain()) {
    for (const SampleDelta& d : o.samples)
      r.tokens.insert(r.tokens.end(), d.token_ids.begin(), d.token_ids.end());
    r.cached = o.num_cached_tokens;
    if (o.finished) {
      r.finished = true;
      r.pooled = o.pooled;
    } else {
      EXPECT_TRUE(o.pooled.empty()) << "pooled before the last item";
    }
  }
  return r;
}

TEST(EnginePool, MeanOverEveryPromptPositionAcrossChunks) {
  FakeModelRunner runner;
  LLMEngine engine(runner, {kFakeVocab - 1}, pool_config(64));
  std::mt19937 rng(3);
  const auto prompt = random_prompt(rng, 45);  // three chunks of 16
  auto ch = engine.add_request(pool_request(1, prompt, 1, true));
  engine.run_until_idle();
  const Result r = drain(*ch);
  ASSERT_TRUE(r.finished);
  ASSERT_EQ(r.pooled.size(), 2u);
  const auto want = expected_mean(prompt);
  EXPECT_FLOAT_EQ(r.pooled[0], want[0]);
  EXPECT_FLOAT_EQ(r.pooled[1], want[1]);
  EXPECT_EQ(r.tokens, fake_greedy(prompt, 1));  // and its one token, as a generation's
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
}

// A cached prefix is computed again for a pooling request (all of it is
// pooled), and what the pooling request computed serves the next generation.
TEST(EnginePool, TakesNoPrefixHitButFillsTheCache) {
  FakeModelRunner runner;
  LLMEngine engine(runner, {kFakeVocab - 1}, pool_config(64));
  std::mt19937 rng(4);
  const auto prompt = random_prompt(rng, 33);
  auto gen = engine.add_request(pool_request(1, prompt, 3, false));
  engine.run_until_idle();
  ASSERT_TRUE(drain(*gen).finished);
  const auto queried = engine.stats().prefix_cache_queries;
  auto pooled = engine.add_request(pool_request(2, prompt, 1, true));
  engine.run_until_idle();
  const Result p = drain(*pooled);
  EXPECT_EQ(p.cached, 0);
  EXPECT_EQ(engine.stats().prefix_cache_queries, queried) << "it queried nothing";
  EXPECT_EQ(p.pooled, expected_mean(prompt));

  auto other = random_prompt(rng, 29);
  auto first = engine.add_request(pool_request(3, other, 1, true));
  engine.run_until_idle();
  ASSERT_TRUE(drain(*first).finished);
  auto after = engine.add_request(pool_request(4, other, 4, false));
  engine.run_until_idle();
  const Result a = drain(*after);
  EXPECT_GT(a.cached, 0) << "the pooling request's blocks should be in the prefix cache";
  EXPECT_EQ(a.tokens, fake_greedy(other, 4));
  EXPECT_TRUE(runner.errors().empty()) << runner.errors().front();
}

// Pooling requests in a crowd of generations through a pool too small for
// all: preempted ones compute again from position 0 and still count each
// position once; the generations are unchanged.
TEST(EnginePool, MeansHoldUnderPreemptionAndBatching) {
  FakeModelRunner runner;
  LLMEngine engine(runner, {kFakeVocab - 1}, pool_config(/*blocks=*/40));
  std::mt19937 rng(5);
  struct Job {
    std::vector<TokenId> prompt;
    bool pool;
    std::int32_t max_tokens;
    std::shared_ptr<OutputChannel> ch;
  };
  std::vector<Job> jobs;
  for (std::uint64_t i = 0; i < 40; ++i) {
    const bool pool = i % 3 == 1;
    const auto len = std::uniform_int_distribution<std::size_t>(2, 60)(rng);
    const std::int32_t max_tokens =
        pool ? 1 : std::uniform_int_distribution<std::int32_t>(1, 30)(rng);
    jobs.push_back({random_prompt(rng, len), pool, max_tokens, nullptr});
    jobs.back().ch = engine.add_request(pool_request(i + 1, jobs.back().prompt, max_tokens, pool));
    if (i % 5 == 0) engine.step();
  }
  engine.run_until_idle();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Result r = drain(*jobs[i].ch);
    ASSERT_TRUE(r.finished) << i;
    EXPECT_EQ(r.tokens, fake_greedy(jobs[i].prompt, jobs[i].max_tokens)) << i;
    if (jobs[i].pool) {
      const auto want = expected_mean(jobs[i].prompt);
      ASSERT_EQ(r.pooled.size(), 2u) << i;
      EXPECT_FLOAT_EQ(r.pooled[0], want[0]) << i;
      EXPECT_FLOAT_EQ(r.pooled[1], want[1]) << i;
    } else {
      EXPECT_TRUE(r.pooled.empty()) << i;
    }
  }
  EXPECT_GT(engine.stats().num_preemptions, 0);
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
  EXPECT_TRUE(runner.errors().empty()) << runner.errors().front();
}

TEST(EnginePool, AdmissionAndAbort) {
  FakeModelRunner runner;
  LLMEngine engine(runner, {kFakeVocab - 1}, pool_config(64));
  auto two = pool_request(1, {5, 6, 7}, 1, true);
  two.n = 2;
  EXPECT_THROW(engine.add_request(two), Error);
  EXPECT_THROW(engine.add_request(pool_request(2, {5, 6, 7}, 4, true)), Error);
  auto unset = pool_request(3, {5, 6, 7}, 1, true);
  unset.params.max_tokens.reset();
  auto ch = engine.add_request(unset);  // max_tokens unset: one
  engine.run_until_idle();
  const Result r = drain(*ch);
  EXPECT_EQ(r.tokens.size(), 1u);
  EXPECT_EQ(r.pooled, expected_mean({5, 6, 7}));

  std::mt19937 rng(6);
  auto aborted = engine.add_request(pool_request(4, random_prompt(rng, 40), 1, true));
  engine.step();
  ASSERT_TRUE(engine.abort(RequestId{4}));
  const Result a = drain(*aborted);
  EXPECT_TRUE(a.finished);
  EXPECT_TRUE(a.pooled.empty());
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
}

// A runner that cannot pool fails the step of a pooling request with an
// error, not a wrong vector.
class NoPoolRunner final : public ModelRunner {
 public:
  std::int32_t vocab_size() const override { return inner.vocab_size(); }
  std::int64_t context_length() const override { return inner.context_length(); }
  std::int64_t kv_bytes_per_block(std::int32_t b, kernels::KvDtype d) const override {
    return inner.kv_bytes_per_block(b, d);
  }
  std::int64_t init_kv(const KvLayout& l) override { return inner.init_kv(l); }
  RunnerOutput execute(const sched::SchedulerOutput& plan) override {
    RunnerOutput o = inner.execute(plan);
    o.pooled = {};
    return o;
  }
  FakeModelRunner inner;
};

TEST(EnginePool, RunnerWithoutPoolingFailsTheRequest) {
  NoPoolRunner runner;
  LLMEngine engine(runner, {kFakeVocab - 1}, pool_config(64));
  auto ch = engine.add_request(pool_request(1, {1, 2, 3, 4}, 1, true));
  engine.run_until_idle();
  const auto items = ch->drain();
  ASSERT_FALSE(items.empty());
  EXPECT_TRUE(items.back().finished);
  EXPECT_NE(items.back().error.find("does not pool"), std::string::npos) << items.back().error;
  EXPECT_TRUE(items.back().pooled.empty());
}

}  // namespace
}  // namespace folio::engine::testing
