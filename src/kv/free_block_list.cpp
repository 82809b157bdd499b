#include "kv/free_block_list.h"

#include "base/error.h"

namespace folio::kv {

FreeBlockList::FreeBlockList(std::int32_t num_blocks)
    : sentinel_(num_blocks),
      prev_(static_cast<std::size_t>(num_blocks) + 1),
      next_(static_cast<std::size_t>(num_blocks) + 1),
      in_list_(static_cast<std::size_t>(num_blocks), 0) {
  FOLIO_CHECK(num_blocks >= 0);
  auto s = static_cast<std::size_t>(sentinel_);
  prev_[s] = next_[s] = sentinel_;
  for (BlockId b = 0; b < num_blocks; ++b) push_back(b);
}

BlockId FreeBlockList::front() const {
  std::int32_t f = next_[static_cast<std::size_t>(sentinel_)];
  return f == sentinel_ ? kNoBlock : f;
}

BlockId FreeBlockList::pop_front() {
  BlockId b = front();
  FOLIO_CHECK(b != kNoBlock, "pop_front on an empty free list");
  remove(b);
  return b;
}

void FreeBlockList::push_back(BlockId b) {
  std::int32_t last = prev_[static_cast<std::size_t>(sentinel_)];
  insert_after(last == sentinel_ ? kNoBlock : last, b);
}

void FreeBlockList::insert_after(BlockId prev, BlockId b) {
  FOLIO_CHECK(b >= 0 && b < sentinel_ && !contains(b), "block already free or out of range");
  FOLIO_CHECK(prev == kNoBlock || contains(prev), "insert_after a block not on the list");
  auto p = static_cast<std::size_t>(node(prev));
  auto n = static_cast<std::size_t>(next_[p]);
  auto i = static_cast<std::size_t>(b);
  prev_[i] = static_cast<std::int32_t>(p);
  next_[i] = static_cast<std::int32_t>(n);
  next_[p] = b;
  prev_[n] = b;
  in_list_[i] = 1;
  ++size_;
}

void FreeBlockList::remove(BlockId b) {
  FOLIO_CHECK(b >= 0 && b < sentinel_ && contains(b), "removing a block not on the free list");
  auto i = static_cast<std::size_t>(b);
  auto p = static_cast<std::size_t>(prev_[i]);
  auto n = static_cast<std::size_t>(next_[i]);
  next_[p] = static_cast<std::int32_t>(n);
  prev_[n] = static_cast<std::int32_t>(p);
  in_list_[i] = 0;
  --size_;
}

BlockId FreeBlockList::prev_of(BlockId b) const {
  FOLIO_CHECK(contains(b));
  std::int32_t p = prev_[static_cast<std::size_t>(b)];
  return p == sentinel_ ? kNoBlock : p;
}

std::vector<BlockId> FreeBlockList::to_vector() const {
  std::vector<BlockId> out;
  out.reserve(static_cast<std::size_t>(size_));
  for (std::int32_t i = next_[static_cast<std::size_t>(sentinel_)]; i != sentinel_;
       i = next_[static_cast<std::size_t>(i)])
    out.push_back(i);
  return out;
}

}  // namespace folio::kv
