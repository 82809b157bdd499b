// kernels/cpu/attention_blocks.h: the 256-bit register blocks of the
// attention primitives (internal).
//
// scores: a block of NH query heads x NK keys, one eight-lane accumulator
// each, so each K row is loaded once for the block's heads; reduced to
// scores by a horizontal-add tree (no per-key horizontal sum). accumulate:
// the block's output rows are held in registers in chunks while every
// position of the tile is added in, so acc is read and written once per
// tile, and each V row chunk is loaded once for the block's heads.
//
// The blocks read K / V through a row type (F32Rows: a dense tile or f32
// rows in the pages; F16Rows: f16 rows in the pages, converted in register).
//
// Everything is always inlined, so each caller compiles these for its own
// target: the AVX2 level (attention_avx2.cpp) and the AVX-512 level's
// remainders (attention_avx512.cpp), with identical arithmetic.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/avx2_util.h"

#define FOLIO_ATTN_INLINE inline __attribute__((always_inline))

FOLIO_AVX2_BEGIN
namespace folio::kernels::cpu::attn {

// v, kept in a register: GCC otherwise folds a load used by several fused
// multiply-adds into each of them as a memory operand, which loads it that
// many times (measured: the three-head blocks ran slower than one head).
FOLIO_ATTN_INLINE __m256 in_register(__m256 v) {
  __asm__("" : "+v"(v));
  return v;
}

// The eight lane sums of four keys' accumulators, each added as
// ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)): one score per lane.
FOLIO_ATTN_INLINE __m128 tree4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  const __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
  return _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
}

// The K or V rows the blocks read: a dense f32 tile (load_tile's), or the
// f32 / f16 head rows read in place in the cache pages, a stride apart.
// fp16 -> f32 is exact, so every form gives the blocks the same floats and
// the same arithmetic; reading rows in place saves the tile's stores and
// reloads. load8(j, i): floats i .. i+7 of row j; one(j, i): float i.
struct F32Rows {
  const float* p;
  std::size_t stride;  // floats from one row to the next
  FOLIO_ATTN_INLINE const float* at(std::size_t j, std::size_t i) const {
    return p + j * stride + i;
  }
  FOLIO_ATTN_INLINE __m256 load8(std::size_t j, std::size_t i) const {
    return _mm256_loadu_ps(at(j, i));
  }
  FOLIO_ATTN_INLINE float one(std::size_t j, std::size_t i) const { return *at(j, i); }
};

struct F16Rows {
  const std::uint16_t* p;
  std::size_t stride;  // fp16 values from one row to the next
  FOLIO_ATTN_INLINE const std::uint16_t* at(std::size_t j, std::size_t i) const {
    return p + j * stride + i;
  }
  FOLIO_ATTN_INLINE __m256 load8(std::size_t j, std::size_t i) const {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at(j, i))));
  }
  FOLIO_ATTN_INLINE float one(std::size_t j, std::size_t i) const { return _cvtsh_ss(*at(j, i)); }
};

// One (head, key) score alone (key j of k), with the same arithmetic as
// score_block's; the tail products fused, whatever the compiler contracts.
template <class Rows>
FOLIO_ATTN_INLINE float dot1(const float* q, const Rows& k, std::size_t j, std::size_t hd) {
  __m256 a = _mm256_setzero_ps();
  std::size_t i = 0;
  for (; i + 8 <= hd; i += 8) a = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), k.load8(j, i), a);
  const __m256 z = _mm256_setzero_ps();
  float s = _mm_cvtss_f32(tree4(a, z, z, z));
  for (; i < hd; ++i) s = std::fma(q[i], k.one(j, i), s);
  return s;
}

// NH heads x NK keys (NK a multiple of 4), hd % 8 == 0: each K row is loaded
// once per step for all NH heads, each q row once for all NK keys.
template <int NH, int NK, class Rows>
FOLIO_ATTN_INLINE void score_block(const float* q, const Rows& k, std::size_t j0, std::size_t hd,
                                   __m128 scale, float* s, std::size_t s_stride) {
  __m256 a[NH][NK];
  for (auto& row : a)
    for (auto& x : row) x = _mm256_setzero_ps();
  for (std::size_t i = 0; i < hd; i += 8) {
    __m256 qv[NH];
    for (int h = 0; h < NH; ++h) qv[h] = in_register(_mm256_loadu_ps(q + h * hd + i));
    for (int r = 0; r < NK; ++r) {
      const __m256 kv = in_register(k.load8(j0 + r, i));
      for (int h = 0; h < NH; ++h) a[h][r] = _mm256_fmadd_ps(qv[h], kv, a[h][r]);
    }
  }
  for (int h = 0; h < NH; ++h) {
    for (int r = 0; r < NK; r += 4) {
      const __m128 t = tree4(a[h][r], a[h][r + 1], a[h][r + 2], a[h][r + 3]);
      _mm_storeu_ps(s + h * s_stride + r, _mm_mul_ps(t, scale));
    }
  }
}

// Heads [0, NH) of the group against all nt keys, NK at a time.
template <int NH, int NK, class Rows>
FOLIO_ATTN_INLINE void score_heads(const float* q, const Rows& k, std::size_t nt, std::size_t hd,
                                   float scale, float* s, std::size_t s_stride) {
  std::size_t j = 0;
  if (hd % 8 == 0) {
    const __m128 vs = _mm_set1_ps(scale);
    for (; j + NK <= nt; j += NK) score_block<NH, NK>(q, k, j, hd, vs, s + j, s_stride);
  }
  for (; j < nt; ++j) {
    for (int h = 0; h < NH; ++h) s[h * s_stride + j] = dot1(q + h * hd, k, j, hd) * scale;
  }
}

FOLIO_ATTN_INLINE float row_max(const float* s, std::size_t n) {
  std::size_t j = 0;
  float m = -INFINITY;
  if (n >= 8) {
    __m256 v = _mm256_loadu_ps(s);
    for (j = 8; j + 8 <= n; j += 8) v = _mm256_max_ps(v, _mm256_loadu_ps(s + j));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    m = _mm_cvtss_f32(h);
  }
  for (; j < n; ++j) m = std::max(m, s[j]);
  return m;
}

// acc[h][0 .. 8C) += sum_j p[h][j] v[j][0 .. 8C) for NH heads, the chunk
// held in NH * C registers: each V row chunk is loaded once for all heads.
// (Columns [i, i + 8C) of v: acc points at column i of head 0.)
template <int NH, int C, class Rows>
FOLIO_ATTN_INLINE void accumulate_chunk(const float* p, std::size_t p_stride, const Rows& v,
                                        std::size_t i, std::size_t nt, std::size_t hd, float* acc) {
  __m256 a[NH][C];
  for (int h = 0; h < NH; ++h)
    for (int c = 0; c < C; ++c) a[h][c] = _mm256_loadu_ps(acc + h * hd + 8 * c);
  for (std::size_t j = 0; j < nt; ++j) {
    __m256 vv[C];
    for (int c = 0; c < C; ++c) vv[c] = in_register(v.load8(j, i + 8 * c));
    for (int h = 0; h < NH; ++h) {
      const __m256 pj = in_register(_mm256_broadcast_ss(p + h * p_stride + j));
      for (int c = 0; c < C; ++c) a[h][c] = _mm256_fmadd_ps(pj, vv[c], a[h][c]);
    }
  }
  for (int h = 0; h < NH; ++h)
    for (int c = 0; c < C; ++c) _mm256_storeu_ps(acc + h * hd + 8 * c, a[h][c]);
}

// Columns [i, hd) of heads [0, NH): chunks of 8 floats, then one by one
// (the end of every level's accumulate, so their last columns agree).
template <int NH, class Rows>
FOLIO_ATTN_INLINE void accumulate_rest(const float* p, std::size_t p_stride, const Rows& v,
                                       std::size_t nt, std::size_t hd, float* acc, std::size_t i) {
  for (; i + 8 <= hd; i += 8) accumulate_chunk<NH, 1>(p, p_stride, v, i, nt, hd, acc + i);
  for (; i < hd; ++i) {
    for (int h = 0; h < NH; ++h) {
      float a = acc[h * hd + i];
      for (std::size_t j = 0; j < nt; ++j) a = std::fma(p[h * p_stride + j], v.one(j, i), a);
      acc[h * hd + i] = a;
    }
  }
}

// Heads [0, NH) of the group: chunks of 8C floats, then accumulate_rest.
template <int NH, int C, class Rows>
FOLIO_ATTN_INLINE void accumulate_heads(const float* p, std::size_t p_stride, const Rows& v,
                                        std::size_t nt, std::size_t hd, float* acc) {
  std::size_t i = 0;
  for (; i + 8 * C <= hd; i += 8 * C) accumulate_chunk<NH, C>(p, p_stride, v, i, nt, hd, acc + i);
  accumulate_rest<NH>(p, p_stride, v, nt, hd, acc, i);
}

// exp_shift from s[j] on, its eight-lane sum so far in acc: s[j..] =
// exp(s[j..] - m) in chunks of 8, then one by one; returns the whole sum
// (the end of every level's exp_shift, so their sums agree).
FOLIO_ATTN_INLINE float exp_shift_rest(float* s, std::size_t nt, float m, std::size_t j,
                                       __m256 acc) {
  const __m256 vm = _mm256_set1_ps(m);
  for (; j + 8 <= nt; j += 8) {
    const __m256 e = avx2::exp8(_mm256_sub_ps(_mm256_loadu_ps(s + j), vm));
    _mm256_storeu_ps(s + j, e);
    acc = _mm256_add_ps(acc, e);
  }
  float sum = avx2::hsum(acc);
  for (; j < nt; ++j) {
    s[j] = std::exp(s[j] - m);
    sum += s[j];
  }
  return sum;
}

}  // namespace folio::kernels::cpu::attn
FOLIO_AVX2_END
