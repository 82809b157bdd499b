// kernels/cpu/attention_avx2.cpp: AVX2 tile primitives of attention.
//
// The K/V tile loads (f16, int8, int4 rows to dense f32; the AVX-512 level
// uses them too), and scores / accumulate / exp_shift over the 256-bit
// blocks of attention_blocks.h: one head at a time with 16 registers, over a
// dense tile or (scores_rows / accumulate_rows) f32 / f16 rows in the pages.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/attention_blocks.h"
#include "kernels/cpu/attention_prims.h"
#include "kernels/cpu/avx2_util.h"
#include "kernels/kv_row.h"

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

// 16 vector registers: one head at a time (eight keys' or eight vectors'
// accumulators), which measured faster than blocking heads and spilling.
template <class Rows>
void scores_any(const float* q, std::size_t heads, const Rows& k, std::size_t nt, std::size_t hd,
                float scale, float* s, std::size_t s_stride, float* max) {
  for (std::size_t g = 0; g < heads; ++g)
    attn::score_heads<1, 8>(q + g * hd, k, nt, hd, scale, s + g * s_stride, s_stride);
  for (std::size_t g = 0; g < heads; ++g) max[g] = attn::row_max(s + g * s_stride, nt);
}

template <class Rows>
void accumulate_any(const float* p, std::size_t p_stride, std::size_t heads, const Rows& v,
                    std::size_t nt, std::size_t hd, float* acc) {
  for (std::size_t g = 0; g < heads; ++g)
    attn::accumulate_heads<1, 8>(p + g * p_stride, p_stride, v, nt, hd, acc + g * hd);
}

void scores(const float* q, std::size_t heads, const float* k, std::size_t nt, std::size_t hd,
            float scale, float* s, std::size_t s_stride, float* max) {
  scores_any(q, heads, attn::F32Rows{k, hd}, nt, hd, scale, s, s_stride, max);
}

void accumulate(const float* p, std::size_t p_stride, std::size_t heads, const float* v,
                std::size_t nt, std::size_t hd, float* acc) {
  accumulate_any(p, p_stride, heads, attn::F32Rows{v, hd}, nt, hd, acc);
}

// The in-place forms (attention_prims.h): f32 and f16 rows in the pages.
template <class Rows, class T>
void scores_rows(const float* q, std::size_t heads, const void* k, std::size_t row_bytes,
                 std::size_t nt, std::size_t hd, float scale, float* s, std::size_t s_stride,
                 float* max) {
  scores_any(q, heads, Rows{static_cast<const T*>(k), row_bytes / sizeof(T)}, nt, hd, scale, s,
             s_stride, max);
}

template <class Rows, class T>
void accumulate_rows(const float* p, std::size_t p_stride, std::size_t heads, const void* v,
                     std::size_t row_bytes, std::size_t nt, std::size_t hd, float* acc) {
  accumulate_any(p, p_stride, heads, Rows{static_cast<const T*>(v), row_bytes / sizeof(T)}, nt, hd,
                 acc);
}

float exp_shift(float* s, std::size_t nt, float m) {
  return attn::exp_shift_rest(s, nt, m, 0, _mm256_setzero_ps());
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

constexpr AttentionPrimsByDtype kAvx2Prims = {
    {load_tile_f32, scores, exp_shift, accumulate, scores_rows<attn::F32Rows, float>,
     accumulate_rows<attn::F32Rows, float>},
    {load_tile_f16, scores, exp_shift, accumulate, scores_rows<attn::F16Rows, std::uint16_t>,
     accumulate_rows<attn::F16Rows, std::uint16_t>},
    {load_tile_i8, scores, exp_shift, accumulate, nullptr, nullptr},
    {load_tile_i4, scores, exp_shift, accumulate, nullptr, nullptr}};

}  // namespace

const AttentionPrims& avx2_attention_prims(KvDtype dtype) {
  return kAvx2Prims[dtype];
}

}  // namespace folio::kernels::cpu
FOLIO_AVX2_END
