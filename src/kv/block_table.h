// kv/block_table.h: one sequence's logical -> physical block map.
//
// Logical block i holds token positions [i*B, (i+1)*B) of the sequence
// (B = block_size). `num_slots` is how many leading positions have a slot
// reserved (computed tokens plus the ones scheduled this step); the last
// block may be partly used:
//
//   positions  0..15 | 16..31 | 32..37 ......
//   blocks   [  b4   |  b11   |  b2 (6/16 used) ]     num_slots = 38
//
// In a sliding-window group (kv_groups.h) the entries [num_sink,
// num_skipped) are kNoBlock placeholders: blocks no query reads any more,
// released to the pool (num_sink > 0 keeps a sink + window policy's first
// blocks). Positions keep their block index, so the attention kernel masks
// by position and never touches a placeholder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kv/types.h"

namespace folio::kv {

struct BlockTable {
  std::vector<BlockId> blocks;
  std::int32_t num_slots = 0;
  std::int32_t num_sink = 0;     // leading blocks kept before the released ones
  std::int32_t num_skipped = 0;  // end of the released run (none when <= num_sink)
  // Released placeholders held at the table's front end.
  std::int32_t num_released() const { return num_skipped > num_sink ? num_skipped - num_sink : 0; }

  std::int32_t size() const { return static_cast<std::int32_t>(blocks.size()); }
  BlockId operator[](std::int32_t i) const { return blocks[static_cast<std::size_t>(i)]; }
};

}  // namespace folio::kv
