// kv/kv_sizing.h: how many KV blocks a memory budget buys.
//
// Bytes of K/V per token position, over the whole model:
//
//   bytes_per_token = n_layers * 2 (K and V) * n_kv_heads * row_bytes(head_dim)
//
//   row_bytes(d) for one head's row of d values:
//     f32   4 d
//     f16   2 d
//     int8  d     + 2 * ceil(d / 32)   (an f16 scale per group of 32, as Q8_0)
//     int4  d / 2 + 2 * ceil(d / 32)   (an f16 scale per group of 32, as Q4_0;
//                                        d must be even)
//
//   bytes_per_block = bytes_per_token * block_size
//   num_blocks      = floor(budget / bytes_per_block)
//
// Example: SmolLM2-135M (30 layers, 3 KV heads, head_dim 64), f16, block 16:
// 30*2*3*128 = 23,040 B/token, 368,640 B/block; 2 GiB buys 5,825 blocks.
#pragma once

#include <cstdint>
#include <string_view>

namespace folio::kv {

enum class KvCacheDtype { kF32, kF16, kInt8, kInt4 };

inline constexpr std::int64_t kKvQuantGroup = 32;

// Parses --kv-cache-dtype: "auto"/"f16"/"float16", "f32"/"float32", "int8",
// "int4". Throws folio::Error naming the accepted values otherwise.
KvCacheDtype parse_kv_cache_dtype(std::string_view name);
const char* kv_cache_dtype_name(KvCacheDtype dtype);

struct KvShape {
  std::int64_t n_layers = 0;
  std::int64_t n_kv_heads = 0;
  std::int64_t head_dim = 0;
};

// Bytes of one head's K (or V) row; see the table above.
std::int64_t kv_row_bytes(std::int64_t head_dim, KvCacheDtype dtype);
std::int64_t kv_bytes_per_token(const KvShape& shape, KvCacheDtype dtype);
std::int64_t kv_bytes_per_block(const KvShape& shape, KvCacheDtype dtype, std::int32_t block_size);
// Throws folio::Error when the budget does not buy a single block, or would
// buy more than 2^31-1.
std::int32_t kv_blocks_for_budget(std::int64_t budget_bytes, std::int64_t bytes_per_block);

// Parses a byte size such as "2GiB", "512MiB", "1.5GB", "1000000" (binary
// KiB/MiB/GiB/TiB and K/M/G/T, decimal KB/MB/GB/TB, bare = bytes). Throws
// folio::Error.
std::int64_t parse_byte_size(std::string_view text);

}  // namespace folio::kv
