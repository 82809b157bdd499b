// KV memory sizing: the documented formula on a real model shape, quantized
// scale overhead, budget -> blocks, and byte-size parsing.
#include "kv/kv_sizing.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "kernels/kv_row.h"

namespace folio::kv {
namespace {

TEST(KvSizing, BytesPerTokenMatchesFormula) {
  const KvShape smollm{30, 3, 64};  // SmolLM2-135M
  EXPECT_EQ(kv_bytes_per_token(smollm, KvCacheDtype::kF16), 30 * 2 * 3 * 64 * 2);
  EXPECT_EQ(kv_bytes_per_token(smollm, KvCacheDtype::kF32), 30 * 2 * 3 * 64 * 4);
  // int8: 64 bytes + 2 f16 scales; int4: 32 bytes + 2 f16 scales per row.
  EXPECT_EQ(kv_row_bytes(64, KvCacheDtype::kInt8), 68);
  EXPECT_EQ(kv_row_bytes(64, KvCacheDtype::kInt4), 36);
  EXPECT_EQ(kv_row_bytes(80, KvCacheDtype::kInt8), 80 + 2 * 3);  // partial last group
  EXPECT_EQ(kv_bytes_per_token(smollm, KvCacheDtype::kInt8), 30 * 2 * 3 * 68);
  EXPECT_EQ(kv_bytes_per_block(smollm, KvCacheDtype::kF16, 16), 368640);
  EXPECT_EQ(kv_blocks_for_budget(parse_byte_size("2GiB"), 368640), 5825);
  EXPECT_THROW(kv_row_bytes(63, KvCacheDtype::kInt4), Error);
}

// The sizing formula and the layout the caches actually store
// (kernels/kv_row.h) agree for every type both know, full and partial groups.
TEST(KvSizing, RowBytesMatchTheStoredLayout) {
  using kernels::KvDtype;
  for (std::int64_t d : {64, 80, 36, 128, 256}) {
    const auto u = static_cast<std::size_t>(d);
    EXPECT_EQ(kv_row_bytes(d, KvCacheDtype::kF32), static_cast<std::int64_t>(kernels::kv_head_bytes(KvDtype::kF32, u)));
    EXPECT_EQ(kv_row_bytes(d, KvCacheDtype::kF16), static_cast<std::int64_t>(kernels::kv_head_bytes(KvDtype::kF16, u)));
    EXPECT_EQ(kv_row_bytes(d, KvCacheDtype::kInt8), static_cast<std::int64_t>(kernels::kv_head_bytes(KvDtype::kI8, u)));
  }
}

TEST(KvSizing, BudgetTooSmallIsAClearError) {
  try {
    kv_blocks_for_budget(1000, 368640);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--kv-cache-memory"), std::string::npos);
  }
}

TEST(KvSizing, ParsesByteSizesAndDtypes) {
  EXPECT_EQ(parse_byte_size("1000000"), 1000000);
  EXPECT_EQ(parse_byte_size("512MiB"), 512ll << 20);
  EXPECT_EQ(parse_byte_size("1.5GB"), 1500000000);
  EXPECT_EQ(parse_byte_size("4K"), 4096);
  for (const char* bad : {"", "GiB", "1..2GB", "3 parsecs", "-5", "1e99"})
    EXPECT_THROW(parse_byte_size(bad), Error) << bad;
  EXPECT_EQ(parse_kv_cache_dtype("auto"), KvCacheDtype::kF16);
  EXPECT_EQ(parse_kv_cache_dtype("int4"), KvCacheDtype::kInt4);
  EXPECT_STREQ(kv_cache_dtype_name(KvCacheDtype::kInt8), "int8");
  EXPECT_THROW(parse_kv_cache_dtype("fp8"), Error);
}

}  // namespace
}  // namespace folio::kv
