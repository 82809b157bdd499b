// kv_groups: layers grouped by window (Gemma 3's pattern, a plain model, an
// uneven split, an all-sliding model), the blocks a window skips, and the
// most blocks a sequence holds (Gemma 3 270M at 32k positions).
#include "kv/kv_groups.h"

#include <gtest/gtest.h>

#include <vector>

namespace folio::kv {
namespace {

using I = std::vector<std::int32_t>;

TEST(KvGroups, Gemma3PatternMakesOneFullAndFiveSlidingGroups) {
  I windows(18, 512);
  for (int l : {5, 11, 17}) windows[static_cast<std::size_t>(l)] = 0;
  const KvGroupLayout g = group_layers(windows);
  EXPECT_EQ(g.slots, 3);
  ASSERT_EQ(g.groups.size(), 6u);
  EXPECT_EQ(g.groups[0].window, 0);
  for (std::size_t i = 1; i < 6; ++i) EXPECT_EQ(g.groups[i].window, 512);
  EXPECT_EQ(g.layer_group, (I{1, 1, 1, 2, 2, 0, 2, 3, 3, 3, 4, 0, 4, 4, 5, 5, 5, 0}));
  EXPECT_EQ(g.layer_slot, (I{0, 1, 2, 0, 1, 0, 2, 0, 1, 2, 0, 1, 1, 2, 0, 1, 2, 2}));
}

TEST(KvGroups, NoWindowIsOneGroupOfEveryLayer) {
  const KvGroupLayout g = group_layers(I(30, 0));
  EXPECT_EQ(g.slots, 30);
  ASSERT_EQ(g.groups.size(), 1u);
  EXPECT_EQ(g.groups[0].window, 0);
  for (std::size_t l = 0; l < 30; ++l) {
    EXPECT_EQ(g.layer_group[l], 0);
    EXPECT_EQ(g.layer_slot[l], static_cast<std::int32_t>(l));
  }
  EXPECT_TRUE(group_layers({}).groups.empty());
}

TEST(KvGroups, UnevenCountsLeaveSlotsUnusedInTheLastGroup) {
  // 4 full layers, 6 sliding: slots 4; the sliding type needs two groups,
  // the second with 2 of its 4 slots used.
  const KvGroupLayout g = group_layers(I{0, 9, 9, 0, 9, 9, 0, 9, 9, 0});
  EXPECT_EQ(g.slots, 4);
  ASSERT_EQ(g.groups.size(), 3u);
  EXPECT_EQ(g.groups[1].window, 9);
  EXPECT_EQ(g.groups[2].window, 9);
  EXPECT_EQ(g.layer_group, (I{0, 1, 1, 0, 1, 1, 0, 2, 2, 0}));
  EXPECT_EQ(g.layer_slot, (I{0, 0, 1, 1, 2, 3, 2, 0, 1, 3}));
}

TEST(KvGroups, AllSlidingIsOneSlidingGroup) {
  const KvGroupLayout g = group_layers(I(4, 4096));
  ASSERT_EQ(g.groups.size(), 1u);
  EXPECT_EQ(g.groups[0].window, 4096);
}

TEST(KvGroups, SkippedBlocksFollowTheFirstQuerysWindow) {
  EXPECT_EQ(skipped_blocks(0, 4, 1000), 0);  // full attention skips nothing
  // window 6, block 4: the query at c reads c - 5 .. c.
  EXPECT_EQ(skipped_blocks(6, 4, 0), 0);
  EXPECT_EQ(skipped_blocks(6, 4, 8), 0);   // reads 3..8: block 0 still needed
  EXPECT_EQ(skipped_blocks(6, 4, 9), 1);   // reads 4..9
  EXPECT_EQ(skipped_blocks(6, 4, 12), 1);  // reads 7..12
  EXPECT_EQ(skipped_blocks(6, 4, 13), 2);  // reads 8..13
  EXPECT_EQ(skipped_blocks(512, 16, 512), 0);
  EXPECT_EQ(skipped_blocks(512, 16, 527), 1);  // reads 16..527
}

TEST(KvGroups, MaxBlocksPerSequenceCountsTheWindowNotTheLength) {
  const std::vector<KvGroup> gemma{{0}, {512}, {512}, {512}, {512}, {512}};
  // 32k positions, block 16, steps of at most 2048: the full group holds
  // 2048 blocks, each sliding group ceil((511 + 2048) / 16) + 1 = 161.
  EXPECT_EQ(max_blocks_per_seq(gemma, 16, 32768, 2048), 2048 + 5 * 161);
  // Decode-sized steps: 33 per sliding group.
  EXPECT_EQ(max_blocks_per_seq(gemma, 16, 32768, 1), 2048 + 5 * 33);
  // Shorter than the window: every group holds everything.
  EXPECT_EQ(max_blocks_per_seq(gemma, 16, 100, 2048), 6 * 7);
  EXPECT_EQ(max_blocks_per_seq({}, 16, 100, 2048), 7);
  // What the window saves against: every position of every group.
  EXPECT_EQ(every_position_blocks(gemma, 16, 32768), 6 * 2048);
  EXPECT_EQ(every_position_blocks({}, 16, 100), 7);
}

}  // namespace
}  // namespace folio::kv
