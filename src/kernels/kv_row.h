// kernels/kv_row.h: the bytes of one token's K (or V) row in a KV cache, for
// each cached element type, and the conversions into and out of them.
//
// A token row of one layer is n_kv_heads head rows back to back; a head row
// of d values is
//   KvDtype::kF32  d floats
//   KvDtype::kF16  d IEEE half floats
//   KvDtype::kI8   d int8 q, then ceil(d / 32) fp16 scales: element i is
//                  scale[i / 32] * q[i], scale = max|x| / 127 of its group
//                  (as Q8_0), |q| <= 127
// kv_head_bytes() is the one row-size formula: the paged and contiguous
// caches lay rows out with it, and every KV size folio reports (the pool's
// blocks, `folio info`) is a sum of it over layers and heads. KvDtype is
// defined here, once; --kv-cache-dtype parses into it.
#pragma once

#include <cstddef>
#include <string_view>

namespace folio::kernels {

enum class KvDtype { kF32, kF16, kI8 };

// --kv-cache-dtype: "auto" / "f16" / "float16", "f32" / "float32", "int8".
// Throws folio::Error naming the accepted values otherwise.
KvDtype parse_kv_dtype(std::string_view name);
// "f32", "f16", "int8" (as --kv-cache-dtype spells them).
const char* kv_dtype_name(KvDtype dtype);

inline constexpr std::size_t kKvI8Group = 32;

std::size_t kv_head_bytes(KvDtype dtype, std::size_t head_dim);

// Writes n_heads head rows of x ([n_heads x head_dim] floats) to dst in `dtype`.
void kv_store_row(KvDtype dtype, const float* x, std::size_t n_heads, std::size_t head_dim,
                  void* dst);

// One head row back to f32 (exact for kF32/kF16; scale * q for kI8).
void kv_load_head(KvDtype dtype, const void* src, std::size_t head_dim, float* dst);

}  // namespace folio::kernels
