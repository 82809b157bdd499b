// The intrusive free list: order after pushes, removals from the middle,
// positional re-insertion (used by transaction rollback) and pops.
#include "kv/free_block_list.h"

#include <gtest/gtest.h>

namespace folio::kv {
namespace {

using V = std::vector<BlockId>;

TEST(FreeBlockList, StartsInIdOrderAndPopsFront) {
  FreeBlockList l(4);
  EXPECT_EQ(l.to_vector(), (V{0, 1, 2, 3}));
  EXPECT_EQ(l.pop_front(), 0);
  EXPECT_EQ(l.pop_front(), 1);
  EXPECT_EQ(l.size(), 2);
  EXPECT_FALSE(l.contains(0));
  EXPECT_TRUE(l.contains(3));
}

TEST(FreeBlockList, RemoveMiddleAndReinsertAtSamePlace) {
  FreeBlockList l(5);
  BlockId prev = l.prev_of(2);
  EXPECT_EQ(prev, 1);
  l.remove(2);
  EXPECT_EQ(l.to_vector(), (V{0, 1, 3, 4}));
  l.insert_after(prev, 2);
  EXPECT_EQ(l.to_vector(), (V{0, 1, 2, 3, 4}));
  l.remove(0);
  l.insert_after(kNoBlock, 0);  // front
  EXPECT_EQ(l.prev_of(0), kNoBlock);
  l.remove(4);
  l.push_back(4);
  l.remove(1);
  l.push_back(1);
  EXPECT_EQ(l.to_vector(), (V{0, 2, 3, 4, 1}));
}

TEST(FreeBlockList, EmptiesAndRefills) {
  FreeBlockList l(3);
  while (!l.empty()) l.pop_front();
  EXPECT_EQ(l.front(), kNoBlock);
  l.push_back(2);
  l.push_back(0);
  EXPECT_EQ(l.to_vector(), (V{2, 0}));
  EXPECT_EQ(l.front(), 2);
}

}  // namespace
}  // namespace folio::kv
