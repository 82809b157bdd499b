// LLMEngine API behaviour on the real model: abort frees blocks at once,
// n > 1 seeded samples, stop strings (the OutputProcessor + finish_sample)
// never leak, impossible requests are rejected with the limit named, and the
// background EngineLoop. The same behaviours with no model are in
// engine_core_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>

#include "engine/engine_loop.h"
#include "engine/output_processor.h"
#include "engine_fixture.h"

namespace folio::engine::testing {
namespace {

TEST(LLMEngineApi, AbortFreesBlocksInTheSameStep) {
  auto e = make_engine(small_config());
  auto a = e->add_request(req(1, random_prompt(1, 30), greedy(40)));
  auto b = e->add_request(req(2, random_prompt(2, 20), greedy(40)));
  for (int i = 0; i < 3; ++i) e->step();
  const std::int32_t before = e->stats().kv_blocks_used;
  ASSERT_GT(before, 0);
  ASSERT_TRUE(e->abort(RequestId{1}));
  EXPECT_FALSE(e->abort(RequestId{1}));
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
  auto ch = e->add_request(req(1, smollm().tok.encode("Once upon a time"), p, n));
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

// Greedy text of a prompt, rendered by the OutputProcessor; then the same
// request with a stop string from the middle of that text: the stream never
// shows more than the text before it, the sample ends there (kStop,
// stop_reason), and finish_sample frees its blocks.
std::string render(LLMEngine& e, RequestId id, const std::vector<TokenId>& prompt,
                   const sampling::SamplingParams& params, std::string* stop_reason = nullptr,
                   const std::string& must_prefix = {}) {
  OutputProcessor out(smollm().tok, params, 1);
  auto ch = e.add_request(req(id.value(), prompt, params));
  std::string streamed;
  while (!out.finished()) {
    EXPECT_TRUE(e.step() || ch->finished());
    for (const RequestOutput& o : ch->drain())
      for (const TextDelta& d : out.apply(o)) {
        if (d.stop_string_hit) {
          EXPECT_TRUE(e.finish_sample(id, d.index));
          if (stop_reason != nullptr) *stop_reason = d.stop_reason;
        }
        streamed += d.text;
        if (!must_prefix.empty()) {
          // Never more than the final text: no stop-string prefix went out early.
          EXPECT_EQ(must_prefix.compare(0, streamed.size(), streamed), 0) << streamed;
        }
      }
  }
  EXPECT_FALSE(e.has_unfinished());
  return streamed;
}

TEST(LLMEngineApi, StopStringCutsTextAndNeverLeaksAPrefix) {
  const auto prompt = smollm().tok.encode("The capital of France is", {.add_special = true});
  auto e = make_engine(small_config());
  const std::string text = render(*e, RequestId{2}, prompt, greedy(16));
  ASSERT_GE(text.size(), 8u);
  const std::string stop = text.substr(text.size() / 2, 3);
  const std::string expected = text.substr(0, text.find(stop));
  auto params = greedy(16);
  params.stop = {stop};
  std::string reason;
  EXPECT_EQ(render(*e, RequestId{3}, prompt, params, &reason, expected), expected);
  EXPECT_EQ(reason, stop);
  EXPECT_EQ(e->stats().kv_blocks_used, 0);
}

TEST(LLMEngineApi, ImpossibleRequestsFailWithTheLimitNamed) {
  EngineConfig c = small_config();
  c.max_model_len = 64;
  c.kv_cache_memory = 4 * static_cast<std::int64_t>(PagedKvCache::bytes_per_block(
                              smollm().model.config(), c.block_size, c.kv_cache_dtype));
  auto e = make_engine(c);
  auto expect_error = [&](EngineRequest r, const std::string& needle) {
    try {
      e->add_request(std::move(r));
      ADD_FAILURE() << "accepted; expected an error naming " << needle;
    } catch (const Error& err) {
      EXPECT_NE(std::string(err.what()).find(needle), std::string::npos) << err.what();
    }
  };
  expect_error(req(1, random_prompt(1, 60), greedy(10)), "maximum context length is 64 tokens");
  expect_error(req(2, random_prompt(1, 10), greedy(20)), "--kv-cache-memory");
  expect_error(req(3, {}, greedy(2)), "empty");
  expect_error(req(4, {999999}, greedy(2)), "out of vocabulary");
  expect_error(req(5, random_prompt(1, 4), greedy(2), 0), "n = 0");
  auto bad = greedy(2);
  bad.top_p = 7;
  expect_error(req(6, random_prompt(1, 4), bad), "top_p");
  EXPECT_FALSE(e->has_unfinished());
  auto ok = e->add_request(req(7, random_prompt(1, 4), greedy(2)));
  expect_error(req(7, random_prompt(1, 4), greedy(2)), "already in use");
  e->run_until_idle();
  EXPECT_TRUE(ok->finished());
}

TEST(EngineLoop, ServesRequestsFromOtherThreadsAndAborts) {
  auto e = make_engine(small_config());
  EngineLoop loop(*e);
  const auto prompt = random_prompt(3, 12);
  const auto submit = [&](EngineRequest r) {
    return loop.submit(loop.limits().admit(std::move(r), 0));
  };
  std::shared_ptr<OutputChannel> a, b;
  std::thread t1([&] { a = submit(req(1, prompt, greedy(6))); });
  std::thread t2([&] { b = submit(req(2, prompt, greedy(200))); });
  t1.join();
  t2.join();
  EXPECT_THROW(submit(req(3, {}, greedy(2))), Error);
  const auto ra = collect(a->wait_all(), 1);
  EXPECT_EQ(ra[0].tokens.size(), 6u);
  loop.abort(RequestId{2});
  const auto rb = collect(b->wait_all(), 1);
  EXPECT_EQ(rb[0].finish, FinishReason::kAbort);
  const std::size_t common = std::min<std::size_t>(6, rb[0].tokens.size());
  EXPECT_TRUE(
      std::equal(rb[0].tokens.begin(), rb[0].tokens.begin() + common, ra[0].tokens.begin()));
  EXPECT_EQ(loop.num_errors(), 0);
  for (int i = 0; i < 100 && loop.stats().kv_blocks_used != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(loop.stats().kv_blocks_used, 0);
}

}  // namespace
}  // namespace folio::engine::testing
