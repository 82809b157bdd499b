// KV memory sizing: budget -> blocks, and byte-size parsing.
#include "kv/kv_sizing.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace folio::kv {
namespace {

TEST(KvSizing, BudgetBuysWholeBlocks) {
  // SmolLM2-135M at f16, block 16: 30 layers x 2 x 3 heads x 128 B x 16.
  EXPECT_EQ(kv_blocks_for_budget(parse_byte_size("2GiB"), 368640), 5825);
  EXPECT_EQ(kv_blocks_for_budget(368640, 368640), 1);
  EXPECT_EQ(kv_blocks_for_budget(2 * 368640 - 1, 368640), 1);
}

TEST(KvSizing, BudgetTooSmallIsAClearError) {
  try {
    kv_blocks_for_budget(1000, 368640);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--kv-cache-memory"), std::string::npos);
  }
}

TEST(KvSizing, ParsesByteSizes) {
  EXPECT_EQ(parse_byte_size("1000000"), 1000000);
  EXPECT_EQ(parse_byte_size("512MiB"), 512ll << 20);
  EXPECT_EQ(parse_byte_size("1.5GB"), 1500000000);
  EXPECT_EQ(parse_byte_size("4K"), 4096);
  for (const char* bad : {"", "GiB", "1..2GB", "3 parsecs", "-5", "1e99"})
    EXPECT_THROW(parse_byte_size(bad), Error) << bad;
}

}  // namespace
}  // namespace folio::kv
