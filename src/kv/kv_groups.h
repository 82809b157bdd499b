// kv/kv_groups.h: layers grouped by attention type, so one block pool can
// serve full-attention and sliding-window layers (vLLM's hybrid KV manager).
//
// A physical block holds `slots` layers' K/V for block_size positions. Each
// block belongs to one group; a sequence has one block table per group.
// Layers of one attention type (one window) are cut into groups of `slots`
// layers, slots = the smallest type's layer count, so every group fills a
// block (a type whose count is not a multiple leaves slots unused in its last
// group). Full-attention groups come first: group 0 holds every position
// whenever the model has a full-attention layer.
//
//   Gemma 3 270M: 18 layers, layers 5, 11, 17 global, the rest window 512
//     slots = 3; group 0 = {5, 11, 17} (full);
//     groups 1..5 = {0,1,2} {3,4,6} {7,8,9} {10,12,13} {14,15,16} (window 512)
//   SmolLM2 (no window): one group of all 30 layers, slots = 30.
//
// A sliding group's table releases every block that lies wholly before the
// window of the step's first query (kept as a kNoBlock placeholder), so a
// sequence holds about (W + step tokens) / block_size blocks there however
// long it grows. Pure integer logic.
//
// A sequence may also run under a sink + window policy of its own
// (base/attention_window.h, any model): then every group it applies to
// keeps its first ceil(sinks / block_size) blocks and releases the blocks
// between them and the window (placeholders again), so the sequence's
// memory stays flat however long the document grows.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/attention_window.h"

namespace folio::kv {

struct KvGroup {
  std::int32_t window = 0;  // positions a query sees, itself included; 0: all (full attention)
  bool operator==(const KvGroup&) const = default;
};

struct KvGroupLayout {
  std::vector<KvGroup> groups;
  std::vector<std::int32_t> layer_group;  // per layer: its group
  std::vector<std::int32_t> layer_slot;   // per layer: its slot in that group's blocks
  std::int32_t slots = 0;                 // layers per block
};

// Groups layers by window (0 = full attention), per the rules above. An empty
// span gives no groups. Windows must be >= 0 (FOLIO_CHECK).
KvGroupLayout group_layers(std::span<const std::int32_t> layer_windows);

// Leading blocks of a table that no query at position >= num_computed reads
// when queries see `window` positions (0: none are skipped).
std::int32_t skipped_blocks(std::int32_t window, std::int32_t block_size,
                            std::int64_t num_computed);

// The blocks [lo, hi) of a table that no query at position >= num_computed
// reads under `w` (an effective window: effective_window(group, policy)):
// lo = the sink blocks kept, hi = skipped_blocks (never below lo).
struct BlockRange {
  std::int32_t lo = 0;
  std::int32_t hi = 0;
  bool operator==(const BlockRange&) const = default;
};
BlockRange released_blocks(const AttentionWindow& w, std::int32_t block_size,
                           std::int64_t num_computed);

// Most blocks one sequence of `positions` positions ever holds over all
// `groups` (empty: one full group) when a step computes at most
// `max_step_tokens` of its positions: a full group holds every position, a
// sliding group (or one under the sequence's `policy`) at most its sink
// blocks plus the window plus one step (and never more than the full need).
std::int64_t max_blocks_per_seq(std::span<const KvGroup> groups, std::int32_t block_size,
                                std::int64_t positions, std::int64_t max_step_tokens,
                                const AttentionWindow& policy = {});
// The same pool keeping every position of every group (what the window saves
// against): ceil(positions / block_size) per group.
std::int64_t every_position_blocks(std::span<const KvGroup> groups, std::int32_t block_size,
                                   std::int64_t positions);

}  // namespace folio::kv
