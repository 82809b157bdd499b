// LLMEngine API behaviour on the real model: abort frees blocks at once,
// n > 1 seeded samples, stop strings never leak, impossible requests are
// rejected with the limit named, and the background EngineLoop.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>

#include "engine/engine_loop.h"
#include "engine_fixture.h"

namespace folio::engine::testing {
namespace {

TEST(LLMEngineApi, AbortFreesBlocksInTheSameStep) {
  auto e = make_engine(small_config());
  auto a = e->add_request({1, random_prompt(1, 30), greedy(40), 1, 0});
  auto b = e->add_request({2, random_prompt(2, 20), greedy(40), 1, 0});
  for (int i = 0; i < 3; ++i) e->step();
  const std::int32_t before = e->stats().kv_blocks_used;
  ASSERT_GT(before, 0);
  ASSERT_TRUE(e->abort(1));
  EXPECT_FALSE(e->abort(1));
  const std::int32_t after = e->stats().kv_blocks_used;
  EXPECT_LT(after, before);
  auto items = a->drain();
  ASSERT_FALSE(items.empty());
  EXPECT_TRUE(items.back().finished);
  EXPECT_EQ(collect(items, 1)[0].finish, FinishReason::kAbort);
  e->run_until_idle();
  EXPECT_TRUE(b->finished());
  EXPECT_EQ(collect(b->drain(), 1)[0].tokens.size(), 40u);
  EXPECT_EQ(e->stats().kv_blocks_used, 0);
}

std::vector<SampleResult> run_n(std::uint64_t seed, std::int32_t n) {
  auto e = make_engine(small_config());
  sampling::SamplingParams p;
  p.temperature = 1.0f;
  p.seed = seed;
  p.max_tokens = 8;
  p.ignore_eos = true;
  auto ch = e->add_request({1, smollm().tok.encode("Once upon a time"), p, n, 0});
  e->run_until_idle();
  EXPECT_EQ(e->stats().kv_blocks_used, 0);
  return collect(ch->drain(), n);
}

TEST(LLMEngineApi, NSamplesWithSeedAreReproducibleAndDistinct) {
  const auto a = run_n(42, 3), b = run_n(42, 3);
  std::set<std::vector<TokenId>> distinct;
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(a[static_cast<std::size_t>(k)].tokens, b[static_cast<std::size_t>(k)].tokens);
    EXPECT_EQ(a[static_cast<std::size_t>(k)].tokens.size(), 8u);
    EXPECT_EQ(a[static_cast<std::size_t>(k)].finish, FinishReason::kLength);
    distinct.insert(a[static_cast<std::size_t>(k)].tokens);
  }
  EXPECT_GE(distinct.size(), 2u);
  // Sample 0 of n = 3 is the same draw as a lone request with that seed.
  EXPECT_EQ(run_n(42, 1)[0].tokens, a[0].tokens);
}

TEST(LLMEngineApi, StopStringCutsTextAndNeverLeaksAPrefix) {
  const auto prompt = smollm().tok.encode("The capital of France is", {.add_special = true});
  auto e = make_engine(small_config());
  auto ch = e->add_request({2, prompt, greedy(16), 1, 0});
  e->run_until_idle();
  const std::string text = collect(ch->drain(), 1)[0].text;
  ASSERT_GE(text.size(), 8u);
  const std::string stop = text.substr(text.size() / 2, 3);
  const std::string expected = text.substr(0, text.find(stop));
  auto params = greedy(16);
  params.stop = {stop};
  auto sc = e->add_request({3, prompt, params, 1, 0});
  std::string streamed;
  while (e->step()) {
    for (const auto& o : sc->drain())
      for (const auto& d : o.samples) {
        streamed += d.text;
        // Never more than the final text: no stop-string prefix went out early.
        EXPECT_EQ(expected.compare(0, streamed.size(), streamed), 0) << streamed;
        if (d.finish != FinishReason::kNone) {
          EXPECT_EQ(d.finish, FinishReason::kStop);
          EXPECT_EQ(d.stop_reason, stop);
        }
      }
  }
  EXPECT_EQ(streamed, expected);
  EXPECT_TRUE(sc->finished());
}

TEST(LLMEngineApi, ImpossibleRequestsFailWithTheLimitNamed) {
  EngineConfig c = small_config();
  c.max_model_len = 64;
  c.kv_cache_memory = 4 * static_cast<std::int64_t>(PagedKvCache::bytes_per_block(
                               smollm().model.config(), c.block_size, c.kv_cache_dtype));
  auto e = make_engine(c);
  auto expect_error = [&](GenerateRequest r, const std::string& needle) {
    try {
      e->add_request(std::move(r));
      ADD_FAILURE() << "accepted; expected an error naming " << needle;
    } catch (const Error& err) {
      EXPECT_NE(std::string(err.what()).find(needle), std::string::npos) << err.what();
    }
  };
  expect_error({1, random_prompt(1, 60), greedy(10), 1, 0}, "--max-model-len");
  expect_error({2, random_prompt(1, 10), greedy(20), 1, 0}, "--kv-cache-memory");
  expect_error({3, {}, greedy(2), 1, 0}, "empty");
  expect_error({4, {999999}, greedy(2), 1, 0}, "vocabulary");
  expect_error({5, random_prompt(1, 4), greedy(2), 0, 0}, "n = 0");
  auto bad = greedy(2);
  bad.top_p = 7;
  expect_error({6, random_prompt(1, 4), bad, 1, 0}, "top_p");
  EXPECT_FALSE(e->has_unfinished());
  auto ok = e->add_request({7, random_prompt(1, 4), greedy(2), 1, 0});
  expect_error({7, random_prompt(1, 4), greedy(2), 1, 0}, "already in use");
  e->run_until_idle();
  EXPECT_TRUE(ok->finished());
}

TEST(EngineLoop, ServesRequestsFromOtherThreadsAndAborts) {
  auto e = make_engine(small_config());
  EngineLoop loop(*e);
  const auto prompt = random_prompt(3, 12);
  std::shared_ptr<OutputChannel> a, b;
  std::thread t1([&] { a = loop.add_request({1, prompt, greedy(6), 1, 0}); });
  std::thread t2([&] { b = loop.add_request({2, prompt, greedy(200), 1, 0}); });
  t1.join();
  t2.join();
  EXPECT_THROW(loop.add_request({3, {}, greedy(2), 1, 0}), Error);
  const auto ra = collect(a->wait_all(), 1);
  EXPECT_EQ(ra[0].tokens.size(), 6u);
  loop.abort(2);
  const auto rb = collect(b->wait_all(), 1);
  EXPECT_EQ(rb[0].finish, FinishReason::kAbort);
  const std::size_t common = std::min<std::size_t>(6, rb[0].tokens.size());
  EXPECT_TRUE(std::equal(rb[0].tokens.begin(), rb[0].tokens.begin() + common, ra[0].tokens.begin()));
  EXPECT_EQ(loop.num_errors(), 0);
  for (int i = 0; i < 100 && loop.stats().kv_blocks_used != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(loop.stats().kv_blocks_used, 0);
}

}  // namespace
}  // namespace folio::engine::testing
