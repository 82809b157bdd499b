// kernels/cpu/ops_avx2.cpp: AVX2 element-wise ops (exp8 from avx2_util.h).
// Whole chunks of 8 use plain loads and stores; the tail (n % 8) goes through
// the same lane code with masked ones (each8). Masked stores only for the
// tail: vmaskmovps stores are slow on AMD (Zen 4: an add over 1536 floats
// 960 ns masked, 71 ns plain), and the lanes compute the same values either way.
#include "kernels/cpu/ops_avx2.h"

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "base/fp16.h"
#include "kernels/cpu/avx2_util.h"

FOLIO_AVX2_BEGIN
namespace folio::kernels::cpu::avx2 {

namespace {

// Lane mask for the first k (0..8) lanes.
__m256i tail_mask(std::size_t k) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(k)), idx);
}

// Plain loads and stores of all 8 lanes.
struct Full {
  static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
  static __m256 keep(__m256 v, __m256 /*other*/) { return v; }
};

// The first k < 8 lanes: the others load as 0 and are not stored.
struct Tail {
  __m256i m;
  __m256 load(const float* p) const { return _mm256_maskload_ps(p, m); }
  void store(float* p, __m256 v) const { _mm256_maskstore_ps(p, m, v); }
  // v in the loaded lanes, `other` in the rest.
  __m256 keep(__m256 v, __m256 other) const {
    return _mm256_blendv_ps(other, v, _mm256_castsi256_ps(m));
  }
};

// f(i, lanes) for each chunk of 8 at i, lanes Full, then the tail (if any) as Tail.
template <class F>
void each8(std::size_t n, F&& f) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) f(i, Full{});
  if (i < n) f(i, Tail{tail_mask(n - i)});
}

}  // namespace

void rmsnorm(const float* x, const float* w, std::size_t n, float eps, float* y) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
    a0 = _mm256_fmadd_ps(v0, v0, a0);
    a1 = _mm256_fmadd_ps(v1, v1, a1);
  }
  if (i < n) {
    const __m256i m0 = tail_mask(n - i), m1 = tail_mask(n - i > 8 ? n - i - 8 : 0);
    const __m256 v0 = _mm256_maskload_ps(x + i, m0), v1 = _mm256_maskload_ps(x + i + 8, m1);
    a0 = _mm256_fmadd_ps(v0, v0, a0);
    a1 = _mm256_fmadd_ps(v1, v1, a1);
  }
  const float ss = hsum(_mm256_add_ps(a0, a1));
  const __m256 scale = _mm256_set1_ps(1.0f / std::sqrt(ss / static_cast<float>(n) + eps));
  each8(n, [&](std::size_t j, auto lanes) {
    __m256 v = _mm256_mul_ps(lanes.load(x + j), scale);
    if (w != nullptr) v = _mm256_mul_ps(v, lanes.load(w + j));
    lanes.store(y + j, v);
  });
}

void rope_apply(float* x, std::size_t n_heads, std::size_t head_dim, std::size_t rot_dim,
                const float* cos_v, const float* sin_v, bool neox) {
  const std::size_t half = rot_dim / 2;
  const __m256 sign_even = _mm256_setr_ps(-0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f);
  for (std::size_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    std::size_t i = 0;
    if (neox) {
      for (; i + 8 <= half; i += 8) {
        const __m256 x0 = _mm256_loadu_ps(v + i), x1 = _mm256_loadu_ps(v + i + half);
        const __m256 c = _mm256_loadu_ps(cos_v + i), s = _mm256_loadu_ps(sin_v + i);
        _mm256_storeu_ps(v + i, _mm256_fmsub_ps(x0, c, _mm256_mul_ps(x1, s)));
        _mm256_storeu_ps(v + i + half, _mm256_fmadd_ps(x0, s, _mm256_mul_ps(x1, c)));
      }
    } else {
      for (; i + 4 <= half; i += 4) {  // 4 pairs = 8 floats
        const __m256 xv = _mm256_loadu_ps(v + 2 * i);
        const __m256 sw = _mm256_permute_ps(xv, 0xB1);  // (x1, x0) per pair
        const __m128 c4 = _mm_loadu_ps(cos_v + i), s4 = _mm_loadu_ps(sin_v + i);
        const __m256 c = _mm256_set_m128(_mm_unpackhi_ps(c4, c4), _mm_unpacklo_ps(c4, c4));
        __m256 s = _mm256_set_m128(_mm_unpackhi_ps(s4, s4), _mm_unpacklo_ps(s4, s4));
        s = _mm256_xor_ps(s, sign_even);  // (-s, s) per pair
        _mm256_storeu_ps(v + 2 * i, _mm256_fmadd_ps(xv, c, _mm256_mul_ps(sw, s)));
      }
    }
    for (; i < half; ++i) {
      const std::size_t a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
      const float x0 = v[a], x1 = v[b];
      v[a] = x0 * cos_v[i] - x1 * sin_v[i];
      v[b] = x0 * sin_v[i] + x1 * cos_v[i];
    }
  }
}

void swiglu(const float* gate, const float* up, std::size_t n, float* out) {
  const __m256 one = _mm256_set1_ps(1.0f), neg = _mm256_set1_ps(-0.0f);
  each8(n, [&](std::size_t i, auto lanes) {
    const __m256 g = lanes.load(gate + i);
    const __m256 silu = _mm256_div_ps(g, _mm256_add_ps(one, exp8(_mm256_xor_ps(g, neg))));
    lanes.store(out + i, _mm256_mul_ps(silu, lanes.load(up + i)));
  });
}

void geglu(const float* gate, const float* up, std::size_t n, float* out) {
  // gelu_tanh(g) = g / (1 + e^(-2u)), u = sqrt(2/pi) (g + 0.044715 g^3).
  const __m256 one = _mm256_set1_ps(1.0f), c = _mm256_set1_ps(-2.0f * 0.7978845608028654f);
  const __m256 c3 = _mm256_set1_ps(0.044715f);
  each8(n, [&](std::size_t i, auto lanes) {
    const __m256 g = lanes.load(gate + i);
    const __m256 inner = _mm256_fmadd_ps(_mm256_mul_ps(c3, g), _mm256_mul_ps(g, g), g);
    const __m256 gelu = _mm256_div_ps(g, _mm256_add_ps(one, exp8(_mm256_mul_ps(c, inner))));
    lanes.store(out + i, _mm256_mul_ps(gelu, lanes.load(up + i)));
  });
}

void softmax(float* x, std::size_t n) {
  if (n == 0) return;
  __m256 mx = _mm256_set1_ps(-INFINITY);
  each8(n, [&](std::size_t i, auto lanes) {
    mx = _mm256_max_ps(mx, lanes.keep(lanes.load(x + i), _mm256_set1_ps(-INFINITY)));
  });
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_movehdup_ps(h));
  const __m256 vmax = _mm256_set1_ps(_mm_cvtss_f32(h));
  __m256 sum = _mm256_setzero_ps();
  each8(n, [&](std::size_t i, auto lanes) {
    const __m256 e = lanes.keep(exp8(_mm256_sub_ps(lanes.load(x + i), vmax)), _mm256_setzero_ps());
    sum = _mm256_add_ps(sum, e);
    lanes.store(x + i, e);
  });
  const __m256 inv = _mm256_set1_ps(1.0f / hsum(sum));
  each8(n, [&](std::size_t i, auto lanes) {
    lanes.store(x + i, _mm256_mul_ps(lanes.load(x + i), inv));
  });
}

void add(float* y, const float* x, std::size_t n) {
  each8(n, [&](std::size_t i, auto lanes) {
    lanes.store(y + i, _mm256_add_ps(lanes.load(y + i), lanes.load(x + i)));
  });
}

// vcvtps2ph rounds to nearest even, as f32_to_fp16 does, and gives the same
// bits for every value but NaN (it keeps part of the payload): a chunk with a
// NaN goes through f32_to_fp16, as does the tail.
void f32_to_f16(const float* x, std::size_t n, std::uint8_t* out) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) {
      f32_to_fp16_bytes(x + i, 8, out + 2 * i);
      continue;
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  f32_to_fp16_bytes(x + i, n - i, out + 2 * i);
}

}  // namespace folio::kernels::cpu::avx2
FOLIO_AVX2_END
