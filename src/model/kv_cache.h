// model/kv_cache.h: the interface between a forward pass and K/V storage.
//
// The forward pass never owns K/V memory. For each layer it computes the K and
// V rows of every token in the batch, hands them to store(), and then asks
// pages() for the page list of each sequence, which it passes to the
// attention kernel. A simple contiguous cache (contiguous_kv_cache.h) is one
// page per sequence and layer; the paged engine's cache returns its blocks in
// order. Row layout inside a page: [n_tokens x n_kv_heads x head_dim].
//
// Call order in one forward:  begin(batch)  then per layer: store()* pages()*
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/attention.h"
#include "model/batch.h"

namespace folio::model {

class KvCache {
 public:
  virtual ~KvCache() = default;

  virtual kernels::KvDtype dtype() const = 0;

  // Prepares storage for every (sequence, position) of `batch` before any of
  // it is computed. Throws folio::Error when a sequence id is unknown, the
  // batch would exceed the cache's capacity, or it would leave a gap (a
  // position beyond the sequence's current length): positions of a sequence
  // must continue it, or rewrite positions it already holds.
  virtual void begin(const Batch& batch) = 0;

  // Stores one token's K and V rows (f32, n_kv_heads * head_dim each),
  // converting to dtype().
  virtual void store(std::size_t layer, std::int32_t seq, std::size_t pos, const float* k,
                     const float* v) = 0;

  // Replaces `out` with the pages holding positions [0, n_tokens) of `seq`
  // in `layer`, in order (the last page may be cut short).
  virtual void pages(std::size_t layer, std::int32_t seq, std::size_t n_tokens,
                     std::vector<kernels::KvPage>& out) const = 0;
};

}  // namespace folio::model
