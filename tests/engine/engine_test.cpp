// LLMEngine against the real model: greedy equals the model's own decoding
// through a contiguous cache; batch invariance over a randomized mix (with
// chunked prefill); prefix-cache hits and preemption change nothing.
#include <gtest/gtest.h>

#include <random>

#include "engine_fixture.h"
#include "greedy_reference.h"

namespace folio::engine::testing {
namespace {

struct Job {
  std::vector<TokenId> prompt;
  std::int32_t max_tokens;
};

std::vector<TokenId> run_alone(const EngineConfig& c, const Job& j,
                               const model::Model* draft = nullptr) {
  auto e = make_engine(c, draft);
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
  EXPECT_EQ(r[0].tokens, greedy_after(smollm().model, prompt, 12, 2));
  EXPECT_EQ(r[0].finish, FinishReason::kLength);
}

// `jobs` batched give each job's output alone, and the blocks all come back.
void expect_batch_invariant(std::uint32_t seed, kernels::KvDtype dtype) {
  const auto jobs = random_jobs(seed, dtype == kernels::KvDtype::kF16 ? 7 : 6);
  EngineConfig c = small_config();
  c.enable_prefix_caching = false;
  c.kv_cache_dtype = dtype;
  auto e = make_engine(c);
  const auto batched = run_batched(*e, jobs);
  for (std::size_t i = 0; i < jobs.size(); ++i)
    EXPECT_EQ(batched[i], run_alone(c, jobs[i])) << "request " << i;
  EXPECT_EQ(e->stats().kv_blocks_used, 0);
}

TEST(LLMEngine, BatchInvariantGreedyOverRandomizedMix) {
  expect_batch_invariant(11, kernels::KvDtype::kF16);
}

// int8 K/V (quantized per token row, so a row's bytes never depend on its
// batch): batch invariance holds exactly as with f16, with chunked prefill
// and decodes mixed, and the blocks all come back.
TEST(LLMEngine, Int8KvCacheIsBatchInvariant) {
  expect_batch_invariant(23, kernels::KvDtype::kI8);
}

// int4 K/V (Hadamard-rotated rows, 4 bits per value, fp16 scale per 32):
// also quantized per token row, so batch invariance holds exactly too.
TEST(LLMEngine, Int4KvCacheIsBatchInvariant) {
  expect_batch_invariant(29, kernels::KvDtype::kI4);
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

// Speculative decoding on the real model: greedy outputs of `jobs` through an
// engine with `spec_json` equal those of plain decoding, batched and alone
// (the first two jobs), because a row's logits do not depend on the rows
// beside it (K + 1 verification rows included). Returns the speculative
// engine for its counters.
std::unique_ptr<RealEngine> expect_lossless(const std::vector<Job>& jobs, const char* spec_json,
                                            const model::Model* draft = nullptr,
                                            const EngineConfig& plain = small_config()) {
  EngineConfig spec = plain;
  spec.speculative = spec::parse_speculative_config(spec_json);
  auto a = make_engine(plain);
  auto b = make_engine(spec, draft);
  const auto want = run_batched(*a, jobs);
  const auto got = run_batched(*b, jobs);
  for (std::size_t i = 0; i < jobs.size(); ++i) EXPECT_EQ(got[i], want[i]) << "request " << i;
  for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(run_alone(spec, jobs[i], draft), want[i]);
  EXPECT_LT(b->stats().num_steps, a->stats().num_steps);
  EXPECT_EQ(b->stats().kv_blocks_used, 0);
  return b;
}

// Prompts that repeat themselves (drafts proposed, many accepted), then
// random ones (drafts rarely right).
std::vector<Job> repetitive_jobs(const std::vector<const char*>& texts, std::int32_t max_tokens,
                                 std::uint32_t seed) {
  std::vector<Job> jobs;
  for (const char* t : texts)
    jobs.push_back({smollm().tok.encode(t, {.add_special = true}), max_tokens});
  for (const Job& j : random_jobs(seed, 3)) jobs.push_back(j);
  return jobs;
}

TEST(LLMEngine, NgramSpeculationIsTokenIdenticalToPlainDecoding) {
  const auto jobs = repetitive_jobs(
      {"one two three four five six seven eight nine ten, one two three four five six",
       "The cat sat on the mat. The dog sat on the log. The cat sat on the",
       "def add(a, b):\n    return a + b\n\ndef add3(a, b, c):\n    return a + b + c\n\ndef",
       "red green blue red green blue red green blue red green"},
      24, 31);
  const auto b = expect_lossless(jobs, R"({"method": "ngram", "num_speculative_tokens": 4,)"
                                       R"( "prompt_lookup_min": 1, "prompt_lookup_max": 3})");
  EXPECT_GT(b->stats().spec_num_drafts, 10u);
  EXPECT_GT(b->stats().spec_num_accepted_tokens, 20u);
}

// Self-speculation: the target's own first and last layers draft over its
// KV cache (lookahead slots).
TEST(LLMEngine, LayerSkipSpeculationIsTokenIdenticalToPlainDecoding) {
  const auto jobs =
      repetitive_jobs({"one two three four five six seven eight nine ten, one two three four",
                       "The cat sat on the mat. The dog sat on the log. The cat sat on the"},
                      20, 37);
  const auto b = expect_lossless(
      jobs, R"({"method": "layer_skip", "num_speculative_tokens": 3, "num_layers": 24,)"
            R"( "adaptive": false})");  // adaptive would find it does not pay here
  EXPECT_GT(b->stats().spec_num_drafts, 10u);
  EXPECT_GT(b->stats().spec_num_accepted_tokens, 5u);
  EXPECT_EQ(b->runner.draft_layers(), 24u);
}

// A draft model: the same model, through the draft's own K/V in the same
// blocks. Its greedy drafts are the target's own tokens, so every draft is
// accepted: a draft K/V that missed a position, kept a rejected token's or
// lost a prefix-cache hit's would show as a rejection. Jobs share prefixes
// (hits on blocks another request's draft filled), and a tiny pool preempts.
TEST(LLMEngine, DraftModelSpeculationOfTheSameModelAcceptsEveryDraft) {
  const char* shared = "The quick brown fox jumps over the lazy dog. Numbers: one two three";
  std::vector<Job> jobs;
  for (const char* tail : {" four", " five six", " seven", " eight nine ten"}) {
    jobs.push_back({smollm().tok.encode(std::string(shared) + tail, {.add_special = true}), 20});
  }
  for (const Job& j : random_jobs(41, 3)) jobs.push_back(j);
  const char* json = R"({"method": "draft_model", "model": "same", "num_speculative_tokens": 3,)"
                     R"( "draft_p_min": 0, "adaptive": false})";
  const auto b = expect_lossless(jobs, json, &smollm().model);
  EXPECT_GT(b->stats().spec_num_drafts, 20u);
  EXPECT_EQ(b->stats().spec_num_accepted_tokens, b->stats().spec_num_draft_tokens);
  EXPECT_GT(b->stats().prefix_cache_hits, 0);

  EngineConfig tiny = small_config();
  tiny.max_model_len = 64;
  tiny.kv_cache_memory =  // 16 blocks of target + draft K/V
      16 * 2 *
      static_cast<std::int64_t>(PagedKvCache::bytes_per_block(
          smollm().model.config(), tiny.block_size, tiny.kv_cache_dtype));
  std::vector<Job> long_jobs;  // 50 positions each: two of them outgrow the pool
  for (std::uint32_t i = 0; i < 4; ++i) long_jobs.push_back({random_prompt(500 + i, 20), 30});
  const auto c = expect_lossless(long_jobs, json, &smollm().model, tiny);
  EXPECT_EQ(c->num_kv_blocks(), 16);
  EXPECT_GT(c->stats().num_preemptions, 0);
  EXPECT_EQ(c->stats().spec_num_accepted_tokens, c->stats().spec_num_draft_tokens);
}

// A draft that differs from the target (the same weights with 8-bit
// activations): some drafts are rejected and rolled back, outputs stay
// the target's.
TEST(LLMEngine, DraftModelSpeculationIsTokenIdenticalToPlainDecoding) {
  model::LoadOptions eight;
  eight.activation_bits = kernels::ActivationBits::k8;
  const model::Model draft = model::Model::load(*smollm().file, eight);
  const auto jobs =
      repetitive_jobs({"one two three four five six seven eight nine ten, one two three four",
                       "The cat sat on the mat. The dog sat on the log. The cat sat on the"},
                      24, 43);
  const auto b =
      expect_lossless(jobs,
                      R"({"method": "draft_model", "model": "8-bit", "num_speculative_tokens": 4,)"
                      R"( "draft_p_min": 0, "adaptive": false})",
                      &draft);
  EXPECT_GT(b->stats().spec_num_drafts, 10u);
  EXPECT_GT(b->stats().spec_num_accepted_tokens, 10u);
  EXPECT_LT(b->stats().spec_num_accepted_tokens, b->stats().spec_num_draft_tokens);
}

}  // namespace
}  // namespace folio::engine::testing
