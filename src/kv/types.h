// kv/types.h: the small value types shared by the KV block bookkeeping.
//
// Block ids index the physical KV blocks allocated once at start-up; a block
// holds the K/V rows of `block_size` consecutive token positions of one
// sequence (or of several, while shared). kNoBlock marks "none".
#pragma once

#include <cstdint>
#include <vector>

#include "base/strong_id.h"
#include "base/token_id.h"

namespace folio::kv {

using BlockId = std::int32_t;
// One scheduler sequence (a request with n > 1 samples owns n of them).
// A strong type: an engine RequestId does not convert to it.
using SeqId = StrongId<struct SeqTag>;

inline constexpr BlockId kNoBlock = -1;

// A copy-on-write order for the model runner: copy the K/V data of every
// layer from physical block `src` to `dst` before the step's forward pass.
struct CowCopy {
  BlockId src = kNoBlock;
  BlockId dst = kNoBlock;
  bool operator==(const CowCopy&) const = default;
};

// What changed in one block table (one layer group of one sequence) in a
// step: the holder truncates its copy of the table to `blocks_from` entries,
// appends `block_ids`, and treats its entries [num_sink, num_skipped) as
// released placeholders (kNoBlock): blocks a sliding window no longer reads.
struct TableDelta {
  std::int32_t num_skipped = 0;
  std::int32_t blocks_from = 0;
  std::vector<BlockId> block_ids;
  std::int32_t num_sink = 0;
  bool operator==(const TableDelta&) const = default;
};

}  // namespace folio::kv
