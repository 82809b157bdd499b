// LLMEngine against the real model: greedy equals the model's own decoding
// through a contiguous cache; batch invariance over a randomized mix (with
// chunked prefill); prefix-cache hits and preemption change nothing.
#include <gtest/gtest.h>

#include <random>

#include "engine_fixture.h"
#include "model/contiguous_kv_cache.h"
#include "sampling/draw.h"

namespace folio::engine::testing {
namespace {

// Greedy continuation computed straight from the model: whole prompt in one
// forward, then one token per forward, through the contiguous f32 cache.
std::vector<TokenId> reference_greedy(const std::vector<TokenId>& prompt, std::int32_t n) {
  const Loaded& m = smollm();
  model::ContiguousKvCache kv(m.model.config(), 1, prompt.size() + static_cast<std::size_t>(n));
  model::Workspace ws;
  kernels::ThreadPool pool(2);
  model::Batch b;
  for (std::size_t i = 0; i < prompt.size(); ++i)
    b.add(prompt[i], static_cast<std::int32_t>(i), 0, i + 1 == prompt.size());
  std::vector<TokenId> out;
  auto logits = m.model.forward(b, kv, ws, pool);
  while (true) {
    out.push_back(sampling::argmax(logits));
    if (static_cast<std::int32_t>(out.size()) == n) return out;
    b.clear();
    b.add(out.back(), static_cast<std::int32_t>(prompt.size() + out.size() - 1), 0, true);
    logits = m.model.forward(b, kv, ws, pool);
  }
}

struct Job {
  std::vector<TokenId> prompt;
  std::int32_t max_tokens;
};

std::vector<TokenId> run_alone(const EngineConfig& c, const Job& j) {
  auto e = make_engine(c);
  auto ch = e->add_request(req(1, j.prompt, greedy(j.max_tokens)));
  e->run_until_idle();
  auto r = collect(ch->drain(), 1);
  EXPECT_EQ(r[0].finish, FinishReason::kLength);
  return r[0].tokens;
}

// All jobs in one engine; the second half arrives after a few steps, so new
// prompts (chunked) join running decodes.
std::vector<std::vector<TokenId>> run_batched(LLMEngine& e, const std::vector<Job>& jobs) {
  std::vector<std::shared_ptr<OutputChannel>> chans;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (i == jobs.size() / 2)
      for (int s = 0; s < 3; ++s) e.step();
    chans.push_back(e.add_request(req(100 + i, jobs[i].prompt, greedy(jobs[i].max_tokens))));
  }
  e.run_until_idle();
  std::vector<std::vector<TokenId>> out;
  for (auto& ch : chans) {
    EXPECT_TRUE(ch->finished());
    out.push_back(collect(ch->drain(), 1)[0].tokens);
  }
  return out;
}

std::vector<Job> random_jobs(std::uint32_t seed, int n) {
  std::mt19937 rng(seed);
  std::vector<Job> jobs;
  for (int i = 0; i < n; ++i) {
    const auto len = std::uniform_int_distribution<std::size_t>(3, 45)(rng);
    jobs.push_back({random_prompt(seed * 100 + static_cast<std::uint32_t>(i), len),
                    std::uniform_int_distribution<std::int32_t>(2, 10)(rng)});
  }
  return jobs;
}

TEST(LLMEngine, GreedyAloneEqualsModelDecodingThroughContiguousCache) {
  const Loaded& m = smollm();
  EngineConfig c = small_config();
  c.kv_cache_dtype = kernels::KvDtype::kF32;  // the contiguous cache is f32
  c.max_num_batched_tokens = 16;              // the prompt is chunked: 3 prefill steps
  const auto prompt = m.tok.encode("The capital of France is", {.add_special = true});
  const Job job{prompt, 12};
  auto e = make_engine(c);
  auto ch = e->add_request(req(7, prompt, greedy(12)));
  e->run_until_idle();
  const auto r = collect(ch->drain(), 1);
  EXPECT_EQ(r[0].tokens, reference_greedy(prompt, 12));
  EXPECT_EQ(r[0].finish, FinishReason::kLength);
}

TEST(LLMEngine, BatchInvariantGreedyOverRandomizedMix) {
  const auto jobs = random_jobs(11, 7);
  EngineConfig c = small_config();
  c.enable_prefix_caching = false;
  auto e = make_engine(c);
  const auto batched = run_batched(*e, jobs);
  for (std::size_t i = 0; i < jobs.size(); ++i)
    EXPECT_EQ(batched[i], run_alone(c, jobs[i])) << "request " << i;
  EXPECT_EQ(e->stats().kv_blocks_used, 0);
}

// int8 K/V (quantized per token row, so a row's bytes never depend on its
// batch): batch invariance holds exactly as with f16, with chunked prefill
// and decodes mixed, and the blocks all come back.
TEST(LLMEngine, Int8KvCacheIsBatchInvariant) {
  const auto jobs = random_jobs(23, 6);
  EngineConfig c = small_config();
  c.enable_prefix_caching = false;
  c.kv_cache_dtype = kernels::KvDtype::kI8;
  auto e = make_engine(c);
  const auto batched = run_batched(*e, jobs);
  for (std::size_t i = 0; i < jobs.size(); ++i)
    EXPECT_EQ(batched[i], run_alone(c, jobs[i])) << "request " << i;
  EXPECT_EQ(e->stats().kv_blocks_used, 0);
}

TEST(LLMEngine, PrefixCacheHitsGiveColdOutputs) {
  const auto system = random_prompt(5, 37);  // 9 full blocks of 4 + 1 token
  std::vector<Job> jobs;
  for (std::uint32_t i = 0; i < 3; ++i) {
    auto p = system;
    const auto tail = random_prompt(50 + i, 3 + i);
    p.insert(p.end(), tail.begin(), tail.end());
    jobs.push_back({p, 6});
  }
  EngineConfig cold = small_config();
  cold.enable_prefix_caching = false;
  EngineConfig warm = small_config();
  auto e = make_engine(warm);
  // Sequentially: the first fills the cache, the next ones hit it.
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    auto ch = e->add_request(req(i + 1, jobs[i].prompt, greedy(jobs[i].max_tokens)));
    e->run_until_idle();
    const auto items = ch->drain();
    ASSERT_FALSE(items.empty());
    if (i > 0) {
      EXPECT_EQ(items.back().num_cached_tokens, 36) << "request " << i;
    }
    EXPECT_EQ(collect(items, 1)[0].tokens, run_alone(cold, jobs[i])) << "request " << i;
  }
  const EngineStats s = e->stats();
  EXPECT_EQ(s.prefix_cache_hits, 72);
  EXPECT_GT(s.prefix_cache_queries, s.prefix_cache_hits);
}

TEST(LLMEngine, PreemptionUnderTinyKvBudgetKeepsOutputs) {
  const auto jobs = random_jobs(23, 5);
  EngineConfig tiny = small_config();
  tiny.max_model_len = 64;
  // 16 blocks of 4 tokens: each job fits alone (<= 55 positions), not all at once.
  tiny.kv_cache_memory = 16 * static_cast<std::int64_t>(PagedKvCache::bytes_per_block(
                                  smollm().model.config(), tiny.block_size, tiny.kv_cache_dtype));
  auto e = make_engine(tiny);
  ASSERT_EQ(e->num_kv_blocks(), 16);
  const auto batched = run_batched(*e, jobs);
  EXPECT_GT(e->stats().num_preemptions, 0);
  EngineConfig roomy = small_config();
  roomy.enable_prefix_caching = false;
  for (std::size_t i = 0; i < jobs.size(); ++i)
    EXPECT_EQ(batched[i], run_alone(roomy, jobs[i])) << "request " << i;
}

}  // namespace
}  // namespace folio::engine::testing

namespace folio::engine::testing {
namespace {

// Speculative decoding on the real model: n-gram drafts verified K + 1 rows
// at a time give exactly the tokens of plain decoding (greedy), alone and
// batched, because a row's logits do not depend on the rows beside it. The
// prompts repeat themselves, so drafts are proposed and many accepted.
TEST(LLMEngine, NgramSpeculationIsTokenIdenticalToPlainDecoding) {
  const Loaded& m = smollm();
  std::vector<Job> jobs;
  const char* texts[] = {
      "one two three four five six seven eight nine ten, one two three four five six",
      "The cat sat on the mat. The dog sat on the log. The cat sat on the",
      "def add(a, b):\n    return a + b\n\ndef add3(a, b, c):\n    return a + b + c\n\ndef",
      "red green blue red green blue red green blue red green",
  };
  for (const char* t : texts) jobs.push_back({m.tok.encode(t, {.add_special = true}), 24});
  for (const Job& j : random_jobs(31, 3)) jobs.push_back(j);  // drafts rarely right
  EngineConfig plain = small_config();
  EngineConfig spec = plain;
  spec.speculative = spec::parse_speculative_config(
      R"({"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_min": 1,)"
      R"( "prompt_lookup_max": 3})");
  auto a = make_engine(plain);
  auto b = make_engine(spec);
  const auto want = run_batched(*a, jobs);
  const auto got = run_batched(*b, jobs);
  for (std::size_t i = 0; i < jobs.size(); ++i) EXPECT_EQ(got[i], want[i]) << "request " << i;
  for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(run_alone(spec, jobs[i]), want[i]);
  const EngineStats st = b->stats();
  EXPECT_GT(st.spec_num_drafts, 10u);
  EXPECT_GT(st.spec_num_accepted_tokens, 20u);
  EXPECT_LT(st.num_steps, a->stats().num_steps);
  EXPECT_EQ(st.kv_blocks_used, 0);
}

}  // namespace
}  // namespace folio::engine::testing

namespace folio::engine::testing {
namespace {

// Self-speculation on the real model: the target's own first and last
// layers draft over its KV cache (lookahead slots), and greedy outputs are
// those of plain decoding, alone and batched.
TEST(LLMEngine, LayerSkipSpeculationIsTokenIdenticalToPlainDecoding) {
  const Loaded& m = smollm();
  std::vector<Job> jobs;
  for (const char* t : {"one two three four five six seven eight nine ten, one two three four",
                        "The cat sat on the mat. The dog sat on the log. The cat sat on the"})
    jobs.push_back({m.tok.encode(t, {.add_special = true}), 20});
  for (const Job& j : random_jobs(37, 3)) jobs.push_back(j);
  EngineConfig plain = small_config();
  auto a = make_engine(plain);
  const auto want = run_batched(*a, jobs);
  EngineConfig spec = plain;
  spec.speculative = spec::parse_speculative_config(
      R"({"method": "layer_skip", "num_speculative_tokens": 3, "num_layers": 24})");
  auto b = std::make_unique<RealEngineWith>(spec);
  const auto got = run_batched(*b, jobs);
  for (std::size_t i = 0; i < jobs.size(); ++i) EXPECT_EQ(got[i], want[i]) << "request " << i;
  const EngineStats st = b->stats();
  EXPECT_GT(st.spec_num_drafts, 10u);
  EXPECT_GT(st.spec_num_accepted_tokens, 5u);
  EXPECT_EQ(st.kv_blocks_used, 0);
  EXPECT_EQ(b->runner.draft_layers(), 24u);
}

}  // namespace
}  // namespace folio::engine::testing
