// kernels/kv_prefetch.cpp: KvPrefetch's page walk.
#include "kernels/kv_prefetch.h"

#include <algorithm>
#include <cstdint>

namespace folio::kernels {

KvPrefetch::KvPrefetch(std::span<const KvPage> pages, std::size_t first, std::size_t end,
                       std::size_t row_bytes)
    : pages_(pages), row_bytes_(row_bytes), first_(first), end_(end) {
  std::size_t base = 0;
  for (const KvPage& p : pages) {
    if (base >= end) break;
    const std::size_t lo = std::max(base, first), hi = std::min(base + p.n_tokens, end);
    if (p.k != nullptr && lo < hi) remaining_ += (hi - lo) * row_bytes;
    base += p.n_tokens;
  }
  enter_page();
}

void KvPrefetch::enter_page() {
  for (; page_ < pages_.size() && page_base_ < end_; page_base_ += pages_[page_++].n_tokens) {
    const KvPage& p = pages_[page_];
    const std::size_t lo = std::max(page_base_, first_);
    const std::size_t hi = std::min(page_base_ + p.n_tokens, end_);
    if (p.k != nullptr && lo < hi) {
      offset_ = (lo - page_base_) * row_bytes_;
      page_end_ = (hi - page_base_) * row_bytes_;
      return;
    }
  }
  offset_ = page_end_ = 0;
}

void KvPrefetch::advance(std::size_t bytes) {
  bytes = std::min((bytes + 63) / 64 * 64, remaining_);  // whole cache lines
  remaining_ -= bytes;
  while (bytes > 0) {
    const KvPage& p = pages_[page_];
    const std::size_t n = std::min(bytes, page_end_ - offset_);
    const auto* k = static_cast<const std::uint8_t*>(p.k) + offset_;
    const auto* v = static_cast<const std::uint8_t*>(p.v) + offset_;
    // Into L2 (locality 2; measured on Zen 4: 3, into L1 over the current
    // call's rows, made a decode step over 32 sequences slower, not faster).
    for (std::size_t o = 0; o < n; o += 64) {
      __builtin_prefetch(k + o, 0, 2);
      __builtin_prefetch(v + o, 0, 2);
    }
    bytes -= n;
    offset_ += n;
    if (offset_ == page_end_) {
      page_base_ += p.n_tokens;
      ++page_;
      enter_page();
    }
  }
}

}  // namespace folio::kernels
