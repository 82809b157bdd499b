// kernels/cpu/attention_prims.h: the tile primitives of attention (internal).
//
// attention() walks K/V in tiles of up to tile_rows() positions. Each tile is
// first converted to dense f32 [nt x hd] (once per KV head, shared by all
// query heads of its group), then for each query head: nt scores, their
// exponentials, and the p-weighted sum of the V rows.
#pragma once

#include <cstddef>

#include "kernels/attention.h"

namespace folio::kernels::cpu {

struct AttentionPrims {
  // dst[j*hd + i] = element i of the head row at src + j * row_bytes (layout
  // of kernels/kv_row.h for the dtype), as f32.
  void (*load_tile)(const void* src, std::size_t row_bytes, std::size_t nt, std::size_t hd,
                    float* dst);
  // s[j] = scale * (q . k[j]) for the nt dense rows of k.
  void (*scores)(const float* q, const float* k, std::size_t nt, std::size_t hd, float scale,
                 float* s);
  // s[j] = exp(s[j] - m); returns the sum of the new s[j].
  float (*exp_shift)(float* s, std::size_t nt, float m);
  // acc[i] += sum_j p[j] * v[j*hd + i].
  void (*accumulate)(const float* p, const float* v, std::size_t nt, std::size_t hd, float* acc);
};

// The f32 load_tile (a strided row copy), shared by every ISA.
void load_tile_f32(const void* src, std::size_t row_bytes, std::size_t nt, std::size_t hd,
                   float* dst);

const AttentionPrims& scalar_attention_prims(KvDtype dtype);
const AttentionPrims& avx2_attention_prims(KvDtype dtype);

}  // namespace folio::kernels::cpu
