// engine/kv_budget.h: how much memory the paged KV cache gets by default.
//
// Default budget (no --kv-cache-memory):
//
//   need   = max_num_seqs * ceil(max_model_len / block_size) * bytes_per_block
//   budget = min(need, 25% of MemAvailable)      (1 GiB if /proc is unreadable)
//
// i.e. never more than every seat at full length could use, and never so much
// that the machine starts swapping. The pool is then floor(budget / block).
#pragma once

#include <cstdint>

namespace folio::engine {

// MemAvailable from /proc/meminfo in bytes, or 0 when unknown.
std::int64_t mem_available_bytes();

// `bytes_per_block`: what the runner's pool spends on one block
// (ModelRunner::kv_bytes_per_block).
std::int64_t default_kv_cache_memory(std::int64_t bytes_per_block, std::int32_t block_size,
                                     std::int32_t max_num_seqs, std::int32_t max_model_len);

}  // namespace folio::engine
