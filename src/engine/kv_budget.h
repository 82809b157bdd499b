// engine/kv_budget.h: how much memory the paged KV cache gets by default.
//
// Default budget (no --kv-cache-memory):
//
//   need   = max_num_seqs * blocks_per_seq * bytes_per_block
//            (blocks_per_seq: what one max_model_len sequence holds at most,
//            a sliding-window group only its window: kv::max_blocks_per_seq)
//   budget = min(need, cap)   cap: 25% of MemAvailable (1 GiB if /proc is
//                             unreadable), or the caller's share of it
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
// `cap` <= 0: default_kv_cap().
std::int64_t default_kv_cache_memory(std::int64_t bytes_per_block, std::int64_t blocks_per_seq,
                                     std::int32_t max_num_seqs, std::int64_t cap = 0);

// 25% of MemAvailable, or 1 GiB when unknown.
std::int64_t default_kv_cap();

}  // namespace folio::engine
