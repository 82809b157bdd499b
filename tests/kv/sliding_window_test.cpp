// KvCacheManager with layer groups (kv_groups.h): a sliding group releases
// exactly the blocks wholly before the window of the step's first query,
// the deltas say so, released blocks stay prefix hits until evicted (and
// are evicted first), a hit needs only the window's blocks of a sliding
// group, and an all-sliding model still gets hits.
#include <gtest/gtest.h>

#include <algorithm>

#include "kv/kv_cache_manager.h"
#include "seq_tokens.h"

namespace folio::kv {
namespace {

using V = std::vector<BlockId>;

// Full attention plus one window of 6 positions, blocks of 4.
KvCacheConfig hybrid(std::int32_t blocks) {
  return {blocks, 4, true, nullptr, {{0}, {6}}};
}

std::int32_t held(const BlockTable& t) {
  return static_cast<std::int32_t>(
      std::count_if(t.blocks.begin(), t.blocks.end(), [](BlockId b) { return b != kNoBlock; }));
}

TEST(SlidingWindowKv, ReleasesExactlyTheBlocksBeforeTheWindow) {
  KvCacheManager m(hybrid(64));
  const SeqId s{1};
  auto tokens = seq_tokens(100, 10);
  auto a = m.allocate_slots(s, 0, 10);
  ASSERT_TRUE(a);
  ASSERT_EQ(a->tables.size(), 2u);
  EXPECT_EQ(a->tables[0], (TableDelta{0, 0, V{0, 1, 2}}));
  EXPECT_EQ(a->tables[1], (TableDelta{0, 0, V{3, 4, 5}}));
  std::vector<BlockHash> hashes;
  m.cache_full_blocks(s, tokens, 10, 0, hashes);

  // Position 10 reads 5..10: block 0 (positions 0..3) of the window group goes.
  auto d = m.allocate_slots(s, 10, 1);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->tables[0], (TableDelta{0, 3, V{}}));
  EXPECT_EQ(d->tables[1], (TableDelta{1, 3, V{}}));
  EXPECT_EQ(m.table(s, 1)->blocks, (V{kNoBlock, 4, 5}));
  EXPECT_EQ(m.table(s, 0)->blocks, (V{0, 1, 2}));
  EXPECT_EQ(m.pool().ref_count(3), 0);
  EXPECT_TRUE(m.pool().is_cached(3));  // full and computed: still a prefix hit
  EXPECT_EQ(m.stats().blocks_cached_free, 1);
  EXPECT_EQ(m.stats().blocks_free, 64 - 5);

  // Positions 11, 12: nothing more to release; 12 needs a fourth block in both.
  tokens.push_back(110);
  EXPECT_EQ(m.allocate_slots(s, 11, 1)->tables[1].num_skipped, 1);
  tokens.push_back(111);
  auto e = m.allocate_slots(s, 12, 1);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->tables[1].num_skipped, 1);
  EXPECT_EQ(e->tables[0].block_ids.size(), 1u);
  EXPECT_EQ(e->tables[1].block_ids.size(), 1u);
  // Position 13 reads 8..13: block 1 goes too.
  EXPECT_EQ(m.allocate_slots(s, 13, 1)->tables[1].num_skipped, 2);
  EXPECT_EQ(m.table(s, 1)->num_skipped, 2);
  EXPECT_EQ(held(*m.table(s, 1)), 2);
  // live slots: full group 14, window group 14 - 2 released blocks.
  EXPECT_EQ(m.stats().live_tokens, 14 + 6);
  EXPECT_EQ(m.pool().verify(), "");

  // Steady decode: the window group holds ceil((c + 1) / 4) - skip(c) blocks,
  // never more than 3, however long the sequence grows.
  for (std::int32_t c = 14; c < 240; ++c) {  // 60 + 3 blocks of 64
    ASSERT_TRUE(m.allocate_slots(s, c, 1));
    const BlockTable& t = *m.table(s, 1);
    ASSERT_EQ(held(t), (c + 1 + 3) / 4 - skipped_blocks(6, 4, c)) << c;
    ASSERT_LE(held(t), 3);
    ASSERT_EQ(m.table(s, 0)->size(), (c + 1 + 3) / 4);
  }
  m.free(s);
  EXPECT_EQ(m.stats().blocks_used, 0);
  EXPECT_EQ(m.pool().verify(), "");
}

TEST(SlidingWindowKv, AHitNeedsOnlyTheWindowAndReleasedBlocksAreEvictedFirst) {
  KvCacheManager m(hybrid(24));
  auto prompt = seq_tokens(0, 17);
  const SeqId a{1};
  ASSERT_TRUE(m.allocate_slots(a, 0, 17));
  const V window_blocks = m.table(a, 1)->blocks;  // 5 blocks, indices 0..4
  std::vector<BlockHash> ha;
  m.cache_full_blocks(a, prompt, 17, 0, ha);
  // Position 17 reads 12..17: window-group blocks 0, 1, 2 are released.
  ASSERT_TRUE(m.allocate_slots(a, 17, 1));
  EXPECT_EQ(m.table(a, 1)->num_skipped, 3);
  m.free(a);
  EXPECT_EQ(m.stats().blocks_used, 0);
  // Released in window order first, so they head the LRU list (after the
  // never-used blocks).
  const V order = m.pool().free_list_order();
  const auto at = [&](BlockId b) {
    return std::find(order.begin(), order.end(), b) - order.begin();
  };
  EXPECT_LT(at(window_blocks[0]), at(window_blocks[1]));
  EXPECT_LT(at(window_blocks[1]), at(window_blocks[2]));
  EXPECT_LT(at(window_blocks[2]), at(window_blocks[3]));

  // A new prompt with the same 16 leading tokens: 4 blocks hit; the window
  // group needs only blocks 2, 3 (positions 11.. for the query at 16).
  auto b_tokens = prompt;
  b_tokens.push_back(999);
  const auto lookup = std::span<const TokenId>(b_tokens).first(17);
  std::vector<BlockHash> hb;
  PrefixHit hit = m.find_longest_prefix(lookup, 0, hb);
  EXPECT_EQ(hit.num_tokens, 16);
  ASSERT_EQ(hit.groups.size(), 2u);
  EXPECT_EQ(hit.groups[1], (V{kNoBlock, kNoBlock, window_blocks[2], window_blocks[3]}));

  // Evict everything before window block 2 on the free list: the hit stands.
  const SeqId filler{7};
  const auto before = static_cast<std::int32_t>(at(window_blocks[2]));
  ASSERT_EQ(before % 2, 0);  // the filler takes two blocks per position block
  ASSERT_TRUE(m.allocate_slots(filler, 0, before / 2 * 4));
  EXPECT_FALSE(m.pool().is_cached(window_blocks[0]));
  EXPECT_FALSE(m.pool().is_cached(window_blocks[1]));
  std::vector<BlockHash> hc;
  hit = m.find_longest_prefix(lookup, 0, hc);
  EXPECT_EQ(hit.num_tokens, 16);

  // Adopting the hit revives only what it needs.
  const std::int32_t free_before = m.pool().num_free();
  auto slots = m.allocate_slots(SeqId{2}, 16, 2, hit);
  ASSERT_TRUE(slots);
  EXPECT_EQ(slots->tables[1].num_skipped, 2);
  EXPECT_EQ(m.table(SeqId{2}, 1)->blocks.size(), 5u);
  // 4 + 2 revived, 1 + 1 fresh for positions 16, 17.
  EXPECT_EQ(free_before - m.pool().num_free(), 4 + 2 + 2);
  EXPECT_EQ(m.pool().verify(), "");
  m.free(SeqId{2});

  // Once window block 2 is evicted as well, no hit has its window (blocks 0
  // and 1 are gone, so shorter hits fail too): a miss, though group 0's
  // chain is intact.
  const V order2 = m.pool().free_list_order();
  const auto pops = std::find(order2.begin(), order2.end(), window_blocks[2]) - order2.begin() + 1;
  ASSERT_TRUE(m.allocate_slots(SeqId{8}, 0, static_cast<std::int32_t>((pops + 1) / 2 * 4)));
  ASSERT_FALSE(m.pool().is_cached(window_blocks[2]));
  for (BlockId b : hit.groups[0]) ASSERT_TRUE(m.pool().is_cached(b));
  std::vector<BlockHash> hd;
  EXPECT_EQ(m.find_longest_prefix(lookup, 0, hd).num_tokens, 0);
  EXPECT_EQ(m.pool().verify(), "");
}

TEST(SlidingWindowKv, AllSlidingModelHitsThroughItsOwnChain) {
  KvCacheManager m({16, 4, true, nullptr, {{6}}});
  auto prompt = seq_tokens(50, 17);
  ASSERT_TRUE(m.allocate_slots(SeqId{1}, 0, 17));
  std::vector<BlockHash> h1;
  m.cache_full_blocks(SeqId{1}, prompt, 17, 0, h1);
  const V blocks = m.table(SeqId{1})->blocks;
  ASSERT_TRUE(m.allocate_slots(SeqId{1}, 17, 1));
  EXPECT_EQ(m.table(SeqId{1})->num_skipped, 3);
  m.free(SeqId{1});
  std::vector<BlockHash> h2;
  const PrefixHit hit = m.find_longest_prefix(prompt, 0, h2);
  EXPECT_EQ(hit.num_tokens, 16);
  EXPECT_EQ(hit.blocks(), (V{kNoBlock, kNoBlock, blocks[2], blocks[3]}));
  auto slots = m.allocate_slots(SeqId{2}, 16, 1, hit);
  ASSERT_TRUE(slots);
  EXPECT_EQ(slots->tables[0].num_skipped, 2);
  EXPECT_EQ(m.stats().blocks_used, 3);  // blocks 2, 3 revived, one fresh
  EXPECT_EQ(m.pool().verify(), "");
}

}  // namespace
}  // namespace folio::kv
