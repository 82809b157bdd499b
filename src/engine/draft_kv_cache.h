// engine/draft_kv_cache.h: the draft model's K/V (speculative decoding,
// method draft_model) in the target's KV blocks.
//
// The draft keeps K/V of its own geometry for the same block ids as the
// target: one block of the pool is the target's bytes plus the draft's
// (ModelRunner::kv_bytes_per_block counts both), so the draft's memory is
// in the one paged budget, is freed with the request and rolls back with
// it. A PagedKvCache over the draft model's config, all its layers in one
// group, follows every plan (the table of the target's group 0, which holds
// every position; COW copies) exactly as the target's does.
//
// The draft computes its K/V lazily: only for sequences that draft (none
// while the load rule turns speculation off), catching up on what it lacks
// in the same forward as its first draft (spec/model_drafter.h). What it
// has is kept per block: valid(b) = the leading positions of block b whose
// draft K/V belongs to the tokens the block holds. A block's tokens below
// its sequence's computed length never change while it is in a table or
// the prefix cache, so
//   - a block new in a table at positions the target has not computed yet
//     is fresh: valid 0 (it may have held anything before);
//   - a block new at computed positions is a prefix-cache hit or a fork's
//     share: it keeps valid (another sequence's draft may have filled it);
//   - a COW copy copies valid with the bytes;
//   - K/V the draft writes below the target's computed length (catch-up)
//     is final: mark();
//   - K/V it writes at the draft positions is tentative (the tokens may be
//     rejected): record_ahead() keeps it per sequence, and sync() marks
//     the part the target has since computed with the same tokens.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/paged_kv_cache.h"

namespace folio::engine {

class DraftKvCache {
 public:
  DraftKvCache(const model::ModelConfig& draft, std::int32_t num_blocks, std::int32_t block_size,
               kernels::KvDtype dtype);

  static std::size_t bytes_per_block(const model::ModelConfig& draft, std::int32_t block_size,
                                     kernels::KvDtype dtype) {
    return PagedKvCache::bytes_per_block(draft, block_size, dtype, /*windowed=*/false);
  }

  // Follows one plan (the target's cache follows the same one).
  void apply(const sched::SchedulerOutput& plan);
  // Marks the tentative K/V recorded for `seq` that `tokens` (the
  // sequence's tokens, positions 0 ..) confirm below `computed`, and
  // returns how many leading positions of `seq` have draft K/V (<= computed).
  std::int32_t sync(sched::SeqId seq, std::span<const TokenId> tokens, std::int32_t computed);
  // Positions [from, to) of `seq` now hold final draft K/V; `from` must not
  // exceed what it already had (covered()).
  void mark(sched::SeqId seq, std::int32_t from, std::int32_t to);
  // The draft wrote K/V for `tokens` at positions pos, pos + 1, ...
  // (tentative until sync() confirms them).
  void record_ahead(sched::SeqId seq, std::int32_t pos, std::span<const TokenId> tokens);
  // Leading positions of `seq` with draft K/V.
  std::int32_t covered(sched::SeqId seq) const;

  PagedKvCache& kv() { return cache_; }
  const PagedKvCache& kv() const { return cache_; }
  std::int32_t valid(kv::BlockId b) const { return valid_.at(static_cast<std::size_t>(b)); }

 private:
  struct Ahead {
    std::int32_t pos = 0;
    std::vector<TokenId> tokens;
  };

  const std::vector<kv::BlockId>& table(sched::SeqId seq) const;

  PagedKvCache cache_;
  std::vector<std::int32_t> valid_;  // per block id
  std::unordered_map<sched::SeqId, Ahead> ahead_;
};

}  // namespace folio::engine
