// kv/kv_sizing.h: how many KV blocks a memory budget buys.
//
//   bytes_per_block = what the runner's pool spends on one block over all
//                     layers (engine/model_runner.h; for the real model a sum
//                     of kernels::kv_head_bytes, the one row-size formula)
//   num_blocks      = floor(budget / bytes_per_block)
//
// Example: SmolLM2-135M (30 layers, 3 KV heads, head_dim 64), f16, block 16:
// 30*2*3*128 = 23,040 B/token, 368,640 B/block; 2 GiB buys 5,825 blocks.
// Pure integer logic: the element types and their row sizes are the
// kernels' (kernels/kv_row.h), not this module's.
#pragma once

#include <cstdint>
#include <string_view>

namespace folio::kv {

// Throws folio::Error when the budget does not buy a single block, or would
// buy more than 2^31-1.
std::int32_t kv_blocks_for_budget(std::int64_t budget_bytes, std::int64_t bytes_per_block);

// Parses a byte size such as "2GiB", "512MiB", "1.5GB", "1000000" (binary
// KiB/MiB/GiB/TiB and K/M/G/T, decimal KB/MB/GB/TB, bare = bytes). Throws
// folio::Error.
std::int64_t parse_byte_size(std::string_view text);

}  // namespace folio::kv
