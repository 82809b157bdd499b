// KvCacheManager under a sequence's sink + window policy
// (base/attention_window.h): every group the policy narrows keeps its sink
// blocks and releases exactly the blocks between them and the window of the
// step's first query; memory stays flat however long the sequence grows; a
// model-defined window narrower than the policy keeps its own rule; prefix
// hits under the policy need only the sink and window blocks.
#include <gtest/gtest.h>

#include <algorithm>

#include "kv/kv_cache_manager.h"
#include "seq_tokens.h"

namespace folio::kv {
namespace {

using V = std::vector<BlockId>;

std::int32_t held(const BlockTable& t) {
  return static_cast<std::int32_t>(
      std::count_if(t.blocks.begin(), t.blocks.end(), [](BlockId b) { return b != kNoBlock; }));
}

TEST(AttentionWindowPolicy, EffectiveWindowPerLayer) {
  const AttentionWindow p{10, 4};
  EXPECT_EQ(effective_window(0, p), p);                         // full layer: the policy
  EXPECT_EQ(effective_window(6, p), (AttentionWindow{6, 0}));   // narrower own window
  EXPECT_EQ(effective_window(16, p), p);                        // wider own window
  EXPECT_EQ(effective_window(6, {}), (AttentionWindow{6, 0}));  // policy off
  EXPECT_EQ(effective_window(0, {}), AttentionWindow{});
  // The query's shift for the sinks: 0 while they lie inside the window.
  EXPECT_EQ(sink_shift(p, 12), 0);  // reads 3..12: the sinks 0..3 overlap it
  EXPECT_EQ(sink_shift(p, 13), 0);  // reads 4..13: contiguous with 0..3
  EXPECT_EQ(sink_shift(p, 14), 1);  // reads 5..14: 4 skipped
  EXPECT_EQ(sink_shift(p, 100), 87);
  EXPECT_EQ(window_cache_key({}), 0u);
  EXPECT_NE(window_cache_key(p), window_cache_key({10, 3}));
  EXPECT_NE(window_cache_key(p), window_cache_key({11, 4}));
}

TEST(AttentionWindowPolicy, ReleasedBlocksKeepTheSinks) {
  // Window 6, 2 sinks, blocks of 4: block 0 stays; the query at c reads
  // c - 5 .. c, so blocks wholly in [2, c - 5) go.
  const AttentionWindow p{6, 2};
  EXPECT_EQ(released_blocks(p, 4, 10), (BlockRange{1, 1}));  // reads 5..: block 1 (4..7) needed
  EXPECT_EQ(released_blocks(p, 4, 13), (BlockRange{1, 2}));  // reads 8..
  EXPECT_EQ(released_blocks(p, 4, 100), (BlockRange{1, 23}));
  EXPECT_EQ(released_blocks({6, 0}, 4, 13), (BlockRange{0, 2}));
  EXPECT_EQ(released_blocks({6, 5}, 4, 100), (BlockRange{2, 23}));
  EXPECT_EQ(released_blocks({}, 4, 100), (BlockRange{0, 0}));
  // Sizing: sink blocks + ceil((W - 1 + step) / B) + 1, never above full.
  const std::vector<KvGroup> one_full = {{0}};
  EXPECT_EQ(max_blocks_per_seq(one_full, 4, 1000, 1, p), 1 + 2 + 1);
  EXPECT_EQ(max_blocks_per_seq(one_full, 4, 1000, 8, p), 1 + 4 + 1);
  EXPECT_EQ(max_blocks_per_seq({}, 4, 1000, 8, p), 1 + 4 + 1);
  EXPECT_EQ(max_blocks_per_seq(one_full, 4, 10, 8, p), 3);  // the full need is smaller
  EXPECT_EQ(max_blocks_per_seq(one_full, 4, 1000, 8), 250);
}

TEST(AttentionWindowPolicy, DecodeHoldsSinksPlusWindow) {
  KvCacheManager m({64, 4, true, nullptr, {}});
  const AttentionWindow p{6, 2};
  const SeqId s{1};
  auto tokens = seq_tokens(100, 10);
  auto a = m.allocate_slots(s, 0, 10, {}, p);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->tables[0], (TableDelta{0, 0, V{0, 1, 2}, 0}));
  std::vector<BlockHash> hashes;
  m.cache_full_blocks(s, tokens, 10, 7, hashes);
  // Position 13 reads 8..13 and the sinks 0..1: block 1 (4..7) goes.
  for (std::int32_t c = 10; c < 13; ++c) {
    tokens.push_back(c + 100);
    ASSERT_TRUE(m.allocate_slots(s, c, 1));
  }
  EXPECT_EQ(m.table(s)->num_released(), 0);
  auto d = m.allocate_slots(s, 13, 1);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->tables[0].num_sink, 1);
  EXPECT_EQ(d->tables[0].num_skipped, 2);
  EXPECT_EQ(m.table(s)->blocks, (V{0, kNoBlock, 2, 3}));
  EXPECT_EQ(m.pool().ref_count(1), 0);
  EXPECT_TRUE(m.pool().is_cached(1));  // full and computed: still a prefix block
  EXPECT_EQ(m.stats().live_tokens, 14 - 4);
  // Steady decode: the sink block plus the window's, at most 1 + 3.
  for (std::int32_t c = 14; c < 240; ++c) {
    ASSERT_TRUE(m.allocate_slots(s, c, 1));
    const BlockTable& t = *m.table(s);
    const std::int32_t hi = std::max(1, skipped_blocks(6, 4, c));
    ASSERT_EQ(held(t), 1 + (c + 1 + 3) / 4 - hi) << c;
    ASSERT_LE(held(t), max_blocks_per_seq({}, 4, c + 1, 1, p));
    ASSERT_EQ(t.blocks[0], 0);  // the sink block never moves
  }
  // A fork keeps releasing under the parent's policy.
  const SeqId child{2};
  m.fork(s, child);
  m.free(s);
  ASSERT_TRUE(m.allocate_slots(child, 240, 1));
  EXPECT_LE(held(*m.table(child)), 4);
  m.free(child);
  EXPECT_EQ(m.stats().blocks_used, 0);
  EXPECT_EQ(m.pool().verify(), "");
}

TEST(AttentionWindowPolicy, ModelWindowNarrowerThanPolicyKeepsItsRule) {
  // Full group + a window-6 group; policy window 10 with 4 sinks.
  KvCacheManager m({64, 4, true, nullptr, {{0}, {6}}});
  const AttentionWindow p{10, 4};
  const SeqId s{1};
  ASSERT_TRUE(m.allocate_slots(s, 0, 30, {}, p));
  ASSERT_TRUE(m.allocate_slots(s, 30, 1, {}, p));
  // Query 30 reads 21..30 and 0..3 in group 0; 25..30 in group 1.
  EXPECT_EQ(m.table(s, 0)->num_sink, 1);
  EXPECT_EQ(m.table(s, 0)->num_skipped, 5);
  EXPECT_EQ(m.table(s, 1)->num_sink, 0);
  EXPECT_EQ(m.table(s, 1)->num_skipped, 6);
  EXPECT_EQ(held(*m.table(s, 0)), 1 + 3);
  EXPECT_EQ(held(*m.table(s, 1)), 2);
  EXPECT_EQ(m.pool().verify(), "");
}

TEST(AttentionWindowPolicy, HitsNeedOnlySinksAndWindow) {
  KvCacheManager m({64, 4, true, nullptr, {}});
  const AttentionWindow p{6, 2};
  const std::uint64_t key = window_cache_key(p);
  auto tokens = seq_tokens(100, 41);
  const SeqId a{1};
  ASSERT_TRUE(m.allocate_slots(a, 0, 40, {}, p));
  std::vector<BlockHash> ha;
  m.cache_full_blocks(a, tokens, 40, key, ha);
  m.free(a);
  EXPECT_EQ(m.stats().blocks_used, 0);

  // The same tokens under the same policy: a hit of 10 blocks whose middle
  // is left behind (the last block stays: the cache chain continues there).
  std::vector<BlockHash> hb;
  const PrefixHit hit = m.find_longest_prefix(std::span(tokens).first(40), key, hb, p);
  ASSERT_EQ(hit.num_tokens, 40);
  // The query at 40 reads 35..40 and the sinks: blocks 0, 8, 9.
  EXPECT_EQ(hit.groups[0],
            (V{0, kNoBlock, kNoBlock, kNoBlock, kNoBlock, kNoBlock, kNoBlock, kNoBlock, 8, 9}));
  const SeqId b{2};
  auto alloc = m.allocate_slots(b, 40, 1, hit, p);
  ASSERT_TRUE(alloc);
  EXPECT_EQ(alloc->tables[0].num_sink, 1);
  EXPECT_EQ(alloc->tables[0].num_skipped, 8);
  EXPECT_EQ(held(*m.table(b)), 3 + 1);  // sink, window, and the new block
  // Without the key (full attention) there is no hit.
  std::vector<BlockHash> hc;
  EXPECT_EQ(m.find_longest_prefix(std::span(tokens).first(40), 0, hc).num_tokens, 0);
  m.free(b);
  EXPECT_EQ(m.pool().verify(), "");
}

}  // namespace
}  // namespace folio::kv
