// kernels/cpu/gemm_avx2_kquant.cpp: AVX2 tiles for Q4_K, Q5_K and Q6_K
// against two activation formats.
//
// Q8_K (ActivationBits::k8, llama.cpp's): 256-value super-blocks with
// 16-value sums. Sub-block scales are small integers, so they are applied in
// the integer domain (madd of the int16 pair sums with the scale) and the
// whole super-block is converted to float once:
//   dot = d * d_x * sum_g sc[g] * sum(q * q_x) - dmin * d_x * sum_g mn[g] * bsum_x[g]
// Q6_K stores q + 32 unsigned; its -32 offset is folded into the bsum term.
//
// ActQ16Block (k16, the default): 16-bit activations q_x = 254 hi + lo in
// 32-value blocks, each with its own d_x. Per 32 values the pair sums of
// q * hi and q * lo are scaled in int16 madds by 254 sc and sc (both fit
// int16: 254 * 63 and 254 * 127 for Q6_K's signed scales), added in int32,
// converted to float once per block of 32 and multiplied by d * d_x:
//   dot = sum_j d * d_x[j] * sum(sc * q * q_x) - dmin * sum_j mn[j] * s_x[j]
// (s_x = d_x * sum q_x). Q6_K's q - 32 is signed, so its sign moves onto the
// activation bytes (|lo| <= 127 keeps the negation in range).
#include <cstddef>
#include <type_traits>

#include "kernels/cpu/avx2_util.h"
#include "kernels/cpu/gemm_avx2.h"
#include "kernels/cpu/gemm_kernel.h"
#include "kernels/cpu/kquant_unpack.h"
#include "kernels/cpu_features.h"
#include "quant/block_kquant.h"

FOLIO_AVX2_BEGIN
namespace folio::kernels::cpu::avx2 {

namespace {

using quant::BlockQ4_K;
using quant::BlockQ5_K;
using quant::BlockQ6_K;
using quant::BlockQ8_K;

const BlockQ8_K* act(const std::uint8_t* x, std::size_t x_stride, int c) {
  return reinterpret_cast<const BlockQ8_K*>(x + static_cast<std::size_t>(c) * x_stride);
}

__m256i load(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// The 64 values of Q4_K/Q5_K sub-blocks 2k (lo) and 2k+1 (hi) from their 32
// packed bytes `q`; for Q5_K, bits 2k, 2k+1 of qh come from hb, which is then
// shifted right by 2 for the next k.
template <bool kQ5>
void unpack_k45(__m256i q, __m256i& hb, __m256i& lo, __m256i& hi) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  lo = _mm256_and_si256(q, m4);
  hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
  if constexpr (kQ5) {
    lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(hb, _mm256_set1_epi8(1)), 4));
    hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(hb, _mm256_set1_epi8(2)), 3));
    hb = _mm256_srli_epi16(hb, 2);
  }
}

// Q6_K half h (128 values): its four runs of 32 unsigned q + 32 (0..63).
void unpack_q6(const quant::BlockQ6_K& b, int h, __m256i q[4]) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i m30 = _mm256_set1_epi8(0x30);
  const __m256i ql0 = load(b.ql + 64 * h);
  const __m256i ql1 = load(b.ql + 64 * h + 32);
  const __m256i qh = load(b.qh + 32 * h);
  q[0] =
      _mm256_or_si256(_mm256_and_si256(ql0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30));
  q[1] =
      _mm256_or_si256(_mm256_and_si256(ql1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30));
  q[2] =
      _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4), _mm256_and_si256(qh, m30));
  q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                         _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30));
}

// Q4_K and Q5_K share everything but the fifth bit.
template <class Block, int NC>
void row_x_cols_k45(const std::uint8_t* w, std::size_t nb, const std::uint8_t* x,
                    std::size_t x_stride, float* y, std::size_t ldy) {
  constexpr bool kQ5 = std::is_same_v<Block, BlockQ5_K>;
  __m256 acc[NC];
  for (int c = 0; c < NC; ++c) acc[c] = _mm256_setzero_ps();
  const std::size_t ahead = stream_ahead();
  for (std::size_t i = 0; i < nb; ++i) {
    const Block* b = reinterpret_cast<const Block*>(w) + i;
    request_block_ahead<sizeof(Block)>(b, ahead);  // decode streams the rows from DRAM
    int sc[8], mn[8];
    for (int j = 0; j < 8; ++j) k4_scale_min(b->scales, j, sc[j], mn[j]);
    __m256i sumi[NC];
    for (int c = 0; c < NC; ++c) sumi[c] = _mm256_setzero_si256();
    [[maybe_unused]] __m256i hb;
    if constexpr (kQ5) hb = load(b->qh);
    for (int k = 0; k < 4; ++k) {
      __m256i lo, hi;
      unpack_k45<kQ5>(load(b->qs + 32 * k), hb, lo, hi);
      const __m256i s_lo = _mm256_set1_epi16(static_cast<short>(sc[2 * k]));
      const __m256i s_hi = _mm256_set1_epi16(static_cast<short>(sc[2 * k + 1]));
      for (int c = 0; c < NC; ++c) {
        const std::int8_t* qx = act(x, x_stride, c)[i].qs + 64 * k;
        const __m256i p_lo = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, load(qx)), s_lo);
        const __m256i p_hi = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, load(qx + 32)), s_hi);
        sumi[c] = _mm256_add_epi32(sumi[c], _mm256_add_epi32(p_lo, p_hi));
      }
    }
    const __m256i mins = _mm256_setr_epi16(
        static_cast<short>(mn[0]), static_cast<short>(mn[0]), static_cast<short>(mn[1]),
        static_cast<short>(mn[1]), static_cast<short>(mn[2]), static_cast<short>(mn[2]),
        static_cast<short>(mn[3]), static_cast<short>(mn[3]), static_cast<short>(mn[4]),
        static_cast<short>(mn[4]), static_cast<short>(mn[5]), static_cast<short>(mn[5]),
        static_cast<short>(mn[6]), static_cast<short>(mn[6]), static_cast<short>(mn[7]),
        static_cast<short>(mn[7]));
    const float d = half_to_float(b->d), dmin = half_to_float(b->dmin);
    for (int c = 0; c < NC; ++c) {
      const BlockQ8_K& xa = act(x, x_stride, c)[i];
      const __m256i summ = _mm256_madd_epi16(mins, load(xa.bsums));
      acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(d * xa.d), _mm256_cvtepi32_ps(sumi[c]), acc[c]);
      acc[c] = _mm256_fnmadd_ps(_mm256_set1_ps(dmin * xa.d), _mm256_cvtepi32_ps(summ), acc[c]);
    }
  }
  for (int c = 0; c < NC; ++c) y[c * ldy] = hsum(acc[c]);
}

template <int NC>
void row_x_cols_q6k(const std::uint8_t* w, std::size_t nb, const std::uint8_t* x,
                    std::size_t x_stride, float* y, std::size_t ldy) {
  __m256 acc[NC];
  for (int c = 0; c < NC; ++c) acc[c] = _mm256_setzero_ps();
  const std::size_t ahead = stream_ahead();
  for (std::size_t i = 0; i < nb; ++i) {
    const BlockQ6_K* b = reinterpret_cast<const BlockQ6_K*>(w) + i;
    request_block_ahead<sizeof(BlockQ6_K)>(b, ahead);  // decode streams the rows from DRAM
    __m256i sumi[NC];
    for (int c = 0; c < NC; ++c) sumi[c] = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      __m256i q[4];
      unpack_q6(*b, h, q);
      for (int s = 0; s < 4; ++s) {
        const int g = 8 * h + 2 * s;  // 16-value groups g (elements 0..15) and g+1
        const __m256i scale =
            _mm256_set_m128i(_mm_set1_epi16(b->scales[g + 1]), _mm_set1_epi16(b->scales[g]));
        for (int c = 0; c < NC; ++c) {
          const __m256i qx = load(act(x, x_stride, c)[i].qs + 128 * h + 32 * s);
          const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(q[s], qx), scale);
          sumi[c] = _mm256_add_epi32(sumi[c], p);
        }
      }
    }
    const __m256i sc16 =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b->scales)));
    const float d = half_to_float(b->d);
    for (int c = 0; c < NC; ++c) {
      const BlockQ8_K& xa = act(x, x_stride, c)[i];
      const __m256i bias = _mm256_madd_epi16(sc16, load(xa.bsums));  // sum_g sc * bsum
      const __m256i tot = _mm256_sub_epi32(sumi[c], _mm256_slli_epi32(bias, 5));
      acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(d * xa.d), _mm256_cvtepi32_ps(tot), acc[c]);
    }
  }
  for (int c = 0; c < NC; ++c) y[c * ldy] = hsum(acc[c]);
}

// ---- 16-bit activations ---------------------------------------------------------

const ActQ16Block* act16(const std::uint8_t* x, std::size_t x_stride, int c) {
  return reinterpret_cast<const ActQ16Block*>(x + static_cast<std::size_t>(c) * x_stride);
}

// int32 lanes of sum(w * (254 hi + lo)) * sc for 32 unsigned weights w and
// one activation block; s254 = 254 sc and s1 = sc as int16 lanes.
__m256i dot16(__m256i w, const ActQ16Block& xb, __m256i s254, __m256i s1) {
  const __m256i ph = _mm256_maddubs_epi16(w, load(xb.hi));
  const __m256i pl = _mm256_maddubs_epi16(w, load(xb.lo));
  return _mm256_add_epi32(_mm256_madd_epi16(ph, s254), _mm256_madd_epi16(pl, s1));
}

template <class Block, int NC>
void row_x_cols_k45_16(const std::uint8_t* w, std::size_t nb, const std::uint8_t* x,
                       std::size_t x_stride, float* y, std::size_t ldy) {
  constexpr bool kQ5 = std::is_same_v<Block, BlockQ5_K>;
  __m256 acc[NC];
  float mins[NC];
  for (int c = 0; c < NC; ++c) {
    acc[c] = _mm256_setzero_ps();
    mins[c] = 0.0f;
  }
  const std::size_t ahead = stream_ahead();
  for (std::size_t i = 0; i < nb; ++i) {
    const Block* b = reinterpret_cast<const Block*>(w) + i;
    request_block_ahead<sizeof(Block)>(b, ahead);  // decode streams the rows from DRAM
    int sc[8], mn[8];
    for (int j = 0; j < 8; ++j) k4_scale_min(b->scales, j, sc[j], mn[j]);
    const float d = half_to_float(b->d), dmin = half_to_float(b->dmin);
    [[maybe_unused]] __m256i hb;
    if constexpr (kQ5) hb = load(b->qh);
    for (int k = 0; k < 4; ++k) {
      __m256i w2[2];
      unpack_k45<kQ5>(load(b->qs + 32 * k), hb, w2[0], w2[1]);
      for (int h = 0; h < 2; ++h) {
        const int j = 2 * k + h;
        const __m256i s254 = _mm256_set1_epi16(static_cast<short>(kActQ16Base * sc[j]));
        const __m256i s1 = _mm256_set1_epi16(static_cast<short>(sc[j]));
        for (int c = 0; c < NC; ++c) {
          const ActQ16Block& xb = act16(x, x_stride, c)[8 * i + static_cast<std::size_t>(j)];
          const __m256i t = dot16(w2[h], xb, s254, s1);
          acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(d * xb.d), _mm256_cvtepi32_ps(t), acc[c]);
          mins[c] += dmin * static_cast<float>(mn[j]) * xb.s;
        }
      }
    }
  }
  for (int c = 0; c < NC; ++c) y[c * ldy] = hsum(acc[c]) - mins[c];
}

template <int NC>
void row_x_cols_q6k_16(const std::uint8_t* w, std::size_t nb, const std::uint8_t* x,
                       std::size_t x_stride, float* y, std::size_t ldy) {
  const __m256i off = _mm256_set1_epi8(32);
  __m256 acc[NC];
  for (int c = 0; c < NC; ++c) acc[c] = _mm256_setzero_ps();
  const std::size_t ahead = stream_ahead();
  for (std::size_t i = 0; i < nb; ++i) {
    const BlockQ6_K* b = reinterpret_cast<const BlockQ6_K*>(w) + i;
    request_block_ahead<sizeof(BlockQ6_K)>(b, ahead);  // decode streams the rows from DRAM
    const float d = half_to_float(b->d);
    for (int h = 0; h < 2; ++h) {
      __m256i q[4];
      unpack_q6(*b, h, q);
      for (int s = 0; s < 4; ++s) {
        const int g = 8 * h + 2 * s;  // 16-value groups g and g+1: activation block 4h + s
        const __m256i qs = _mm256_sub_epi8(q[s], off);  // q - 32 in [-32, 31]
        const __m256i qa = _mm256_sign_epi8(qs, qs);    // |q - 32|
        const auto s0 = static_cast<short>(b->scales[g]), s1 = static_cast<short>(b->scales[g + 1]);
        const __m256i sc254 =
            _mm256_set_m128i(_mm_set1_epi16(static_cast<short>(kActQ16Base * s1)),
                             _mm_set1_epi16(static_cast<short>(kActQ16Base * s0)));
        const __m256i sc = _mm256_set_m128i(_mm_set1_epi16(s1), _mm_set1_epi16(s0));
        for (int c = 0; c < NC; ++c) {
          const ActQ16Block& xb =
              act16(x, x_stride,
                    c)[8 * i + 4 * static_cast<std::size_t>(h) + static_cast<std::size_t>(s)];
          const __m256i ph = _mm256_maddubs_epi16(qa, _mm256_sign_epi8(load(xb.hi), qs));
          const __m256i pl = _mm256_maddubs_epi16(qa, _mm256_sign_epi8(load(xb.lo), qs));
          const __m256i t =
              _mm256_add_epi32(_mm256_madd_epi16(ph, sc254), _mm256_madd_epi16(pl, sc));
          acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(d * xb.d), _mm256_cvtepi32_ps(t), acc[c]);
        }
      }
    }
  }
  for (int c = 0; c < NC; ++c) y[c * ldy] = hsum(acc[c]);
}

// ---- tiles ---------------------------------------------------------------------

// One weight row against NC activation rows, in the activation format kA16
// says (ActQ16Block) or Q8_K.
template <class Block, int NC, bool kA16>
void row_x_cols(const std::uint8_t* w, std::size_t nb, const std::uint8_t* x, std::size_t x_stride,
                float* y, std::size_t ldy) {
  constexpr bool kQ6 = std::is_same_v<Block, BlockQ6_K>;
  if constexpr (kQ6 && kA16) {
    row_x_cols_q6k_16<NC>(w, nb, x, x_stride, y, ldy);
  } else if constexpr (kQ6) {
    row_x_cols_q6k<NC>(w, nb, x, x_stride, y, ldy);
  } else if constexpr (kA16) {
    row_x_cols_k45_16<Block, NC>(w, nb, x, x_stride, y, ldy);
  } else {
    row_x_cols_k45<Block, NC>(w, nb, x, x_stride, y, ldy);
  }
}

template <class Block, bool kA16>
void tile(const std::uint8_t* w, std::size_t w_stride, std::size_t nr, std::size_t cols,
          const std::uint8_t* x, std::size_t x_stride, std::size_t nc, float* y, std::size_t ldy) {
  const std::size_t nb = cols / quant::kQK_K;
  for (std::size_t r = 0; r < nr; ++r) {
    const std::uint8_t* wr = w + r * w_stride;
    switch (nc) {
      case 1:
        row_x_cols<Block, 1, kA16>(wr, nb, x, x_stride, y + r, ldy);
        break;
      case 2:
        row_x_cols<Block, 2, kA16>(wr, nb, x, x_stride, y + r, ldy);
        break;
      case 3:
        row_x_cols<Block, 3, kA16>(wr, nb, x, x_stride, y + r, ldy);
        break;
      default:
        row_x_cols<Block, 4, kA16>(wr, nb, x, x_stride, y + r, ldy);
        break;
    }
  }
}

}  // namespace

const GemmKernel kQ4_K{ActFormat::kQ8_K, quantize_row_q8_k, tile<BlockQ4_K, false>};
const GemmKernel kQ5_K{ActFormat::kQ8_K, quantize_row_q8_k, tile<BlockQ5_K, false>};
const GemmKernel kQ6_K{ActFormat::kQ8_K, quantize_row_q8_k, tile<BlockQ6_K, false>};
const GemmKernel kQ4_K16{ActFormat::kQ16_32, quantize_row_q16_32, tile<BlockQ4_K, true>};
const GemmKernel kQ5_K16{ActFormat::kQ16_32, quantize_row_q16_32, tile<BlockQ5_K, true>};
const GemmKernel kQ6_K16{ActFormat::kQ16_32, quantize_row_q16_32, tile<BlockQ6_K, true>};

}  // namespace folio::kernels::cpu::avx2
FOLIO_AVX2_END
