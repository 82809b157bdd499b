// kernels/ref/ops_ref.cpp: scalar oracles for kernels/ops.h, computed in f64
// where accumulation order matters.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "kernels/ops.h"

namespace folio::kernels {

void rmsnorm_ref(const float* x, const float* w, std::size_t n, float eps, float* y) {
  double ss = 0;
  for (std::size_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  const double scale = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
  for (std::size_t i = 0; i < n; ++i) {
    y[i] = static_cast<float>(x[i] * scale * (w != nullptr ? w[i] : 1.0));
  }
}

void rope_ref(float* x, std::size_t n_heads, std::size_t head_dim, std::size_t rot_dim,
              std::size_t pos, float base, float freq_scale, bool neox) {
  const std::size_t half = rot_dim / 2;
  std::vector<float> c(half), s(half);
  rope_angles(pos, rot_dim, base, freq_scale, c.data(), s.data());
  rope_apply_ref(x, n_heads, head_dim, rot_dim, c.data(), s.data(), neox);
}

void rope_apply_ref(float* x, std::size_t n_heads, std::size_t head_dim, std::size_t rot_dim,
                    const float* cos_v, const float* sin_v, bool neox) {
  const std::size_t half = rot_dim / 2;
  for (std::size_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    for (std::size_t i = 0; i < half; ++i) {
      const std::size_t a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
      const double x0 = v[a], x1 = v[b];
      v[a] = static_cast<float>(x0 * cos_v[i] - x1 * sin_v[i]);
      v[b] = static_cast<float>(x0 * sin_v[i] + x1 * cos_v[i]);
    }
  }
}

void swiglu_ref(const float* gate, const float* up, std::size_t n, float* out) {
  for (std::size_t i = 0; i < n; ++i) {
    const double g = gate[i];
    out[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up[i]);
  }
}

void geglu_ref(const float* gate, const float* up, std::size_t n, float* out) {
  const double c = std::sqrt(2.0 / std::numbers::pi);
  for (std::size_t i = 0; i < n; ++i) {
    const double g = gate[i];
    out[i] =
        static_cast<float>(0.5 * g * (1.0 + std::tanh(c * (g + 0.044715 * g * g * g))) * up[i]);
  }
}

void softmax_ref(float* x, std::size_t n) {
  if (n == 0) return;
  const double mx = *std::max_element(x, x + n);
  double sum = 0;
  std::vector<double> e(n);
  for (std::size_t i = 0; i < n; ++i) sum += (e[i] = std::exp(x[i] - mx));
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(e[i] / sum);
}

void add_ref(float* y, const float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] += x[i];
}

}  // namespace folio::kernels
