// kernels/kv_prefetch.h: KvPrefetch, a cursor that requests a later
// attention call's K/V rows into the L2 cache a piece at a time.
//
// A batched decode step reads every sequence's K/V from DRAM, one attention
// call per sequence, each from pages that lie anywhere in the pool (the
// hardware prefetcher loses the stream at every page). Arithmetic on rows in
// cache and the wait for the next call's rows then take turns. A call given
// the next call's cursor spreads that call's requests over its own tiles, so
// the two overlap. A hint only: what is computed never depends on it.
#pragma once

#include <cstddef>
#include <span>

#include "kernels/attention.h"

namespace folio::kernels {

class KvPrefetch {
 public:
  KvPrefetch() = default;  // nothing to request
  // Positions [first, end) of `pages` (which must cover them), rows of
  // `row_bytes` (every KV head of a position). Pages without rows (k ==
  // nullptr: released by a window) are skipped.
  KvPrefetch(std::span<const KvPage> pages, std::size_t first, std::size_t end,
             std::size_t row_bytes);

  // Bytes of K (and as many of V) not yet requested.
  std::size_t remaining() const { return remaining_; }
  // Requests the next `bytes` of K and as many of V (fewer at the end).
  void advance(std::size_t bytes);

 private:
  std::span<const KvPage> pages_;
  std::size_t row_bytes_ = 0;
  std::size_t page_ = 0;       // the page the cursor is in
  std::size_t offset_ = 0;     // byte offset in that page's K of the next request
  std::size_t page_end_ = 0;   // and the end of its part to request
  std::size_t page_base_ = 0;  // the position at which the cursor's page starts
  std::size_t first_ = 0, end_ = 0;
  std::size_t remaining_ = 0;
  void enter_page();  // the first page at or after page_ with rows in [first_, end_)
};

}  // namespace folio::kernels
