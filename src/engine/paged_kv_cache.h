// engine/paged_kv_cache.h: the model's KvCache over the scheduler's KV blocks.
//
// All K/V memory is ONE allocation made at start-up (num_blocks blocks of
// block_size token positions); requests never allocate outside it. Block ids
// are the BlockPool's: the scheduler decides which physical block holds
// which positions, this class only stores bytes and keeps the runner's copy
// of each sequence's block table, following the plans' deltas.
//
// Layer groups (kv/kv_groups.h): a block belongs to one group and holds
// the K/V of that group's `slots` layers; a sequence has one table per
// group. Memory layout, per slot s (row_s = the widest row of the layers in
// slot s, n_kv_heads * head_dim elements):
//
//   base + slot_off[s]:  [ block 0: K rows | V rows ][ block 1: K | V ] ...
//                          each half = block_size x row_s bytes, a token row
//                          being n_kv_heads head rows as in kernels/kv_row.h
//                          (f32, f16, or int8 with fp16 group scales)
//
// so one block of layer l is one kernels::KvPage {K, V, n_tokens} at slot
// slot(l), and pages() returns the blocks of the table of group(l) in
// order. A table entry a sliding window released (kNoBlock) is a page with
// no bytes (k = v = nullptr): the kernel never reads before the window.
// Without windows (or with `windowed` false) there is one group of every
// layer, one slot per layer: the layout of a plain paged cache.
//
// Per step:  apply(plan)  (drop finished/preempted tables, apply deltas,
//            run COW copies)  then  bind(plan)  (batch seq id i == i-th
//            scheduled request)  then model.forward(batch, *this, ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "kernels/attention.h"
#include "kv/kv_groups.h"
#include "kv/types.h"
#include "model/config.h"
#include "model/kv_cache.h"
#include "sched/scheduler_output.h"

namespace folio::engine {

class PagedKvCache final : public model::KvCache {
 public:
  // Allocates num_blocks * bytes_per_block(config, block_size, dtype,
  // windowed) bytes. `windowed`: group the layers by their sliding window
  // (layout()); false: one group, every position of every layer kept.
  PagedKvCache(const model::ModelConfig& config, std::int32_t num_blocks, std::int32_t block_size,
               kernels::KvDtype dtype, bool windowed = true);

  // The layer groups of `config`: by sliding window when `windowed`.
  static kv::KvGroupLayout layout(const model::ModelConfig& config, bool windowed = true);
  // Bytes of one block (K and V of one group's slots).
  static std::size_t bytes_per_block(const model::ModelConfig& config, std::int32_t block_size,
                                     kernels::KvDtype dtype, bool windowed = true);

  kernels::KvDtype dtype() const override { return dtype_; }
  void begin(const model::Batch& batch) override;
  void store(std::size_t layer, std::int32_t seq, std::size_t pos, const float* k,
             const float* v) override;
  void pages(std::size_t layer, std::int32_t seq, std::size_t n_tokens,
             std::vector<kernels::KvPage>& out) const override;

  // Follows one plan: forgets finished and preempted sequences, applies the
  // block-table deltas of the scheduled ones (a cache with fewer groups
  // than the plan follows its first groups), then copies the K/V of every
  // COW pair (all slots).
  void apply(const sched::SchedulerOutput& plan);
  // Batch sequence id i refers to plan.requests[i] in the next forward.
  void bind(const sched::SchedulerOutput& plan);
  // Batch sequence id i refers to seqs[i] (a forward outside a plan: drafts).
  void bind(std::span<const sched::SeqId> seqs);

  std::int32_t num_blocks() const { return num_blocks_; }
  std::int32_t block_size() const { return block_size_; }
  std::size_t total_bytes() const { return total_bytes_; }
  std::size_t num_tables() const { return tables_.size(); }
  const kv::KvGroupLayout& groups() const { return layout_; }
  // Group `group`'s table of `id`, or nullptr when it has none.
  const std::vector<kv::BlockId>* table(sched::SeqId id, std::size_t group = 0) const;
  // The K row `seq` holds at `pos` in `layer`, as floats (n_kv_heads x
  // head_dim): for tests and debugging.
  std::vector<float> k_row(std::size_t layer, sched::SeqId seq, std::size_t pos) const;

 private:
  std::byte* block_k(std::size_t layer, kv::BlockId b) const;
  std::byte* block_v(std::size_t layer, kv::BlockId b) const;
  void copy_block(kv::BlockId src, kv::BlockId dst);
  using Tables = std::vector<std::vector<kv::BlockId>>;  // per group
  const std::vector<kv::BlockId>& bound(std::int32_t seq, std::size_t layer) const;

  struct FreeBytes {
    void operator()(std::byte* p) const;
  };

  kernels::KvDtype dtype_;
  std::int32_t num_blocks_;
  std::int32_t block_size_;
  std::size_t head_dim_ = 0;
  kv::KvGroupLayout layout_;
  std::vector<std::size_t> n_kv_heads_;  // per layer
  std::vector<std::size_t> row_;         // per layer: bytes per token row (kernels/kv_row.h)
  std::vector<std::size_t> half_bytes_;  // per slot: bytes of K (or V) of one block
  std::vector<std::size_t> slot_off_;    // per slot: byte offset of block 0
  std::size_t total_bytes_ = 0;
  std::unique_ptr<std::byte[], FreeBytes> mem_;
  std::unordered_map<sched::SeqId, Tables> tables_;
  std::vector<const Tables*> bound_;  // batch seq id -> tables
};

}  // namespace folio::engine
