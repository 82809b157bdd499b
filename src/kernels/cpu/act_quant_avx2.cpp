// kernels/cpu/act_quant_avx2.cpp: the AVX2 activation quantizers (f32 rows
// to the integer formats of gemm_kernel.h: ActQ8Block, ActQ16Block,
// ActI16Block, BlockQ8_K). Each performs exactly the float operations of its
// scalar twin in gemm_scalar.cpp, so both write identical bytes (tested).
#include <cstddef>

#include "kernels/cpu/avx2_util.h"
#include "kernels/cpu/gemm_avx2.h"
#include "kernels/cpu/gemm_kernel.h"
#include "quant/block_kquant.h"

FOLIO_AVX2_BEGIN
namespace folio::kernels::cpu::avx2 {

namespace {

// 32 int32 (each within int8) -> 32 int8 in order.
void pack_32(const __m256i* v, std::int8_t* q) {
  const __m256i p16 =
      _mm256_packs_epi16(_mm256_packs_epi32(v[0], v[1]), _mm256_packs_epi32(v[2], v[3]));
  // packs work per 128-bit lane: restore element order.
  const __m256i p8 = _mm256_permutevar8x32_epi32(p16, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), p8);
}

// 32 floats -> 32 int8 (x * id rounded to nearest even), returns sum of q.
int quantize_32(const float* x, float id, std::int8_t* q) {
  const __m256 vid = _mm256_set1_ps(id);
  __m256i v[4];
  for (int k = 0; k < 4; ++k) {
    const __m256 s = _mm256_mul_ps(_mm256_loadu_ps(x + 8 * k), vid);
    v[k] = _mm256_cvtps_epi32(_mm256_round_ps(s, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  const __m256i sum = _mm256_add_epi32(_mm256_add_epi32(v[0], v[1]), _mm256_add_epi32(v[2], v[3]));
  pack_32(v, q);
  return hsum_i32(sum);
}

float abs_max(const float* x, std::size_t n) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 m = _mm256_setzero_ps();
  for (std::size_t i = 0; i < n; i += 8)
    m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)));
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

}  // namespace

void quantize_row_q8_32(const float* x, std::size_t cols, void* out) {
  auto* blocks = static_cast<ActQ8Block*>(out);
  for (std::size_t i = 0; i < cols / 32; ++i) {
    const float d = abs_max(x + 32 * i, 32) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const int sum = quantize_32(x + 32 * i, id, blocks[i].qs);
    blocks[i].d = d;
    blocks[i].s = d * static_cast<float>(sum);
  }
}

// Same float operations as the scalar quantize_row_q16_32 (gemm_scalar.cpp).
void quantize_row_q16_32(const float* x, std::size_t cols, void* out) {
  auto* blocks = static_cast<ActQ16Block*>(out);
  const __m256 inv_base = _mm256_set1_ps(1.0f / kActQ16Base);
  const __m256i base = _mm256_set1_epi32(kActQ16Base);
  for (std::size_t i = 0; i < cols / 32; ++i) {
    const float* xb = x + 32 * i;
    const float d = abs_max(xb, 32) / static_cast<float>(kActQ16Max);
    const __m256 vid = _mm256_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
    __m256i hi[4], lo[4], sum = _mm256_setzero_si256();
    for (int k = 0; k < 4; ++k) {
      const __m256 s = _mm256_mul_ps(_mm256_loadu_ps(xb + 8 * k), vid);
      const __m256i q =
          _mm256_cvtps_epi32(_mm256_round_ps(s, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      const __m256 h = _mm256_mul_ps(_mm256_cvtepi32_ps(q), inv_base);
      hi[k] = _mm256_cvtps_epi32(_mm256_round_ps(h, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      lo[k] = _mm256_sub_epi32(q, _mm256_mullo_epi32(hi[k], base));
      sum = _mm256_add_epi32(sum, q);
    }
    pack_32(hi, blocks[i].hi);
    pack_32(lo, blocks[i].lo);
    const int qsum = hsum_i32(sum);
    blocks[i].d = d;
    blocks[i].s = d * static_cast<float>(qsum);
    blocks[i].neg8_qsum = -8 * qsum;
  }
}

// Same float operations as the scalar quantize_row_i16_32 (gemm_scalar.cpp).
void quantize_row_i16_32(const float* x, std::size_t cols, void* out) {
  auto* blocks = static_cast<ActI16Block*>(out);
  for (std::size_t i = 0; i < cols / 32; ++i) {
    const float* xb = x + 32 * i;
    const float d = abs_max(xb, 32) / static_cast<float>(kActQ16Max);
    const __m256 vid = _mm256_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
    __m256i q[4], sum = _mm256_setzero_si256();
    for (int k = 0; k < 4; ++k) {
      const __m256 s = _mm256_mul_ps(_mm256_loadu_ps(xb + 8 * k), vid);
      q[k] = _mm256_cvtps_epi32(_mm256_round_ps(s, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      sum = _mm256_add_epi32(sum, q[k]);
    }
    // packs works per 128-bit lane: the permute restores element order and the
    // shuffle puts each group of four in i16_slot order (x0, x2, x1, x3).
    const __m256i slots = _mm256_setr_epi8(0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15,  //
                                           0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15);
    for (int k = 0; k < 2; ++k) {
      const __m256i p = _mm256_packs_epi32(q[2 * k], q[2 * k + 1]);
      _mm256_storeu_si256(
          reinterpret_cast<__m256i*>(blocks[i].q + 16 * k),
          _mm256_shuffle_epi8(_mm256_permute4x64_epi64(p, _MM_SHUFFLE(3, 1, 2, 0)), slots));
    }
    blocks[i].d = d;
    const int qsum = hsum_i32(sum);
    blocks[i].s = d * static_cast<float>(qsum);
    blocks[i].neg8_qsum = -8 * qsum;
  }
}

void quantize_row_q8_k(const float* x, std::size_t cols, void* out) {
  auto* blocks = static_cast<quant::BlockQ8_K*>(out);
  for (std::size_t i = 0; i < cols / quant::kQK_K; ++i) {
    const float* xb = x + quant::kQK_K * i;
    quant::BlockQ8_K& b = blocks[i];
    b.d = abs_max(xb, quant::kQK_K) / 127.0f;
    const float id = b.d != 0.0f ? 1.0f / b.d : 0.0f;
    for (int k = 0; k < 8; ++k) quantize_32(xb + 32 * k, id, b.qs + 32 * k);
    for (int g = 0; g < 16; ++g) {  // 16-value sums: maddubs with ones, then madd
      const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs + 16 * g));
      const __m128i s16 = _mm_maddubs_epi16(_mm_set1_epi8(1), q);
      __m128i s32 = _mm_madd_epi16(s16, _mm_set1_epi16(1));
      s32 = _mm_add_epi32(s32, _mm_shuffle_epi32(s32, 0x4E));
      s32 = _mm_add_epi32(s32, _mm_shuffle_epi32(s32, 0xB1));
      b.bsums[g] = static_cast<std::int16_t>(_mm_cvtsi128_si32(s32));
    }
  }
}

}  // namespace folio::kernels::cpu::avx2
FOLIO_AVX2_END
