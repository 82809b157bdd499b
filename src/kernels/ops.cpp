// kernels/ops.cpp: dispatch of the element-wise ops (AVX2 at every SIMD level)
// and their portable fallbacks, plus RoPE angle computation.
#include "kernels/ops.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/ops_avx2.h"
#include "kernels/cpu_features.h"

namespace folio::kernels {

namespace {
bool use_avx2() {
  return cpu::simd_ops(active_isa());
}
}  // namespace

void rmsnorm(const float* x, const float* w, std::size_t n, float eps, float* y) {
  if (use_avx2()) return cpu::avx2::rmsnorm(x, w, n, eps, y);
  float ss = 0.0f;
  for (std::size_t i = 0; i < n; ++i) ss += x[i] * x[i];
  const float scale = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  for (std::size_t i = 0; i < n; ++i) y[i] = x[i] * scale * (w != nullptr ? w[i] : 1.0f);
}

void rope_angles(std::size_t pos, std::size_t rot_dim, float base, float freq_scale, float* cos_out,
                 float* sin_out) {
  std::vector<float> inv_freq(rot_dim / 2);
  rope_frequencies(rot_dim, base, freq_scale, inv_freq.data());
  rope_angles_table(pos, inv_freq.data(), inv_freq.size(), 1.0f, cos_out, sin_out);
}

void rope_frequencies(std::size_t rot_dim, float base, float freq_scale, float* inv_freq) {
  for (std::size_t i = 0; i < rot_dim / 2; ++i) {
    const double expo = static_cast<double>(2 * i) / static_cast<double>(rot_dim);
    inv_freq[i] = static_cast<float>(1.0 / std::pow(static_cast<double>(base), expo)) * freq_scale;
  }
}

void rope_angles_table(std::size_t pos, const float* inv_freq, std::size_t half, float mscale,
                       float* cos_out, float* sin_out) {
  for (std::size_t i = 0; i < half; ++i) {
    const float theta = static_cast<float>(pos) * inv_freq[i];
    cos_out[i] = static_cast<float>(std::cos(static_cast<double>(theta))) * mscale;
    sin_out[i] = static_cast<float>(std::sin(static_cast<double>(theta))) * mscale;
  }
}

void rope_apply(float* x, std::size_t n_heads, std::size_t head_dim, std::size_t rot_dim,
                const float* cos_v, const float* sin_v, bool neox) {
  if (use_avx2()) return cpu::avx2::rope_apply(x, n_heads, head_dim, rot_dim, cos_v, sin_v, neox);
  const std::size_t half = rot_dim / 2;
  for (std::size_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    for (std::size_t i = 0; i < half; ++i) {
      const std::size_t a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
      const float x0 = v[a], x1 = v[b];
      v[a] = x0 * cos_v[i] - x1 * sin_v[i];
      v[b] = x0 * sin_v[i] + x1 * cos_v[i];
    }
  }
}

void rope(float* x, std::size_t n_heads, std::size_t head_dim, std::size_t rot_dim, std::size_t pos,
          float base, float freq_scale, bool neox) {
  thread_local std::vector<float> cs;  // grows to the largest rot_dim seen
  if (cs.size() < rot_dim) cs.resize(rot_dim);
  rope_angles(pos, rot_dim, base, freq_scale, cs.data(), cs.data() + rot_dim / 2);
  rope_apply(x, n_heads, head_dim, rot_dim, cs.data(), cs.data() + rot_dim / 2, neox);
}

void swiglu(const float* gate, const float* up, std::size_t n, float* out) {
  if (use_avx2()) return cpu::avx2::swiglu(gate, up, n, out);
  for (std::size_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void geglu(const float* gate, const float* up, std::size_t n, float* out) {
  if (use_avx2()) return cpu::avx2::geglu(gate, up, n, out);
  constexpr float kC = 0.7978845608028654f;  // sqrt(2 / pi)
  for (std::size_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-2.0f * kC * (g + 0.044715f * g * g * g))) * up[i];
  }
}

void softcap(float* x, std::size_t n, float cap) {
  for (std::size_t i = 0; i < n; ++i) x[i] = cap * std::tanh(x[i] / cap);
}

void softmax(float* x, std::size_t n) {
  if (use_avx2()) return cpu::avx2::softmax(x, n);
  if (n == 0) return;
  const float mx = *std::max_element(x, x + n);
  float sum = 0.0f;
  for (std::size_t i = 0; i < n; ++i) sum += (x[i] = std::exp(x[i] - mx));
  const float inv = 1.0f / sum;
  for (std::size_t i = 0; i < n; ++i) x[i] *= inv;
}

void add(float* y, const float* x, std::size_t n) {
  if (use_avx2()) return cpu::avx2::add(y, x, n);
  for (std::size_t i = 0; i < n; ++i) y[i] += x[i];
}

}  // namespace folio::kernels
