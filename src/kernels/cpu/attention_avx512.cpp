// kernels/cpu/attention_avx512.cpp: the AVX-512 level's attention primitives
// (also the AMX level's): 512-bit registers, the AVX2 level's arithmetic.
//
// With 32 registers, up to four query heads are scored and three
// accumulated together, so each K and V row is loaded once for them. The
// vectors are 512 bits wide, yet every lane does what an AVX2 lane does, in
// the same order, so the two levels are bit-identical:
//   scores: a register holds two heads' 8-float chunks (low half, high half)
//     against one key's chunk in both halves; each half is one of the AVX2
//     level's eight-lane accumulators, reduced by the same tree (a third
//     head runs in a 256-bit register against the key's low half);
//   accumulate: an output element adds p[j] * v[j] in key order, 16 of them
//     per register instead of 8;
//   exp_shift: the same exponential per lane, and the 16 results added into
//     the eight-lane sum as its two halves, low first.
// On a core with two 512-bit FMA units (Intel Xeon) that doubles the products
// per instruction; Zen 4 splits a 512-bit operation in two. The K/V tile
// loads are the AVX2 level's; the in-place forms read f32 / f16 rows through
// attn's row types with 512-bit loads added.
// GCC 12 reports -W(maybe-)uninitialized inside its own AVX-512 intrinsics
// (_mm512_insertf32x8 and the conversions start from _mm512_undefined_*; GCC
// bug 105593, fixed in GCC 13): not about our code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/attention_blocks.h"
#include "kernels/cpu/attention_prims.h"
#include "kernels/cpu/avx2_util.h"
#include "kernels/cpu/avx512_util.h"

FOLIO_AVX512_BEGIN
namespace folio::kernels::cpu {

namespace {

using attn::in_register;
using attn::row_max;
using attn::tree4;

// Whether `rest` heads start with a block of three: when the rest then
// splits into threes and twos (3, 5 = 3 + 2, 6 = 3 + 3, 7 = 3 + 2 + 2), not
// when a one would be left over (4 = 2 + 2, not 3 + 1).
constexpr bool take_three(std::size_t rest) {
  return rest >= 3 && (rest % 2 == 1 || rest % 3 == 0);
}

FOLIO_ATTN_INLINE __m512 in_register(__m512 v) {
  __asm__("" : "+v"(v));
  return v;
}

FOLIO_ATTN_INLINE __m256 low_half(__m512 v) {
  return _mm512_castps512_ps256(v);
}

FOLIO_ATTN_INLINE __m256 high_half(__m512 v) {
  return _mm512_extractf32x8_ps(v, 1);
}

// _mm256_hadd_ps's sums in each 128-bit lane of a 512-bit register:
// [a0 + a1, a2 + a3, b0 + b1, b2 + b3].
FOLIO_ATTN_INLINE __m512 hadd(__m512 a, __m512 b) {
  return _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

// tree4 for two heads at once: z_r holds key r's eight lane sums of head a
// (low half) and of head b (high half); the scores of keys 0-3 come back in
// the lowest 128-bit lane (head a) and the third (head b), each added as
// tree4 adds it.
FOLIO_ATTN_INLINE __m512 tree4_pair(__m512 z0, __m512 z1, __m512 z2, __m512 z3) {
  const __m512 t = hadd(hadd(z0, z1), hadd(z2, z3));
  return _mm512_add_ps(t, _mm512_shuffle_f32x4(t, t, _MM_SHUFFLE(3, 3, 1, 1)));
}

// attn's row forms (dense tile, f32 / f16 in place) with the 512-bit loads.
struct F32Rows : attn::F32Rows {
  // Floats i .. i+7 of row j in both halves.
  FOLIO_ATTN_INLINE __m512 bcast8(std::size_t j, std::size_t i) const {
    return _mm512_broadcast_f32x8(_mm256_loadu_ps(at(j, i)));
  }
  FOLIO_ATTN_INLINE __m512 load16(std::size_t j, std::size_t i) const {
    return _mm512_loadu_ps(at(j, i));
  }
};

struct F16Rows : attn::F16Rows {
  FOLIO_ATTN_INLINE __m512 bcast8(std::size_t j, std::size_t i) const {
    return _mm512_cvtph_ps(
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at(j, i)))));
  }
  FOLIO_ATTN_INLINE __m512 load16(std::size_t j, std::size_t i) const {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at(j, i))));
  }
};

// 2NP (+1 if ODD) heads x NK keys (NK a multiple of 4), hd % 8 == 0: a
// register holds a pair of heads' 8-float chunks (low half, high half)
// against one key's chunk in both halves; the odd head runs in the 256-bit
// registers, against the key register's low half. Each K chunk is loaded
// once for all the heads, each head pair's chunk once for all NK keys.
template <int NP, bool ODD, int NK, class Rows>
FOLIO_ATTN_INLINE void score_block_pairs(const float* q, const Rows& k, std::size_t j0,
                                         std::size_t hd, __m512 scale, float* s,
                                         std::size_t s_stride) {
  __m512 a[std::max(NP, 1)][NK];
  __m256 b[NK];
  for (int p = 0; p < NP; ++p)
    for (int r = 0; r < NK; ++r) a[p][r] = _mm512_setzero_ps();
  if constexpr (ODD)
    for (int r = 0; r < NK; ++r) b[r] = _mm256_setzero_ps();
  const float* qo = q + 2 * NP * hd;  // the odd head
  for (std::size_t i = 0; i < hd; i += 8) {
    __m512 qv[std::max(NP, 1)];
    for (int p = 0; p < NP; ++p) {
      const float* qp = q + 2 * p * hd + i;
      qv[p] = in_register(_mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(qp)),
                                             _mm256_loadu_ps(qp + hd), 1));
    }
    __m256 qb = _mm256_setzero_ps();
    if constexpr (ODD) qb = in_register(_mm256_loadu_ps(qo + i));
    for (int r = 0; r < NK; ++r) {
      const __m512 kv = in_register(k.bcast8(j0 + r, i));
      for (int p = 0; p < NP; ++p) a[p][r] = _mm512_fmadd_ps(qv[p], kv, a[p][r]);
      if constexpr (ODD) b[r] = _mm256_fmadd_ps(qb, low_half(kv), b[r]);
    }
  }
  for (int p = 0; p < NP; ++p) {
    for (int r = 0; r < NK; r += 4) {
      const __m512 t =
          _mm512_mul_ps(tree4_pair(a[p][r], a[p][r + 1], a[p][r + 2], a[p][r + 3]), scale);
      _mm_storeu_ps(s + 2 * p * s_stride + r, _mm512_castps512_ps128(t));
      _mm_storeu_ps(s + (2 * p + 1) * s_stride + r, _mm512_extractf32x4_ps(t, 2));
    }
  }
  if constexpr (ODD) {
    for (int r = 0; r < NK; r += 4) {
      const __m128 t = tree4(b[r], b[r + 1], b[r + 2], b[r + 3]);
      _mm_storeu_ps(s + 2 * NP * s_stride + r, _mm_mul_ps(t, _mm512_castps512_ps128(scale)));
    }
  }
}

// Heads [0, 2NP + ODD) against all nt keys: NK at a time, then four, then
// one by one.
template <int NP, bool ODD, int NK, class Rows>
FOLIO_ATTN_INLINE void score_heads_512(const float* q, const Rows& k, std::size_t nt,
                                       std::size_t hd, float scale, float* s,
                                       std::size_t s_stride) {
  std::size_t j = 0;
  if (hd % 8 == 0) {
    const __m512 vs = _mm512_set1_ps(scale);
    for (; j + NK <= nt; j += NK) score_block_pairs<NP, ODD, NK>(q, k, j, hd, vs, s + j, s_stride);
    for (; j + 4 <= nt; j += 4) score_block_pairs<NP, ODD, 4>(q, k, j, hd, vs, s + j, s_stride);
  }
  constexpr int kHeads = 2 * NP + (ODD ? 1 : 0);
  for (; j < nt; ++j) {
    for (int h = 0; h < kHeads; ++h) s[h * s_stride + j] = attn::dot1(q + h * hd, k, j, hd) * scale;
  }
}

// acc[h][0 .. 16C) += sum_j p[h][j] v[j][0 .. 16C) for NH heads.
template <int NH, int C, class Rows>
FOLIO_ATTN_INLINE void accumulate_chunk_512(const float* p, std::size_t p_stride, const Rows& v,
                                            std::size_t i, std::size_t nt, std::size_t hd,
                                            float* acc) {
  __m512 a[NH][C];
  for (int h = 0; h < NH; ++h)
    for (int c = 0; c < C; ++c) a[h][c] = _mm512_loadu_ps(acc + h * hd + 16 * c);
  for (std::size_t j = 0; j < nt; ++j) {
    __m512 vv[C];
    for (int c = 0; c < C; ++c) vv[c] = in_register(v.load16(j, i + 16 * c));
    for (int h = 0; h < NH; ++h) {
      const __m512 pj = in_register(_mm512_set1_ps(p[h * p_stride + j]));
      for (int c = 0; c < C; ++c) a[h][c] = _mm512_fmadd_ps(pj, vv[c], a[h][c]);
    }
  }
  for (int h = 0; h < NH; ++h)
    for (int c = 0; c < C; ++c) _mm512_storeu_ps(acc + h * hd + 16 * c, a[h][c]);
}

// Heads [0, NH): chunks of 16C floats, then of 64, 32, 16, then accumulate_rest.
template <int NH, int C, class Rows>
FOLIO_ATTN_INLINE void accumulate_heads_512(const float* p, std::size_t p_stride, const Rows& v,
                                            std::size_t nt, std::size_t hd, float* acc) {
  std::size_t i = 0;
  for (; i + 16 * C <= hd; i += 16 * C)
    accumulate_chunk_512<NH, C>(p, p_stride, v, i, nt, hd, acc + i);
  if constexpr (C > 4) {
    for (; i + 64 <= hd; i += 64) accumulate_chunk_512<NH, 4>(p, p_stride, v, i, nt, hd, acc + i);
  }
  if constexpr (C > 2) {
    for (; i + 32 <= hd; i += 32) accumulate_chunk_512<NH, 2>(p, p_stride, v, i, nt, hd, acc + i);
  }
  for (; i + 16 <= hd; i += 16) accumulate_chunk_512<NH, 1>(p, p_stride, v, i, nt, hd, acc + i);
  attn::accumulate_rest<NH>(p, p_stride, v, nt, hd, acc, i);
}

template <class Rows>
void scores_any(const float* q, std::size_t heads, const Rows& k, std::size_t nt, std::size_t hd,
                float scale, float* s, std::size_t s_stride, float* max) {
  // Blocks of four heads (two pairs), then three (a pair and one), two, one;
  // 8 to 16 keys: 16 or 18 accumulators.
  std::size_t g = 0;
  for (; heads - g >= 4; g += 4)
    score_heads_512<2, false, 8>(q + g * hd, k, nt, hd, scale, s + g * s_stride, s_stride);
  if (heads - g == 3)
    score_heads_512<1, true, 8>(q + g * hd, k, nt, hd, scale, s + g * s_stride, s_stride);
  else if (heads - g == 2)
    score_heads_512<1, false, 16>(q + g * hd, k, nt, hd, scale, s + g * s_stride, s_stride);
  else if (heads - g == 1)
    score_heads_512<0, true, 16>(q + g * hd, k, nt, hd, scale, s + g * s_stride, s_stride);
  for (g = 0; g < heads; ++g) max[g] = row_max(s + g * s_stride, nt);
}

template <class Rows>
void accumulate_any(const float* p, std::size_t p_stride, std::size_t heads, const Rows& v,
                    std::size_t nt, std::size_t hd, float* acc) {
  std::size_t g = 0;
  for (; take_three(heads - g); g += 3)
    accumulate_heads_512<3, 4>(p + g * p_stride, p_stride, v, nt, hd, acc + g * hd);
  for (; g + 2 <= heads; g += 2)
    accumulate_heads_512<2, 6>(p + g * p_stride, p_stride, v, nt, hd, acc + g * hd);
  for (; g < heads; ++g)
    accumulate_heads_512<1, 8>(p + g * p_stride, p_stride, v, nt, hd, acc + g * hd);
}

void scores_512(const float* q, std::size_t heads, const float* k, std::size_t nt, std::size_t hd,
                float scale, float* s, std::size_t s_stride, float* max) {
  scores_any(q, heads, F32Rows{{k, hd}}, nt, hd, scale, s, s_stride, max);
}

void accumulate_512(const float* p, std::size_t p_stride, std::size_t heads, const float* v,
                    std::size_t nt, std::size_t hd, float* acc) {
  accumulate_any(p, p_stride, heads, F32Rows{{v, hd}}, nt, hd, acc);
}

// The in-place forms (attention_prims.h): f32 and f16 rows in the pages.
template <class Rows, class T>
void scores_rows_512(const float* q, std::size_t heads, const void* k, std::size_t row_bytes,
                     std::size_t nt, std::size_t hd, float scale, float* s, std::size_t s_stride,
                     float* max) {
  scores_any(q, heads, Rows{{static_cast<const T*>(k), row_bytes / sizeof(T)}}, nt, hd, scale, s,
             s_stride, max);
}

template <class Rows, class T>
void accumulate_rows_512(const float* p, std::size_t p_stride, std::size_t heads, const void* v,
                         std::size_t row_bytes, std::size_t nt, std::size_t hd, float* acc) {
  accumulate_any(p, p_stride, heads, Rows{{static_cast<const T*>(v), row_bytes / sizeof(T)}}, nt,
                 hd, acc);
}

// avx2::exp8's operations on 16 lanes.
FOLIO_ATTN_INLINE __m512 exp16(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.3f)), _mm512_set1_ps(88.3f));
  const __m512 fx = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(fx, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(fx, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  const __m512i e =
      _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(fx), _mm512_set1_epi32(127)), 23);
  return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
}

float exp_shift_512(float* s, std::size_t nt, float m) {
  __m256 acc = _mm256_setzero_ps();
  std::size_t j = 0;
  const __m512 vm = _mm512_set1_ps(m);
  for (; j + 16 <= nt; j += 16) {
    const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(s + j), vm));
    _mm512_storeu_ps(s + j, e);
    acc = _mm256_add_ps(_mm256_add_ps(acc, low_half(e)), high_half(e));
  }
  return attn::exp_shift_rest(s, nt, m, j, acc);
}

// The AVX2 level's tile loads under this level's primitives, with the
// in-place row forms where the dtype has them (f32, f16).
AttentionPrims over(const AttentionPrims& avx2,
                    decltype(AttentionPrims::scores_rows) scores_rows = nullptr,
                    decltype(AttentionPrims::accumulate_rows) accumulate_rows = nullptr) {
  return {avx2.load_tile, scores_512, exp_shift_512, accumulate_512, scores_rows, accumulate_rows};
}

}  // namespace

const AttentionPrims& avx512_attention_prims(KvDtype dtype) {
  static const AttentionPrimsByDtype table = {
      over(avx2_attention_prims(KvDtype::kF32), scores_rows_512<F32Rows, float>,
           accumulate_rows_512<F32Rows, float>),
      over(avx2_attention_prims(KvDtype::kF16), scores_rows_512<F16Rows, std::uint16_t>,
           accumulate_rows_512<F16Rows, std::uint16_t>),
      over(avx2_attention_prims(KvDtype::kI8)), over(avx2_attention_prims(KvDtype::kI4))};
  return table[dtype];
}

}  // namespace folio::kernels::cpu
FOLIO_AVX512_END
