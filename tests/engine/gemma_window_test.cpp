// tests/engine/gemma_window_test.cpp: Gemma 3 270M (layers 5, 11, 17 global,
// the others a 512-position window) through the paged engine, whose sliding
// layer groups release every block wholly before their window
// (kv/kv_groups.h). Checked against the model's own greedy decoding through
// a contiguous f32 cache holding every position (greedy_reference.h):
//   - a prompt of 1,300 tokens in chunks of 256, then decoding: identical
//     tokens, while the pool holds far fewer blocks than keeping every
//     position would (a budget that could not even admit the request
//     without the window saving);
//   - a second prompt sharing 1,200 tokens: a prefix hit that needs only the
//     window's blocks of the sliding groups, identical tokens again;
//   - a batch of the two with an n = 2 request: batch invariance.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "engine_fixture.h"
#include "greedy_reference.h"

namespace folio::engine::testing {
namespace {

const Loaded& gemma() {
  static const std::unique_ptr<Loaded> loaded = load_model("gemma-3-270m-q4_k_m.gguf");
  return *loaded;
}

struct GemmaRunner {
  PagedModelRunner runner{gemma().model, 2};
};
struct GemmaEngine : GemmaRunner, LLMEngine {
  explicit GemmaEngine(const EngineConfig& c) : LLMEngine(runner, gemma().eos, c) {}
};

constexpr std::int32_t kBlock = 16;
constexpr std::int32_t kChunk = 256;

EngineConfig window_config(std::int64_t blocks) {
  return window_test_config(gemma().model, blocks, 2048, kChunk, kBlock);
}

// Runs the engine to idle, returning the largest number of blocks in use.
std::int32_t run_tracking_peak(LLMEngine& e) {
  std::int32_t peak = 0;
  while (e.step()) peak = std::max(peak, e.scheduler().kv().stats().blocks_used);
  return peak;
}

TEST(GemmaWindowKv, LongPromptMatchesTheFullCacheInAPoolTooSmallForIt) {
  const Loaded& m = gemma();
  const auto groups = PagedModelRunner(m.model, 1).kv_groups();
  ASSERT_EQ(groups.size(), 6u);  // one full group, five of window 512
  ASSERT_EQ(groups[1].window, 512);
  const auto prompt = random_prompt(3, 1300);
  const std::int32_t n_out = 8;
  const std::int64_t positions = 1300 + n_out - 1;
  const std::int64_t all = 6 * ((positions + kBlock - 1) / kBlock);  // every position kept
  const std::int64_t windowed = kv::max_blocks_per_seq(groups, kBlock, positions, kChunk);
  ASSERT_LT(windowed * 10, all * 7);  // the window saves > 30 % even at this length
  auto e = std::make_unique<GemmaEngine>(window_config(windowed));
  ASSERT_LT(e->num_kv_blocks(), all);  // could not admit it without the saving
  auto ch = e->add_request(req(1, prompt, greedy(n_out)));
  const std::int32_t peak = run_tracking_peak(*e);
  EXPECT_LE(peak, windowed);
  const auto r = collect(ch->drain(), 1);
  EXPECT_EQ(r[0].tokens, greedy_after(m.model, prompt, n_out, 2));
  EXPECT_EQ(e->stats().kv_blocks_used, 0);
  std::printf(
      "1,300-token prompt + %d tokens: peak %d blocks of %d-position, 3-layer pages "
      "(every position kept: %lld)\n",
      n_out, peak, kBlock, static_cast<long long>(all));

  // Shares 1,200 tokens (75 blocks): the hit needs group 0's 75 blocks and
  // each window group's last 32; the tokens equal the reference again.
  auto second = std::vector<TokenId>(prompt.begin(), prompt.begin() + 1200);
  const auto tail = random_prompt(9, 90);
  second.insert(second.end(), tail.begin(), tail.end());
  auto ch2 = e->add_request(req(2, second, greedy(n_out)));
  e->run_until_idle();
  const auto items = ch2->drain();
  ASSERT_FALSE(items.empty());
  EXPECT_EQ(items.back().num_cached_tokens, 1200);
  EXPECT_EQ(collect(items, 1)[0].tokens, greedy_after(m.model, second, n_out, 2));
}

TEST(GemmaWindowKv, BatchedWithForksEqualsEachAlone) {
  const auto a = random_prompt(21, 900);
  const auto b = random_prompt(22, 700);
  EngineConfig c = window_config(1200);
  c.kv_cache_dtype = kernels::KvDtype::kF16;
  c.enable_prefix_caching = false;
  const auto alone = [&](const std::vector<TokenId>& p) {
    GemmaEngine e(c);
    auto ch = e.add_request(req(1, p, greedy(6)));
    e.run_until_idle();
    return collect(ch->drain(), 1)[0].tokens;
  };
  GemmaEngine e(c);
  auto ca = e.add_request(req(1, a, greedy(6), 2));
  auto cb = e.add_request(req(2, b, greedy(6)));
  e.run_until_idle();
  const auto ra = collect(ca->drain(), 2);
  const auto want_a = alone(a);
  EXPECT_EQ(ra[0].tokens, want_a);
  EXPECT_EQ(ra[1].tokens, want_a);  // greedy: both samples agree
  EXPECT_EQ(collect(cb->drain(), 1)[0].tokens, alone(b));
  EXPECT_EQ(e.stats().kv_blocks_used, 0);
}

}  // namespace
}  // namespace folio::engine::testing
