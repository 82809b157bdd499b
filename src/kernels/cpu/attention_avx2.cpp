// kernels/cpu/attention_avx2.cpp: AVX2 tile primitives of attention.
//
// scores: blocks of up to three query heads x four keys (one head: eight),
// one accumulator each, so each K row is loaded once for the block's heads;
// reduced to scores by a horizontal-add tree (no per-key horizontal sum).
// accumulate: the block's output rows are held in registers in chunks while
// every position of the tile is added in, so acc is read and written once
// per tile, and each V row chunk is loaded once for the block's heads.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu/attention_prims.h"
#include "kernels/cpu/avx2_util.h"
#include "kernels/cpu/avx512_util.h"
#include "kernels/kv_row.h"

// The blocked kernels are inlined into each level's entry points, so the
// same source is compiled for the AVX2 target and for the AVX-512 one (32
// vector registers: EVEX encodings of the same 256-bit instructions).
#define FOLIO_ATTN_INLINE inline __attribute__((always_inline))

FOLIO_AVX2_BEGIN
namespace folio::kernels::cpu {

namespace {

void load_tile_f16(const void* src, std::size_t row_bytes, std::size_t nt, std::size_t hd,
                   float* dst) {
  const auto* s = static_cast<const std::uint8_t*>(src);
  for (std::size_t j = 0; j < nt; ++j) {
    const auto* r = reinterpret_cast<const std::uint16_t*>(s + j * row_bytes);
    // Rows are a KV row stride apart (other heads in between), which the
    // hardware prefetcher follows late: fetch 8 rows ahead (measured: decode
    // at 32 sequences ~6 % faster, load_tile_f16 10.6 % -> 7 % of the time).
    if (j + 8 < nt) {
      const char* ahead = reinterpret_cast<const char*>(s + (j + 8) * row_bytes);
      _mm_prefetch(ahead, _MM_HINT_T0);
      _mm_prefetch(ahead + 64, _MM_HINT_T0);
    }
    float* d = dst + j * hd;
    std::size_t i = 0;
    for (; i + 8 <= hd; i += 8) {
      _mm256_storeu_ps(d + i,
                       _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r + i))));
    }
    for (; i < hd; ++i) d[i] = _cvtsh_ss(r[i]);
  }
}

// int8 head rows (kv_row.h): 8 values at a time, sign-extended, converted
// and scaled by their group's fp16 scale; same products as kv_load_head.
void load_tile_i8(const void* src, std::size_t row_bytes, std::size_t nt, std::size_t hd,
                  float* dst) {
  const auto* s = static_cast<const std::uint8_t*>(src);
  for (std::size_t j = 0; j < nt; ++j) {
    const std::uint8_t* r = s + j * row_bytes;
    if (j + 8 < nt)
      _mm_prefetch(reinterpret_cast<const char*>(s + (j + 8) * row_bytes), _MM_HINT_T0);
    float* d = dst + j * hd;
    std::size_t i = 0;
    for (; i + 8 <= hd; i += 8) {
      std::uint16_t h;
      std::memcpy(&h, r + hd + 2 * (i / kKvI8Group), 2);
      std::int64_t q8;
      std::memcpy(&q8, r + i, 8);
      const __m256 v = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_cvtsi64_si128(q8)));
      _mm256_storeu_ps(d + i, _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(h)), v));
    }
    for (; i < hd; ++i) {
      std::uint16_t h;
      std::memcpy(&h, r + hd + 2 * (i / kKvI8Group), 2);
      d[i] = _cvtsh_ss(h) * static_cast<float>(static_cast<std::int8_t>(r[i]));
    }
  }
}

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

// One (head, key) score alone, with the same arithmetic as score_block's.
float dot1(const float* q, const float* k, std::size_t hd) {
  __m256 a = _mm256_setzero_ps();
  std::size_t i = 0;
  for (; i + 8 <= hd; i += 8)
    a = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), _mm256_loadu_ps(k + i), a);
  const __m256 z = _mm256_setzero_ps();
  float s = _mm_cvtss_f32(tree4(a, z, z, z));
  for (; i < hd; ++i) s += q[i] * k[i];
  return s;
}

// NH heads x NK keys (NK a multiple of 4), hd % 8 == 0: each K row is loaded
// once per step for all NH heads, each q row once for all NK keys.
template <int NH, int NK>
FOLIO_ATTN_INLINE void score_block(const float* q, const float* k, std::size_t hd, __m128 scale,
                                   float* s, std::size_t s_stride) {
  __m256 a[NH][NK];
  for (auto& row : a)
    for (auto& x : row) x = _mm256_setzero_ps();
  for (std::size_t i = 0; i < hd; i += 8) {
    __m256 qv[NH];
    for (int h = 0; h < NH; ++h) qv[h] = in_register(_mm256_loadu_ps(q + h * hd + i));
    for (int r = 0; r < NK; ++r) {
      const __m256 kv = in_register(_mm256_loadu_ps(k + r * hd + i));
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
template <int NH, int NK>
FOLIO_ATTN_INLINE void score_heads(const float* q, const float* k, std::size_t nt, std::size_t hd,
                                   float scale, float* s, std::size_t s_stride) {
  std::size_t j = 0;
  if (hd % 8 == 0) {
    const __m128 vs = _mm_set1_ps(scale);
    for (; j + NK <= nt; j += NK) score_block<NH, NK>(q, k + j * hd, hd, vs, s + j, s_stride);
  }
  for (; j < nt; ++j) {
    for (int h = 0; h < NH; ++h) s[h * s_stride + j] = dot1(q + h * hd, k + j * hd, hd) * scale;
  }
}

float row_max(const float* s, std::size_t n) {
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
template <int NH, int C>
FOLIO_ATTN_INLINE void accumulate_chunk(const float* p, std::size_t p_stride, const float* v,
                                        std::size_t nt, std::size_t hd, float* acc) {
  __m256 a[NH][C];
  for (int h = 0; h < NH; ++h)
    for (int c = 0; c < C; ++c) a[h][c] = _mm256_loadu_ps(acc + h * hd + 8 * c);
  for (std::size_t j = 0; j < nt; ++j) {
    const float* vj = v + j * hd;
    __m256 vv[C];
    for (int c = 0; c < C; ++c) vv[c] = in_register(_mm256_loadu_ps(vj + 8 * c));
    for (int h = 0; h < NH; ++h) {
      const __m256 pj = in_register(_mm256_broadcast_ss(p + h * p_stride + j));
      for (int c = 0; c < C; ++c) a[h][c] = _mm256_fmadd_ps(pj, vv[c], a[h][c]);
    }
  }
  for (int h = 0; h < NH; ++h)
    for (int c = 0; c < C; ++c) _mm256_storeu_ps(acc + h * hd + 8 * c, a[h][c]);
}

// Heads [0, NH) of the group: chunks of 8C floats, then of 8, then one by one.
template <int NH, int C>
FOLIO_ATTN_INLINE void accumulate_heads(const float* p, std::size_t p_stride, const float* v,
                                        std::size_t nt, std::size_t hd, float* acc) {
  std::size_t i = 0;
  for (; i + 8 * C <= hd; i += 8 * C) accumulate_chunk<NH, C>(p, p_stride, v + i, nt, hd, acc + i);
  for (; i + 8 <= hd; i += 8) accumulate_chunk<NH, 1>(p, p_stride, v + i, nt, hd, acc + i);
  for (; i < hd; ++i) {
    for (int h = 0; h < NH; ++h) {
      float a = acc[h * hd + i];
      for (std::size_t j = 0; j < nt; ++j) a += p[h * p_stride + j] * v[j * hd + i];
      acc[h * hd + i] = a;
    }
  }
}

// Whether `rest` heads start with a block of three: when the rest then
// splits into threes and twos (3, 5 = 3 + 2, 6 = 3 + 3, 7 = 3 + 2 + 2), not
// when a one would be left over (4 = 2 + 2, not 3 + 1).
constexpr bool take_three(std::size_t rest) {
  return rest >= 3 && (rest % 2 == 1 || rest % 3 == 0);
}

// The group's heads in blocks of B::kHeads (then fewer), each block with the
// register blocking B gives it: B::keys(NH) keys per score block,
// B::chunks(NH) vectors of each output row per accumulate chunk.
template <class B>
FOLIO_ATTN_INLINE void scores_blocked(const float* q, std::size_t heads, const float* k,
                                      std::size_t nt, std::size_t hd, float scale, float* s,
                                      std::size_t s_stride, float* max) {
  std::size_t g = 0;
  if constexpr (B::kHeads >= 3) {
    for (; take_three(heads - g); g += 3)
      score_heads<3, B::keys(3)>(q + g * hd, k, nt, hd, scale, s + g * s_stride, s_stride);
  }
  if constexpr (B::kHeads >= 2) {
    for (; g + 2 <= heads; g += 2)
      score_heads<2, B::keys(2)>(q + g * hd, k, nt, hd, scale, s + g * s_stride, s_stride);
  }
  for (; g < heads; ++g)
    score_heads<1, B::keys(1)>(q + g * hd, k, nt, hd, scale, s + g * s_stride, s_stride);
  for (g = 0; g < heads; ++g) max[g] = row_max(s + g * s_stride, nt);
}

template <class B>
FOLIO_ATTN_INLINE void accumulate_blocked(const float* p, std::size_t p_stride, std::size_t heads,
                                          const float* v, std::size_t nt, std::size_t hd,
                                          float* acc) {
  std::size_t g = 0;
  if constexpr (B::kHeads >= 3) {
    for (; take_three(heads - g); g += 3)
      accumulate_heads<3, B::chunks(3)>(p + g * p_stride, p_stride, v, nt, hd, acc + g * hd);
  }
  if constexpr (B::kHeads >= 2) {
    for (; g + 2 <= heads; g += 2)
      accumulate_heads<2, B::chunks(2)>(p + g * p_stride, p_stride, v, nt, hd, acc + g * hd);
  }
  for (; g < heads; ++g)
    accumulate_heads<1, B::chunks(1)>(p + g * p_stride, p_stride, v, nt, hd, acc + g * hd);
}

// 16 vector registers: one head at a time (eight keys' or eight vectors'
// accumulators), which measured faster than blocking heads and spilling.
struct Avx2Blocking {
  static constexpr int kHeads = 1;
  static constexpr int keys(int) { return 8; }
  static constexpr int chunks(int) { return 8; }
};

void scores(const float* q, std::size_t heads, const float* k, std::size_t nt, std::size_t hd,
            float scale, float* s, std::size_t s_stride, float* max) {
  scores_blocked<Avx2Blocking>(q, heads, k, nt, hd, scale, s, s_stride, max);
}

void accumulate(const float* p, std::size_t p_stride, std::size_t heads, const float* v,
                std::size_t nt, std::size_t hd, float* acc) {
  accumulate_blocked<Avx2Blocking>(p, p_stride, heads, v, nt, hd, acc);
}

float exp_shift(float* s, std::size_t nt, float m) {
  const __m256 vm = _mm256_set1_ps(m);
  __m256 acc = _mm256_setzero_ps();
  std::size_t j = 0;
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

// int4 head rows (kv_row.h): a whole group of 32 from its 16 bytes, 8
// values at a time (low nibbles: values 0..15, high: 16..31), offset by 8,
// converted and scaled; a short last group goes through kv_load_i4_from.
// Values as stored (a rotated row stays rotated: attention.cpp rotates the
// query and the output); same products as kv_load_head_stored.
void load_tile_i4(const void* src, std::size_t row_bytes, std::size_t nt, std::size_t hd,
                  float* dst) {
  const auto* s = static_cast<const std::uint8_t*>(src);
  const std::size_t full = hd / kKvI4Group * kKvI4Group;
  const __m256i mask = _mm256_set1_epi32(0x0F), eight = _mm256_set1_epi32(8);
  for (std::size_t j = 0; j < nt; ++j) {
    const std::uint8_t* r = s + j * row_bytes;
    if (j + 8 < nt)
      _mm_prefetch(reinterpret_cast<const char*>(s + (j + 8) * row_bytes), _MM_HINT_T0);
    float* d = dst + j * hd;
    for (std::size_t b = 0; b < full; b += kKvI4Group) {
      std::uint16_t h;
      std::memcpy(&h, r + hd / 2 + 2 * (b / kKvI4Group), 2);
      const __m256 scale = _mm256_set1_ps(_cvtsh_ss(h));
      for (std::size_t k = 0; k < kKvI4Group / 2; k += 8) {
        std::int64_t q8;
        std::memcpy(&q8, r + b / 2 + k, 8);
        const __m256i bytes = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(q8));
        const __m256i lo = _mm256_sub_epi32(_mm256_and_si256(bytes, mask), eight);
        const __m256i hi = _mm256_sub_epi32(_mm256_srli_epi32(bytes, 4), eight);
        _mm256_storeu_ps(d + b + k, _mm256_mul_ps(scale, _mm256_cvtepi32_ps(lo)));
        _mm256_storeu_ps(d + b + kKvI4Group / 2 + k, _mm256_mul_ps(scale, _mm256_cvtepi32_ps(hi)));
      }
    }
    if (full < hd) kv_load_i4_from(r, hd, full, d);  // the short last group
  }
}

// The level's tables over one scores / accumulate pair (the AVX-512 level's too).
constexpr AttentionPrimsByDtype prims_over(decltype(AttentionPrims::scores) sc,
                                           decltype(AttentionPrims::accumulate) acc) {
  return {{load_tile_f32, sc, exp_shift, acc},
          {load_tile_f16, sc, exp_shift, acc},
          {load_tile_i8, sc, exp_shift, acc},
          {load_tile_i4, sc, exp_shift, acc}};
}

constexpr AttentionPrimsByDtype kAvx2Prims = prims_over(scores, accumulate);

}  // namespace

const AttentionPrims& avx2_attention_prims(KvDtype dtype) {
  return kAvx2Prims[dtype];
}

}  // namespace folio::kernels::cpu
FOLIO_AVX2_END

// ---- AVX-512 level: the same kernels blocked over the group's heads -------
// With 32 registers, three query heads are scored against four keys at once
// (12 accumulators, 3 q rows, 1 K row) and accumulated in chunks of 32
// floats (12 accumulators, 4 V rows), so each K and V row is loaded once for
// three heads; a group of four runs as two pairs (eight keys, 32 floats). Per element the same
// operations in the same order as the AVX2 level, so the two are bit-identical.
FOLIO_AVX512_BEGIN
namespace folio::kernels::cpu {

namespace {

struct Avx512Blocking {
  static constexpr int kHeads = 3;
  static constexpr int keys(int heads) { return heads == 3 ? 4 : 8; }
  static constexpr int chunks(int heads) { return heads == 1 ? 8 : 4; }
};

void scores_512(const float* q, std::size_t heads, const float* k, std::size_t nt, std::size_t hd,
                float scale, float* s, std::size_t s_stride, float* max) {
  scores_blocked<Avx512Blocking>(q, heads, k, nt, hd, scale, s, s_stride, max);
}

void accumulate_512(const float* p, std::size_t p_stride, std::size_t heads, const float* v,
                    std::size_t nt, std::size_t hd, float* acc) {
  accumulate_blocked<Avx512Blocking>(p, p_stride, heads, v, nt, hd, acc);
}

constexpr AttentionPrimsByDtype kAvx512Prims = prims_over(scores_512, accumulate_512);

}  // namespace

const AttentionPrims& avx512_attention_prims(KvDtype dtype) {
  return kAvx512Prims[dtype];
}

}  // namespace folio::kernels::cpu
FOLIO_AVX512_END
