// kernels/cpu/attention_avx2.cpp: AVX2 q.k dots and p*v accumulation for f32
// and f16 (F16C) K/V rows.
#include <cstddef>
#include <cstdint>

#include "base/fp16.h"
#include "kernels/cpu/attention_prims.h"
#include "kernels/cpu/avx2_util.h"

FOLIO_AVX2_BEGIN
namespace folio::kernels::cpu {

namespace {

__m256 load8(const float* p) { return _mm256_loadu_ps(p); }
__m256 load8(const std::uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
float one(const float* p) { return *p; }
float one(const std::uint16_t* p) { return _cvtsh_ss(*p); }

template <class T>
float dot(const float* q, const void* kv, std::size_t n) {
  const T* k = static_cast<const T*>(kv);
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), load8(k + i), a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), load8(k + i + 8), a1);
  }
  for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), load8(k + i), a0);
  float s = avx2::hsum(_mm256_add_ps(a0, a1));
  for (; i < n; ++i) s += q[i] * one(k + i);
  return s;
}

template <class T>
void axpy(float p, const void* vv, float* acc, std::size_t n) {
  const T* v = static_cast<const T*>(vv);
  const __m256 vp = _mm256_set1_ps(p);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(acc + i, _mm256_fmadd_ps(vp, load8(v + i), _mm256_loadu_ps(acc + i)));
  }
  for (; i < n; ++i) acc[i] += p * one(v + i);
}

const AttentionPrims kF32{dot<float>, axpy<float>};
const AttentionPrims kF16{dot<std::uint16_t>, axpy<std::uint16_t>};

}  // namespace

const AttentionPrims& avx2_attention_prims(KvDtype dtype) {
  return dtype == KvDtype::kF16 ? kF16 : kF32;
}

}  // namespace folio::kernels::cpu
FOLIO_AVX2_END
