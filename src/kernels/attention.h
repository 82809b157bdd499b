// kernels/attention.h: causal attention over (possibly paged) K/V, computed
// tile by tile with online softmax: the score matrix is never materialized,
// memory is O(head_dim) per query head.
//
// K/V for one sequence and one layer are a list of pages; page p holds
// n_tokens consecutive positions, each a row of [n_kv_heads x head_dim]
// elements (row stride = n_kv_heads * head_dim). A contiguous cache is one
// page; the paged engine passes its blocks in order.
//
// Grouped-query attention: query head h reads KV head h / (n_heads / n_kv_heads)
// in place, nothing is copied per head.
#pragma once

#include <cstddef>
#include <span>

#include "kernels/kv_row.h"

namespace folio::kernels {

class KvPrefetch;

struct KvPage {
  const void* k;  // [n_tokens x n_kv_heads x head_dim] of KvDtype
  const void* v;
  std::size_t n_tokens;
};

struct AttentionShape {
  std::size_t n_heads;
  std::size_t n_kv_heads;
  std::size_t head_dim;
  float scale;  // usually 1/sqrt(head_dim)
  KvDtype kv_dtype;
  std::size_t window;     // sliding window in tokens, 0 = none
  float softcap;          // logit soft-capping (Gemma 2), 0 = none
  std::size_t sinks = 0;  // with a window: positions [0, sinks) are read too (attention sinks)
};

// One query token at absolute position `pos`. It attends to positions
// first .. pos, first = max(0, pos - window + 1), and, when sinks > 0, to
// the sinks 0 .. sinks - 1 too: as part of one range 0 .. pos when first <=
// sinks, else scored against `q_sink` (the query rotated for them,
// base/attention_window.h; nullptr: q itself). Those positions must all be
// present in `pages`; a page wholly outside them is never read and may have
// k = v = nullptr, as the blocks a paged window released do. The sinks are
// visited first, then the window, in tiles aligned to multiples of the tile
// size. q, q_sink: [n_heads x head_dim]; out: [n_heads x head_dim].
void attention(const float* q, std::size_t pos, std::span<const KvPage> pages,
               const AttentionShape& shape, float* out, const float* q_sink = nullptr);

// nq query tokens of one sequence at consecutive positions pos0 .. pos0+nq-1
// (a prefill chunk): q, q_sink and out hold nq rows of [n_heads x head_dim].
// Each K/V tile is gathered once for all of them; row i is bit-identical to
// attention(q + i * row, pos0 + i, ..., q_sink + i * row), whatever nq.
void attention_rows(const float* q, std::size_t nq, std::size_t pos0, std::span<const KvPage> pages,
                    const AttentionShape& shape, float* out, const float* q_sink = nullptr);

// The same for the query heads of KV heads [kv_head_begin, kv_head_end)
// only: their parts of `out` are written, the rest is left alone, so calls
// over disjoint head ranges may run in parallel on one output (a long decode
// of few sequences spreads over the threads). Bit-identical to the heads'
// part of attention_rows. With `next` (a later call's rows,
// kv_prefetch.h), the call also requests those, spread over its own tiles,
// and the rest before it returns.
void attention_rows_heads(const float* q, std::size_t nq, std::size_t pos0,
                          std::span<const KvPage> pages, const AttentionShape& shape, float* out,
                          const float* q_sink, std::size_t kv_head_begin, std::size_t kv_head_end,
                          KvPrefetch* next = nullptr);

// Reference: materializes the scores, plain softmax in f64. Test oracle only.
void attention_ref(const float* q, std::size_t pos, std::span<const KvPage> pages,
                   const AttentionShape& shape, float* out, const float* q_sink = nullptr);

}  // namespace folio::kernels
