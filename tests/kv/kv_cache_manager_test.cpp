// KvCacheManager: prefix hits with exact block ids, a forced hash collision
// caught by the token check, copy-on-write after a fork, all-or-nothing
// slot allocation and the utilization counters.
#include "kv/kv_cache_manager.h"

#include <gtest/gtest.h>

#include <numeric>

#include "seq_tokens.h"

namespace folio::kv {
namespace {

using V = std::vector<BlockId>;

// Allocates and "computes" all of `tokens` for `seq`, caching full blocks.
void fill(KvCacheManager& m, SeqId seq, const std::vector<TokenId>& tokens) {
  std::vector<BlockHash> hashes;
  ASSERT_TRUE(m.allocate_slots(seq, 0, static_cast<std::int32_t>(tokens.size())));
  m.cache_full_blocks(seq, tokens, static_cast<std::int32_t>(tokens.size()), 0, hashes);
}

TEST(KvCacheManager, PrefixHitReusesExactBlocks) {
  KvCacheManager m({8, 4, true, nullptr});
  auto a = seq_tokens(100, 10);
  fill(m, SeqId{1}, a);
  EXPECT_EQ(m.table(SeqId{1})->blocks, (V{0, 1, 2}));
  m.free(SeqId{1});  // released tail first: 2, 1, 0
  EXPECT_EQ(m.pool().free_list_order(), (V{3, 4, 5, 6, 7, 2, 1, 0}));
  EXPECT_EQ(m.stats().blocks_cached_free, 2);  // blocks 0 and 1 were full

  // Same first 9 tokens, then different: the two full blocks hit.
  auto b = seq_tokens(100, 9);
  b.push_back(7);
  b.push_back(8);
  std::vector<BlockHash> hashes;
  auto lookup = std::span<const TokenId>(b).first(b.size() - 1);
  PrefixHit hit = m.find_longest_prefix(lookup, 0, hashes);
  EXPECT_EQ(hit.blocks(), (V{0, 1}));
  EXPECT_EQ(hit.num_tokens, 8);
  auto slots = m.allocate_slots(SeqId{2}, 8, 3, hit);
  ASSERT_TRUE(slots);
  EXPECT_EQ(slots->tables[0].blocks_from, 0);
  EXPECT_EQ(slots->tables[0].block_ids, (V{0, 1, 3}));
  EXPECT_EQ(m.pool().ref_count(0), 1);
  EXPECT_EQ(m.pool().free_list_order(), (V{4, 5, 6, 7, 2}));

  // A prompt diverging inside the second block hits only the first; one
  // with another extra key (LoRA / salt) hits nothing.
  auto c = seq_tokens(100, 6);
  c.push_back(1);
  c.push_back(2);
  c.push_back(3);
  std::vector<BlockHash> hc;
  EXPECT_EQ(m.find_longest_prefix(c, 0, hc).blocks(), (V{0}));
  std::vector<BlockHash> hs;
  EXPECT_TRUE(m.find_longest_prefix(lookup, 42, hs).blocks().empty());
  m.set_prefix_caching(false);
  std::vector<BlockHash> hd;
  EXPECT_TRUE(m.find_longest_prefix(lookup, 0, hd).blocks().empty());
  EXPECT_EQ(m.pool().num_cached(), 0);
  EXPECT_EQ(m.pool().verify(), "");
}

BlockHash constant_hash(const BlockHash*, std::span<const TokenId>, std::uint64_t) {
  return {1, 2};
}

TEST(KvCacheManager, ForcedHashCollisionIsCaughtByTokenCheck) {
  KvCacheManager m({8, 4, true, &constant_hash});
  auto a = seq_tokens(0, 8);
  fill(m, SeqId{1}, a);
  // Block 0 took the (only) hash; block 1 collided and stayed uncached.
  EXPECT_TRUE(m.pool().is_cached(0));
  EXPECT_FALSE(m.pool().is_cached(1));
  m.free(SeqId{1});
  auto other = seq_tokens(50, 8);
  std::vector<BlockHash> h1;
  EXPECT_TRUE(m.find_longest_prefix(other, 0, h1).blocks().empty());  // same hash, other tokens
  std::vector<BlockHash> h2;
  EXPECT_EQ(m.find_longest_prefix(a, 0, h2).blocks(), (V{0}));  // the genuine first block
}

TEST(KvCacheManager, ForkSharesBlocksAndFirstWriterCopies) {
  KvCacheManager m({8, 4, true, nullptr});
  ASSERT_TRUE(m.allocate_slots(SeqId{1}, 0, 6));  // prompt of 6: blocks 0, 1 (1 is partial)
  m.fork(SeqId{1}, SeqId{2});
  m.fork(SeqId{1}, SeqId{3});
  EXPECT_EQ(m.pool().ref_count(0), 3);
  EXPECT_EQ(m.pool().ref_count(1), 3);

  auto s1 = m.allocate_slots(SeqId{1}, 6, 1);  // writes position 6, inside shared block 1
  ASSERT_TRUE(s1);
  EXPECT_EQ(s1->cow, (std::vector<CowCopy>{{1, 2}}));
  EXPECT_EQ(s1->tables[0].blocks_from, 1);
  EXPECT_EQ(s1->tables[0].block_ids, (V{2}));
  EXPECT_EQ(m.table(SeqId{1})->blocks, (V{0, 2}));

  auto s2 = m.allocate_slots(SeqId{2}, 6, 1);
  ASSERT_TRUE(s2);
  EXPECT_EQ(s2->cow, (std::vector<CowCopy>{{1, 3}}));
  EXPECT_EQ(m.table(SeqId{2})->blocks, (V{0, 3}));

  auto s3 = m.allocate_slots(SeqId{3}, 6, 1);  // last holder writes in place
  ASSERT_TRUE(s3);
  EXPECT_TRUE(s3->cow.empty());
  EXPECT_EQ(s3->tables[0].blocks_from, 2);
  EXPECT_TRUE(s3->tables[0].block_ids.empty());
  EXPECT_EQ(m.table(SeqId{3})->blocks, (V{0, 1}));
  EXPECT_EQ(m.pool().ref_count(0), 3);
  EXPECT_EQ(m.pool().ref_count(1), 1);

  auto s4 = m.allocate_slots(SeqId{3}, 7, 2);  // positions 7, 8: a new block
  ASSERT_TRUE(s4);
  EXPECT_EQ(s4->tables[0].blocks_from, 2);
  EXPECT_EQ(s4->tables[0].block_ids, (V{4}));
  EXPECT_EQ(m.pool().verify(), "");
}

TEST(KvCacheManager, ForkOnFullBlockNeedsNoCopy) {
  KvCacheManager m({8, 4, true, nullptr});
  ASSERT_TRUE(m.allocate_slots(SeqId{1}, 0, 8));
  m.fork(SeqId{1}, SeqId{2});
  auto s = m.allocate_slots(SeqId{1}, 8, 1);
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->cow.empty());
  EXPECT_EQ(s->tables[0].block_ids, (V{2}));
}

TEST(KvCacheManager, SlotAllocationIsAllOrNothing) {
  KvCacheManager m({4, 4, true, nullptr});
  auto a = seq_tokens(0, 12);
  fill(m, SeqId{1}, a);                           // blocks 0 1 2, all full and cached
  m.free(SeqId{1});                               // free list 3 2 1 0
  ASSERT_TRUE(m.allocate_slots(SeqId{9}, 0, 4));  // another sequence takes block 3
  EXPECT_EQ(m.table(SeqId{9})->blocks, (V{3}));

  // 13 tokens with the same prefix: hits 0, 1 (revived from the free list)
  // and needs 2 fresh blocks: 4 free-list blocks, only 3 there.
  auto b = seq_tokens(0, 13);
  std::vector<BlockHash> hashes;
  auto hit = m.find_longest_prefix(std::span<const TokenId>(b).first(12), 0, hashes);
  EXPECT_EQ(hit.blocks(), (V{0, 1, 2}));
  const PrefixHit partial{{V{0, 1}}, 8};
  EXPECT_FALSE(m.allocate_slots(SeqId{2}, 8, 9, partial));
  EXPECT_EQ(m.table(SeqId{2}), nullptr);
  EXPECT_EQ(m.pool().free_list_order(), (V{2, 1, 0}));
  EXPECT_EQ(m.pool().num_cached_free(), 3);
  // With all three hits it needs 3 + 1 > 3: still nothing.
  EXPECT_FALSE(m.allocate_slots(SeqId{2}, 12, 1, hit));
  m.free(SeqId{9});
  auto ok = m.allocate_slots(SeqId{2}, 12, 1, hit);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->tables[0].block_ids, (V{0, 1, 2, 3}));
  EXPECT_EQ(m.pool().verify(), "");
}

TEST(KvCacheManager, UtilizationStats) {
  KvCacheManager m({8, 4, true, nullptr});
  ASSERT_TRUE(m.allocate_slots(SeqId{1}, 0, 5));
  ASSERT_TRUE(m.allocate_slots(SeqId{2}, 0, 3));
  KvStats s = m.stats();
  EXPECT_EQ(s.blocks_total, 8);
  EXPECT_EQ(s.blocks_used, 3);
  EXPECT_EQ(s.blocks_free, 5);
  EXPECT_EQ(s.live_tokens, 8);
  EXPECT_EQ(s.allocated_slots, 12);
  m.record_prefix_query(10, 4);
  EXPECT_EQ(m.stats().prefix_query_tokens, 10);
  EXPECT_EQ(m.stats().prefix_hit_tokens, 4);
  m.free(SeqId{1});
  EXPECT_EQ(m.stats().live_tokens, 3);
  EXPECT_EQ(m.stats().blocks_used, 1);
}

}  // namespace
}  // namespace folio::kv

namespace folio::kv {
namespace {

// Rejected speculative tokens: the slots past the accepted ones go back to
// the pool (last block first), full blocks of verified tokens stay cached,
// and the next allocation continues from the shorter table.
TEST(KvCacheManager, TruncateReleasesTheBlocksOfRejectedDrafts) {
  KvCacheManager m({8, 4, true, nullptr});
  const auto t = seq_tokens(100, 6);
  fill(m, SeqId{1}, t);  // 6 positions: blocks 0 (full, cached) and 1
  // Decode position 6 plus 5 drafts (positions 6..11): blocks 1 and 2 more.
  auto slots = m.allocate_slots(SeqId{1}, 6, 6);
  ASSERT_TRUE(slots);
  EXPECT_EQ(m.table(SeqId{1})->blocks, (V{0, 1, 2}));
  EXPECT_EQ(m.stats().live_tokens, 12);
  // One draft accepted: 8 positions verified, block 2 held only drafts.
  m.truncate(SeqId{1}, 8);
  EXPECT_EQ(m.table(SeqId{1})->blocks, (V{0, 1}));
  EXPECT_EQ(m.table(SeqId{1})->num_slots, 8);
  EXPECT_EQ(m.stats().live_tokens, 8);
  EXPECT_EQ(m.stats().blocks_used, 2);
  EXPECT_FALSE(m.pool().is_cached(2));
  // Truncating to more than is held changes nothing.
  m.truncate(SeqId{1}, 20);
  EXPECT_EQ(m.table(SeqId{1})->num_slots, 8);
  // The next step extends from there: the delta starts after block 1.
  slots = m.allocate_slots(SeqId{1}, 8, 1);
  ASSERT_TRUE(slots);
  EXPECT_EQ(slots->tables[0].blocks_from, 2);
  EXPECT_EQ(m.table(SeqId{1})->num_slots, 9);
  m.free(SeqId{1});
  EXPECT_EQ(m.stats().blocks_used, 0);
  EXPECT_EQ(m.stats().live_tokens, 0);
}

}  // namespace
}  // namespace folio::kv
