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
//   KvDtype::kI4   per group of 32 values (the last may be shorter; d even):
//                  n/2 bytes of 4-bit q + 8, value j of the group in the low
//                  nibble of byte j and value j + n/2 in the high one (as
//                  Q4_0), then after all groups' bytes ceil(d / 32) fp16
//                  scales: element = scale * q, q in [-8, 7], scale = m / -8
//                  for the group's value m of largest magnitude (as Q4_0)
// kv_head_bytes() is the one row-size formula: the paged and contiguous
// caches lay rows out with it, and every KV size folio reports (the pool's
// blocks, `folio info`) is a sum of it over layers and heads. KvDtype is
// defined here, once; --kv-cache-dtype parses into it.
#pragma once

#include <cstddef>
#include <string_view>

namespace folio::kernels {

enum class KvDtype { kF32, kF16, kI8, kI4 };

// --kv-cache-dtype: "auto" / "f16" / "float16", "f32" / "float32", "int8", "int4".
// Throws folio::Error naming the accepted values otherwise.
KvDtype parse_kv_dtype(std::string_view name);
// "f32", "f16", "int8", "int4" (as --kv-cache-dtype spells them).
const char* kv_dtype_name(KvDtype dtype);

inline constexpr std::size_t kKvI8Group = 32;
inline constexpr std::size_t kKvI4Group = 32;

std::size_t kv_head_bytes(KvDtype dtype, std::size_t head_dim);

// Writes n_heads head rows of x ([n_heads x head_dim] floats) to dst in `dtype`.
void kv_store_row(KvDtype dtype, const float* x, std::size_t n_heads, std::size_t head_dim,
                  void* dst);

// True when int4 rows of this head size are stored rotated: d a power of
// two >= 8. The row x is then kept as H x, H the normalized Walsh-Hadamard
// matrix (orthogonal and its own inverse), which spreads an outlier channel
// over the whole row before the 4-bit rounding; reading applies H again.
bool kv_i4_rotated(std::size_t head_dim);
// x <- H x in place (d a power of two): the fast Walsh-Hadamard transform
// scaled by 1/sqrt(d).
void kv_hadamard(float* x, std::size_t d);

// One head row back to f32 (exact for kF32/kF16; scale * q for kI8/kI4,
// rotated back for a rotated int4 row).
void kv_load_head(KvDtype dtype, const void* src, std::size_t head_dim, float* dst);
// The same without rotating back: a rotated int4 row comes out as H x. The
// attention kernels read this way and rotate the query instead (q . k =
// Hq . Hk) and the output once (sum p v = H sum p Hv), so no per-row
// transform is paid.
void kv_load_head_stored(KvDtype dtype, const void* src, std::size_t head_dim, float* dst);
// Values [first, head_dim) of an int4 head row as stored (first a multiple
// of kKvI4Group): the scalar decoder, also a SIMD loader's short last group.
void kv_load_i4_from(const void* src, std::size_t head_dim, std::size_t first, float* dst);

}  // namespace folio::kernels
