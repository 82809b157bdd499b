// kernels/cpu/attention_prims.h: the tile primitives of attention (internal).
//
// attention() walks K/V in tiles of up to tile_rows() positions. Each tile is
// first converted to dense f32 [nt x hd] (once per KV head, shared by all
// query heads of its group), then for each query token the group's query
// heads are scored together against it (each K row is loaded once for all of
// them), each head's exponentials are taken, and the p-weighted sums of the V
// rows are added into the group's outputs together. A single query at a
// level with scores_rows / accumulate_rows (f32, f16 at AVX2 and up) skips
// the conversion and reads the rows in the pages.
//
// The arithmetic of one (head, key) score and of one output element does not
// depend on how many heads are computed together, nor on the ISA level that
// runs the AVX2 primitives (the AVX-512 level uses them too): a score is
// eight lane sums of fused products over hd / 8 steps, added as
// ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), times scale; an output
// element adds p[j] * v[j] in key order.
#pragma once

#include <cstddef>

#include "kernels/attention.h"

namespace folio::kernels::cpu {

struct AttentionPrims {
  // dst[j*hd + i] = element i of the head row at src + j * row_bytes (layout
  // of kernels/kv_row.h for the dtype), as f32.
  void (*load_tile)(const void* src, std::size_t row_bytes, std::size_t nt, std::size_t hd,
                    float* dst);
  // s[g * s_stride + j] = scale * (q_g . k[j]) for the `heads` query rows
  // q_g = q + g * hd and the nt dense rows of k; max[g] = max_j of them.
  void (*scores)(const float* q, std::size_t heads, const float* k, std::size_t nt, std::size_t hd,
                 float scale, float* s, std::size_t s_stride, float* max);
  // s[j] = exp(s[j] - m); returns the sum of the new s[j].
  float (*exp_shift)(float* s, std::size_t nt, float m);
  // acc[g * hd + i] += sum_j p[g * p_stride + j] * v[j * hd + i] for g < heads.
  void (*accumulate)(const float* p, std::size_t p_stride, std::size_t heads, const float* v,
                     std::size_t nt, std::size_t hd, float* acc);
  // scores and accumulate reading the nt head rows in place, at k (or v) +
  // j * row_bytes in the dtype's layout, with the same arithmetic (so the
  // same bits) as load_tile followed by scores / accumulate. Null where the
  // level has none for the dtype: then the caller loads tiles.
  void (*scores_rows)(const float* q, std::size_t heads, const void* k, std::size_t row_bytes,
                      std::size_t nt, std::size_t hd, float scale, float* s, std::size_t s_stride,
                      float* max);
  void (*accumulate_rows)(const float* p, std::size_t p_stride, std::size_t heads, const void* v,
                          std::size_t row_bytes, std::size_t nt, std::size_t hd, float* acc);
};

// A level's primitives for each KV dtype (they differ in load_tile).
struct AttentionPrimsByDtype {
  AttentionPrims f32, f16, i8, i4;

  const AttentionPrims& operator[](KvDtype dtype) const {
    switch (dtype) {
      case KvDtype::kF16:
        return f16;
      case KvDtype::kI8:
        return i8;
      case KvDtype::kI4:
        return i4;
      case KvDtype::kF32:
        break;
    }
    return f32;
  }
};

// The f32 load_tile (a strided row copy), shared by every ISA.
void load_tile_f32(const void* src, std::size_t row_bytes, std::size_t nt, std::size_t hd,
                   float* dst);

const AttentionPrims& scalar_attention_prims(KvDtype dtype);
const AttentionPrims& avx2_attention_prims(KvDtype dtype);
const AttentionPrims& avx512_attention_prims(KvDtype dtype);  // also the AMX level

}  // namespace folio::kernels::cpu
