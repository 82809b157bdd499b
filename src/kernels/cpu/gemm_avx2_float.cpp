// kernels/cpu/gemm_avx2_float.cpp: AVX2 tiles for unquantized weights (F32,
// F16 via F16C, BF16 via a 16-bit shift) against f32 activations.
//
// Each activation row keeps two accumulators (16 columns per step) so that a
// single row is not bound by FMA latency; the structure is the same for
// every tile width, keeping results independent of the batch.
#include <cmath>
#include <cstddef>

#include "base/fp16.h"
#include "kernels/cpu/avx2_util.h"
#include "kernels/cpu/gemm_avx2.h"
#include "kernels/cpu/gemm_kernel.h"
#include "kernels/cpu_features.h"

FOLIO_AVX2_BEGIN
namespace folio::kernels::cpu::avx2 {

namespace {

struct F32 {
  static constexpr std::size_t kBytes = 4;
  static __m256 load8(const std::uint8_t* w, std::size_t j) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(w) + j);
  }
  static float one(const std::uint8_t* w, std::size_t j) {
    float v;
    std::memcpy(&v, w + 4 * j, 4);
    return v;
  }
};
struct F16 {
  static constexpr std::size_t kBytes = 2;
  static __m256 load8(const std::uint8_t* w, std::size_t j) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 2 * j)));
  }
  static float one(const std::uint8_t* w, std::size_t j) {
    std::uint16_t h;
    std::memcpy(&h, w + 2 * j, 2);
    return fp16_to_f32(h);
  }
};
struct BF16 {
  static constexpr std::size_t kBytes = 2;
  static __m256 load8(const std::uint8_t* w, std::size_t j) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 2 * j));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  static float one(const std::uint8_t* w, std::size_t j) {
    std::uint16_t h;
    std::memcpy(&h, w + 2 * j, 2);
    return bf16_to_f32(h);
  }
};

template <class E, int NC>
void row_x_cols(const std::uint8_t* w, std::size_t cols, const std::uint8_t* x,
                std::size_t x_stride, float* y, std::size_t ldy) {
  const float* xr[NC];
  __m256 a0[NC], a1[NC];
  for (int c = 0; c < NC; ++c) {
    xr[c] = reinterpret_cast<const float*>(x + c * x_stride);
    a0[c] = _mm256_setzero_ps();
    a1[c] = _mm256_setzero_ps();
  }
  std::size_t j = 0;
  const std::size_t ahead = stream_ahead();
  for (; j + 16 <= cols; j += 16) {
    request_ahead(w + E::kBytes * j, ahead);  // 16 values are 32 or 64 bytes: every line of the row
    const __m256 w0 = E::load8(w, j), w1 = E::load8(w, j + 8);
    for (int c = 0; c < NC; ++c) {
      a0[c] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(xr[c] + j), a0[c]);
      a1[c] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(xr[c] + j + 8), a1[c]);
    }
  }
  for (; j + 8 <= cols; j += 8) {
    const __m256 w0 = E::load8(w, j);
    for (int c = 0; c < NC; ++c) a0[c] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(xr[c] + j), a0[c]);
  }
  for (int c = 0; c < NC; ++c) {
    float tail = 0.0f;
    // Explicit fma: identical code for every NC, whatever the compiler contracts.
    for (std::size_t t = j; t < cols; ++t) tail = std::fma(E::one(w, t), xr[c][t], tail);
    y[c * ldy] = hsum(_mm256_add_ps(a0[c], a1[c])) + tail;
  }
}

template <class E>
void tile(const std::uint8_t* w, std::size_t w_stride, std::size_t nr, std::size_t cols,
          const std::uint8_t* x, std::size_t x_stride, std::size_t nc, float* y, std::size_t ldy) {
  for (std::size_t r = 0; r < nr; ++r) {
    const std::uint8_t* wr = w + r * w_stride;
    switch (nc) {
      case 1:
        row_x_cols<E, 1>(wr, cols, x, x_stride, y + r, ldy);
        break;
      case 2:
        row_x_cols<E, 2>(wr, cols, x, x_stride, y + r, ldy);
        break;
      case 3:
        row_x_cols<E, 3>(wr, cols, x, x_stride, y + r, ldy);
        break;
      default:
        row_x_cols<E, 4>(wr, cols, x, x_stride, y + r, ldy);
        break;
    }
  }
}

}  // namespace

const GemmKernel kF32{ActFormat::kF32, nullptr, tile<F32>};
const GemmKernel kF16{ActFormat::kF32, nullptr, tile<F16>};
const GemmKernel kBF16{ActFormat::kF32, nullptr, tile<BF16>};

}  // namespace folio::kernels::cpu::avx2
FOLIO_AVX2_END
