// kernels/cpu/avx2_util.h: helpers shared by the AVX2 kernels (internal).
//
// AVX2 code is compiled for the avx2+fma+f16c target inside FOLIO_AVX2_BEGIN /
// FOLIO_AVX2_END only, so a build without -march=native still runs on CPUs
// without AVX2: the dispatcher calls these functions only when CPUID says so.
// Every header a file needs must be included *before* FOLIO_AVX2_BEGIN, so
// that no out-of-line library function is accidentally compiled for AVX2.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__clang__)
#define FOLIO_AVX2_BEGIN \
  _Pragma("clang attribute push(__attribute__((target(\"avx2,fma,f16c\"))), apply_to = function)")
#define FOLIO_AVX2_END _Pragma("clang attribute pop")
#else
#define FOLIO_AVX2_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx2,fma,f16c\")")
#define FOLIO_AVX2_END _Pragma("GCC pop_options")
#endif

FOLIO_AVX2_BEGIN
namespace folio::kernels::cpu::avx2 {

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline int hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// e^x for each lane: Cephes-style range reduction (x = n ln2 + r) and a
// degree-6 polynomial for e^r, within a few ulp of libm over [-87.3, 88.3]
// (inputs are clamped to that range, so e^-inf gives ~1e-38, not 0).
inline __m256 exp8(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3f)), _mm256_set1_ps(88.3f));
  const __m256 fx = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i e =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(fx), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

// A kernel that streams its weights once (decode) requests, at each block,
// the lines `ahead` bytes further on in its stream (stream_ahead(),
// kernels/cpu_features.h, says how far and why). The address is formed as an
// integer, not as a pointer past the matrix; a prefetch does not fault, so
// requesting lines past the end is harmless.
inline void request_ahead(const void* p, std::size_t ahead) {
  _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(p) + ahead),
               _MM_HINT_T1);
}

// Every line of a stream of kBytes-sized blocks: a block at p requests the
// lines of p + ahead + 64 j, j = 0 .. kBytes / 64, and the next block starts
// kBytes on.
template <std::size_t kBytes>
inline void request_block_ahead(const void* p, std::size_t ahead) {
  const auto* b = static_cast<const std::uint8_t*>(p);
  for (std::size_t o = 0; o <= kBytes / 64 * 64; o += 64) request_ahead(b + o, ahead);
}

inline float half_to_float(std::uint16_t h) {
  return _cvtsh_ss(h);
}

}  // namespace folio::kernels::cpu::avx2
FOLIO_AVX2_END
