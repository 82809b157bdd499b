// tests/engine/attention_window_engine_test.cpp: SmolLM2 (no window of its
// own) through the paged engine under a sink + window policy
// (base/attention_window.h), which releases the blocks between the sinks and
// the window (kv/kv_groups.h). Checked against the model's own greedy
// decoding through a contiguous f32 cache that keeps every position and
// masks by position (greedy_reference.h):
//   - a 700-token prompt in chunks of 64, then decoding, in a pool that
//     could not hold every position: identical tokens, and the blocks in use
//     never exceed the policy's bound;
//   - the same prompt again, in a pool that keeps the released blocks
//     cached: a prefix hit that takes only the sink and window blocks
//     (keyed apart from full attention: a full-attention request gets no
//     hit from them);
//   - a batch mixing a windowed request (n = 2) and a full-attention one:
//     each equals its own reference;
//   - admission refuses sinks beyond the window, naming the field.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "engine_fixture.h"
#include "greedy_reference.h"

namespace folio::engine::testing {
namespace {

constexpr std::int32_t kBlock = 16;
constexpr std::int32_t kChunk = 64;
constexpr AttentionWindow kPolicy{200, 4};

EngineConfig window_config(std::int64_t blocks) {
  return window_test_config(smollm().model, blocks, 1024, kChunk, kBlock);
}

EngineRequest windowed(std::uint64_t id, std::vector<TokenId> prompt, std::int32_t n_out,
                       std::int32_t n = 1) {
  EngineRequest r = req(id, std::move(prompt), greedy(n_out), n);
  r.attention_window = kPolicy;
  return r;
}

TEST(AttentionWindowEngine, LongPromptMatchesTheMaskedReferenceInASmallPool) {
  const Loaded& m = smollm();
  const auto prompt = random_prompt(5, 700);
  const std::int32_t n_out = 8;
  const std::int64_t positions = 700 + n_out - 1;
  const std::int64_t all = (positions + kBlock - 1) / kBlock;
  const std::int64_t bound = kv::max_blocks_per_seq({}, kBlock, positions, kChunk, kPolicy);
  ASSERT_EQ(bound, 1 + (200 - 1 + kChunk + kBlock - 1) / kBlock + 1);
  ASSERT_LT(bound * 2, all);
  auto e = make_engine(window_config(bound + 1));
  ASSERT_LT(e->num_kv_blocks(), all);  // every position would not fit
  auto ch = e->add_request(windowed(1, prompt, n_out));
  std::int32_t peak = 0;
  while (e->step()) peak = std::max(peak, e->scheduler().kv().stats().blocks_used);
  EXPECT_LE(peak, bound);
  const auto want = greedy_after(m.model, prompt, n_out, 2, kPolicy);
  EXPECT_EQ(collect(ch->drain(), 1)[0].tokens, want);
  EXPECT_EQ(e->stats().kv_blocks_used, 0);
  std::printf(
      "700-token prompt + %d tokens under window 200 + 4 sinks: peak %d blocks (every "
      "position kept: %lld)\n",
      n_out, peak, static_cast<long long>(all));

  // In a pool with room to keep the released blocks cached: the same
  // prompt again hits 43 blocks (688 tokens), of which the engine takes only
  // the sink block and the window's; the tokens are the same. (In the small
  // pool above the released middle is reused at once, which breaks the
  // chain a hit walks.)
  auto big = make_engine(window_config(all * 2));
  auto first = big->add_request(windowed(1, prompt, n_out));
  big->run_until_idle();
  EXPECT_EQ(collect(first->drain(), 1)[0].tokens, want);
  auto again = big->add_request(windowed(2, prompt, n_out));
  std::int32_t peak_hit = 0;
  while (big->step()) {
    const kv::KvStats st = big->scheduler().kv().stats();
    peak_hit = std::max(peak_hit, st.blocks_used);
  }
  const auto items = again->drain();
  ASSERT_FALSE(items.empty());
  EXPECT_EQ(items.back().num_cached_tokens, 688);
  EXPECT_EQ(collect(items, 1)[0].tokens, want);
  EXPECT_LE(peak_hit, bound);
  // Full attention never reads blocks computed under the window.
  auto f = big->add_request(req(3, prompt, greedy(1)));
  big->run_until_idle();
  EXPECT_EQ(f->drain().back().num_cached_tokens, 0);
}

TEST(AttentionWindowEngine, MixedBatchEqualsEachAlone) {
  const auto a = random_prompt(31, 500);
  const auto b = random_prompt(32, 420);
  EngineConfig c = window_config(400);
  c.kv_cache_dtype = kernels::KvDtype::kF16;
  c.enable_prefix_caching = false;
  const auto alone = [&](const EngineRequest& r) {
    auto e = make_engine(c);
    auto ch = e->add_request(r);
    e->run_until_idle();
    return collect(ch->drain(), 1)[0].tokens;
  };
  auto e = make_engine(c);
  auto ca = e->add_request(windowed(1, a, 6, 2));
  auto cb = e->add_request(req(2, b, greedy(6)));
  e->run_until_idle();
  const auto ra = collect(ca->drain(), 2);
  const auto want_a = alone(windowed(1, a, 6));
  EXPECT_EQ(ra[0].tokens, want_a);
  EXPECT_EQ(ra[1].tokens, want_a);
  EXPECT_EQ(collect(cb->drain(), 1)[0].tokens, alone(req(2, b, greedy(6))));
  EXPECT_EQ(e->stats().kv_blocks_used, 0);
}

TEST(AttentionWindowEngine, AdmissionChecksThePolicy) {
  auto e = make_engine(window_config(200));
  EngineRequest r = req(1, random_prompt(1, 10), greedy(2));
  r.attention_window = AttentionWindow{8, 9};
  try {
    e->add_request(std::move(r));
    FAIL() << "sinks beyond the window were admitted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("attention_sinks"), std::string::npos) << err.what();
  }
  EngineRequest neg = req(2, random_prompt(1, 10), greedy(2));
  neg.attention_window = AttentionWindow{-1, 0};
  EXPECT_THROW(e->add_request(std::move(neg)), Error);
}

}  // namespace
}  // namespace folio::engine::testing
