// BlockPool: exact block ids, all-or-nothing allocation, LRU eviction of
// cached free blocks, verified lookups and exact transaction rollback.
#include "kv/block_pool.h"

#include <gtest/gtest.h>

#include <numeric>

#include "kv/pool_transaction.h"

namespace folio::kv {
namespace {

using V = std::vector<BlockId>;

std::vector<TokenId> toks(TokenId first, int n = 4) {
  std::vector<TokenId> t(static_cast<std::size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}
BlockHash h(std::uint64_t x) {
  return {x, ~x};
}

TEST(BlockPool, ExactIdsAndReuseOrder) {
  BlockPool p(8, 4);
  V a, b, c;
  ASSERT_TRUE(p.allocate(3, a));
  ASSERT_TRUE(p.allocate(2, b));
  EXPECT_EQ(a, (V{0, 1, 2}));
  EXPECT_EQ(b, (V{3, 4}));
  p.release(1);
  p.release(0);
  EXPECT_EQ(p.free_list_order(), (V{5, 6, 7, 1, 0}));
  ASSERT_TRUE(p.allocate(4, c));
  EXPECT_EQ(c, (V{5, 6, 7, 1}));
  EXPECT_EQ(p.num_used(), 7);
  EXPECT_EQ(p.verify(), "");
}

TEST(BlockPool, AllocationIsAllOrNothing) {
  BlockPool p(4, 4);
  V a;
  ASSERT_TRUE(p.allocate(3, a));
  V b = {99};
  EXPECT_FALSE(p.allocate(2, b));
  EXPECT_EQ(b, (V{99}));  // untouched
  EXPECT_EQ(p.num_free(), 1);
  EXPECT_EQ(p.free_list_order(), (V{3}));
}

TEST(BlockPool, SharedBlockFreedOnlyAtLastRelease) {
  BlockPool p(2, 4);
  V a;
  ASSERT_TRUE(p.allocate(1, a));
  p.touch(0);
  EXPECT_EQ(p.ref_count(0), 2);
  p.release(0);
  EXPECT_EQ(p.num_free(), 1);
  p.release(0);
  EXPECT_EQ(p.free_list_order(), (V{1, 0}));
}

TEST(BlockPool, CachedFreeBlocksAreEvictedLeastRecentlyFreedFirst) {
  BlockPool p(8, 4);
  V a;
  ASSERT_TRUE(p.allocate(4, a));  // 0..3
  for (BlockId b : a) EXPECT_EQ(p.cache_block(b, h(100 + b), toks(10 * b), 0, kNoBlock), b);
  for (BlockId b : {2, 0, 3, 1}) p.release(b);
  EXPECT_EQ(p.free_list_order(), (V{4, 5, 6, 7, 2, 0, 3, 1}));
  EXPECT_EQ(p.num_cached_free(), 4);
  // Reviving block 3 by a hit takes it off the free list.
  EXPECT_EQ(p.lookup(h(103), toks(30), 0, kNoBlock), 3);
  p.touch(3);
  V b;
  ASSERT_TRUE(p.allocate(5, b));
  EXPECT_EQ(b, (V{4, 5, 6, 7, 2}));  // block 2 was the oldest cached-free block
  EXPECT_EQ(p.lookup(h(102), toks(20), 0, kNoBlock), kNoBlock);  // evicted
  EXPECT_EQ(p.lookup(h(100), toks(0), 0, kNoBlock), 0);          // still cached
  V c;
  ASSERT_TRUE(p.allocate(1, c));
  EXPECT_EQ(c, (V{0}));
  EXPECT_EQ(p.lookup(h(100), toks(0), 0, kNoBlock), kNoBlock);
  EXPECT_EQ(p.lookup(h(101), toks(10), 0, kNoBlock), 1);
  EXPECT_EQ(p.num_cached(), 2);  // 1 (free) and 3 (in use)
  EXPECT_EQ(p.num_cached_free(), 1);
  EXPECT_EQ(p.verify(), "");
}

TEST(BlockPool, LookupVerifiesTokensExtraKeyAndParent) {
  BlockPool p(4, 4);
  V a;
  ASSERT_TRUE(p.allocate(2, a));
  ASSERT_EQ(p.cache_block(0, h(1), toks(0), 7, kNoBlock), 0);
  ASSERT_EQ(p.cache_block(1, h(2), toks(4), 7, 0), 1);
  EXPECT_EQ(p.lookup(h(2), toks(4), 7, 0), 1);
  EXPECT_EQ(p.lookup(h(2), toks(5), 7, 0), kNoBlock);         // other tokens (a collision)
  EXPECT_EQ(p.lookup(h(2), toks(4), 8, 0), kNoBlock);         // other extra key
  EXPECT_EQ(p.lookup(h(2), toks(4), 7, kNoBlock), kNoBlock);  // other parent
  // Same hash, different content: not cached, reported as a collision.
  V b;
  ASSERT_TRUE(p.allocate(1, b));
  EXPECT_EQ(p.cache_block(b[0], h(1), toks(50), 7, kNoBlock), kNoBlock);
  // Same hash, same content: the existing block represents it.
  EXPECT_EQ(p.cache_block(b[0], h(1), toks(0), 7, kNoBlock), 0);
  EXPECT_FALSE(p.is_cached(b[0]));
  // Once the parent block is reallocated (new generation), the child no
  // longer verifies even if block 0 is cached again with equal tokens.
  p.release(0);
  p.release(b[0]);
  V c;
  ASSERT_TRUE(p.allocate(2, c));  // 3, then 0 (evicting its entry)
  EXPECT_EQ(c, (V{3, 0}));
  ASSERT_EQ(p.cache_block(0, h(1), toks(0), 7, kNoBlock), 0);
  EXPECT_EQ(p.lookup(h(2), toks(4), 7, 0), kNoBlock);
  EXPECT_EQ(p.verify(), "");
}

struct Snapshot {
  V free_order;
  std::vector<std::int32_t> refs;
  std::vector<bool> cached;
  std::int32_t cached_free;
  bool operator==(const Snapshot&) const = default;
};
Snapshot snap(const BlockPool& p) {
  Snapshot s{p.free_list_order(), {}, {}, p.num_cached_free()};
  for (BlockId b = 0; b < p.num_blocks(); ++b) {
    s.refs.push_back(p.ref_count(b));
    s.cached.push_back(p.is_cached(b));
  }
  return s;
}

TEST(BlockPool, TransactionRollbackRestoresEverythingExactly) {
  BlockPool p(6, 4);
  V a;
  ASSERT_TRUE(p.allocate(4, a));
  for (BlockId b : a) p.cache_block(b, h(b), toks(b * 4), 0, kNoBlock);
  p.release(1);
  p.release(3);  // free list: 4 5 1 3 (1 and 3 cached)
  const Snapshot before = snap(p);
  {
    PoolTransaction tx(p);
    p.touch(3);  // revive from the middle of the list
    p.touch(0);  // extra ref on a used block
    V b;
    ASSERT_TRUE(p.allocate(3, b));  // 4, 5, then 1 (evicting its cache entry)
    EXPECT_EQ(b, (V{4, 5, 1}));
    p.cache_block(4, h(40), toks(40), 0, kNoBlock);
    p.release(2);
    EXPECT_EQ(p.lookup(h(1), toks(4), 0, kNoBlock), kNoBlock);
    // no commit: an exception or early return lands here
  }
  EXPECT_EQ(snap(p), before);
  EXPECT_EQ(p.lookup(h(1), toks(4), 0, kNoBlock), 1);  // eviction undone
  EXPECT_EQ(p.lookup(h(40), toks(40), 0, kNoBlock), kNoBlock);
  EXPECT_EQ(p.verify(), "");
  {
    PoolTransaction tx(p);
    V b;
    ASSERT_TRUE(p.allocate(1, b));
    tx.commit();
  }
  EXPECT_EQ(p.num_free(), 3);
  EXPECT_EQ(p.verify(), "");
}

TEST(BlockPool, TransactionRollbackOnException) {
  BlockPool p(4, 4);
  const Snapshot before = snap(p);
  try {
    PoolTransaction tx(p);
    V b;
    ASSERT_TRUE(p.allocate(2, b));
    throw std::runtime_error("step failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(snap(p), before);
}

}  // namespace
}  // namespace folio::kv
