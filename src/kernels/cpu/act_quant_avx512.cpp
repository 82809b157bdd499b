// kernels/cpu/act_quant_avx512.cpp: the AVX-512 activation quantizers (f32
// rows to ActQ8Block, ActQ16Block and ActI16Block). A 32-value block is two
// 512-bit registers rather than four 256-bit ones, and the int32 -> int8 /
// int16 narrowing is one saturating vpmovs* instead of packs and a permute.
// Each value goes through exactly the float operations of the scalar and AVX2
// quantizers (x * (1 / d) rounded to nearest even; hi = float(q) * (1 / 254)
// rounded; lo = q - 254 hi), and a block's maximum and integer sum do not
// depend on the order they are taken in, so the three write identical bytes
// for finite inputs (tested).
// See gemm_avx512_panel.cpp (GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/gemm_kernel.h"

FOLIO_AVX512_BEGIN
namespace folio::kernels::cpu::avx512 {

namespace {

constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

// max |x_j| over 32 floats.
float abs_max_32(const float* x) {
  const __m512 a = _mm512_abs_ps(_mm512_loadu_ps(x));
  const __m512 b = _mm512_abs_ps(_mm512_loadu_ps(x + 16));
  return _mm512_reduce_max_ps(_mm512_max_ps(a, b));
}

// d = max|x| / qmax and the 32 values round-to-nearest-even(x * (1 / d)).
struct Block32 {
  float d;
  __m512i q[2];
};

Block32 quantize_32(const float* x, float qmax) {
  Block32 b;
  b.d = abs_max_32(x) / qmax;
  const __m512 id = _mm512_set1_ps(b.d != 0.0f ? 1.0f / b.d : 0.0f);
  for (int k = 0; k < 2; ++k)
    b.q[k] = _mm512_cvt_roundps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + 16 * k), id), kRound);
  return b;
}

int sum_32(const Block32& b) {
  return _mm512_reduce_add_epi32(_mm512_add_epi32(b.q[0], b.q[1]));
}

}  // namespace

void quantize_row_q8_32(const float* x, std::size_t cols, void* out) {
  auto* blocks = static_cast<ActQ8Block*>(out);
  for (std::size_t i = 0; i < cols / 32; ++i) {
    const Block32 b = quantize_32(x + 32 * i, 127.0f);
    for (int k = 0; k < 2; ++k)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(blocks[i].qs + 16 * k),
                       _mm512_cvtsepi32_epi8(b.q[k]));
    blocks[i].d = b.d;
    blocks[i].s = b.d * static_cast<float>(sum_32(b));
  }
}

void quantize_row_q16_32(const float* x, std::size_t cols, void* out) {
  auto* blocks = static_cast<ActQ16Block*>(out);
  const __m512 inv_base = _mm512_set1_ps(1.0f / kActQ16Base);
  const __m512i base = _mm512_set1_epi32(kActQ16Base);
  for (std::size_t i = 0; i < cols / 32; ++i) {
    const Block32 b = quantize_32(x + 32 * i, static_cast<float>(kActQ16Max));
    for (int k = 0; k < 2; ++k) {
      const __m512i hi =
          _mm512_cvt_roundps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(b.q[k]), inv_base), kRound);
      const __m512i lo = _mm512_sub_epi32(b.q[k], _mm512_mullo_epi32(hi, base));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(blocks[i].hi + 16 * k),
                       _mm512_cvtsepi32_epi8(hi));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(blocks[i].lo + 16 * k),
                       _mm512_cvtsepi32_epi8(lo));
    }
    const int qsum = sum_32(b);
    blocks[i].d = b.d;
    blocks[i].s = b.d * static_cast<float>(qsum);
    blocks[i].neg8_qsum = -8 * qsum;
  }
}

void quantize_row_i16_32(const float* x, std::size_t cols, void* out) {
  auto* blocks = static_cast<ActI16Block*>(out);
  // Each group of four int16 in i16_slot order (x0, x2, x1, x3).
  const __m512i slots =
      _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15));
  for (std::size_t i = 0; i < cols / 32; ++i) {
    const Block32 b = quantize_32(x + 32 * i, static_cast<float>(kActQ16Max));
    const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtsepi32_epi16(b.q[0])),
                                         _mm512_cvtsepi32_epi16(b.q[1]), 1);
    _mm512_storeu_si512(blocks[i].q, _mm512_shuffle_epi8(q, slots));
    const int qsum = sum_32(b);
    blocks[i].d = b.d;
    blocks[i].s = b.d * static_cast<float>(qsum);
    blocks[i].neg8_qsum = -8 * qsum;
  }
}

}  // namespace folio::kernels::cpu::avx512
FOLIO_AVX512_END
