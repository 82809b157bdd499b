// kv/free_block_list.h: the intrusive doubly-linked list of free KV blocks.
//
// Every block whose reference count is 0 is on this list, in LRU order:
// allocation pops the front (least recently freed), freeing appends at the
// back. A free block may still hold a cached prefix (its hash stays in the
// prefix map until the block is popped and reused), so this one list is
// both the free list and the eviction order. Links are two int arrays
// indexed by block id plus one sentinel, so every operation is O(1) and
// nothing is allocated after construction:
//
//   sentinel <-> b7 <-> b2 <-> b9 <-> sentinel      (front = b7, back = b9)
#pragma once

#include <cstdint>
#include <vector>

#include "kv/types.h"

namespace folio::kv {

class FreeBlockList {
 public:
  // Starts with blocks 0 .. num_blocks-1 on the list, in order.
  explicit FreeBlockList(std::int32_t num_blocks);

  std::int32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool contains(BlockId b) const { return in_list_[static_cast<std::size_t>(b)] != 0; }

  BlockId front() const;  // kNoBlock when empty
  BlockId pop_front();    // requires !empty()
  void push_back(BlockId b);
  // Inserts `b` right after `prev`; prev == kNoBlock means at the front.
  void insert_after(BlockId prev, BlockId b);
  void remove(BlockId b);
  // The block before `b` on the list (kNoBlock when `b` is the front).
  BlockId prev_of(BlockId b) const;

  // Front-to-back order (tests and diagnostics; O(n)).
  std::vector<BlockId> to_vector() const;

 private:
  // Maps kNoBlock to the sentinel's slot.
  std::int32_t node(BlockId b) const { return b == kNoBlock ? sentinel_ : b; }
  std::int32_t sentinel_;
  std::vector<std::int32_t> prev_;
  std::vector<std::int32_t> next_;
  std::vector<unsigned char> in_list_;
  std::int32_t size_ = 0;
};

}  // namespace folio::kv
