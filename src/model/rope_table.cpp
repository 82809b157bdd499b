// model/rope_table.cpp: RoPE frequencies per scaling type (see rope_table.h).
#include "model/rope_table.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "base/error.h"
#include "kernels/ops.h"

namespace folio::model {

namespace {

// The pair index whose frequency turns `rotations` times over `ctx` positions.
double correction_dim(double rotations, std::size_t n_rot, double ctx, double base) {
  return static_cast<double>(n_rot) * std::log(ctx / (rotations * 2.0 * std::numbers::pi)) /
         (2.0 * std::log(base));
}

}  // namespace

RopeTable rope_table(const ModelConfig& c) {
  const RopeScaling& s = c.rope_scaling;
  const std::size_t n_rot = c.n_rot, half = n_rot / 2;
  // The base rounded to f32 first, as rope_angles() and HF's f32 tensors take it.
  const double base = static_cast<float>(c.rope_freq_base);
  RopeTable t;
  t.inv_freq.resize(half);
  if (s.type == "none" || s.factor == 1.0 || s.type == "linear") {
    const float scale = s.type == "linear" ? static_cast<float>(1.0 / s.factor) : 1.0f;
    kernels::rope_frequencies(n_rot, static_cast<float>(base), scale, t.inv_freq.data());
    return t;
  }
  if (s.type == "yarn") {
    if (s.original_context == 0) {
      throw Error("model '" + c.name + "': YaRN RoPE scaling needs " + c.arch +
                  ".rope.scaling.original_context_length, which the file does not set");
    }
    const auto ctx = static_cast<double>(s.original_context);
    const double lo = std::max(0.0, std::floor(correction_dim(s.beta_fast, n_rot, ctx, base)));
    double hi = std::min(static_cast<double>(n_rot - 1),
                         std::ceil(correction_dim(s.beta_slow, n_rot, ctx, base)));
    if (hi == lo) hi += 0.001;  // as HF and llama.cpp: no division by zero
    // In f32, operation by operation, as HF's tensors compute it.
    const auto factor = static_cast<float>(s.factor), flo = static_cast<float>(lo);
    const auto span = static_cast<float>(hi) - flo;
    for (std::size_t i = 0; i < half; ++i) {
      const auto pos_freq = static_cast<float>(std::pow(
          base, static_cast<double>(static_cast<float>(2 * i) / static_cast<float>(n_rot))));
      const float extrapolated = 1.0f / pos_freq, interpolated = 1.0f / (factor * pos_freq);
      const float keep = 1.0f - std::clamp((static_cast<float>(i) - flo) / span, 0.0f, 1.0f);
      t.inv_freq[i] = interpolated * (1.0f - keep) + extrapolated * keep;
    }
    t.mscale =
        static_cast<float>(s.attn_factor * (s.factor > 1.0 ? 1.0 + 0.1 * std::log(s.factor) : 1.0));
    return t;
  }
  throw Error("model '" + c.name + "': RoPE scaling '" + s.type +
              "' is not supported yet (supported: none, linear, yarn)");
}

}  // namespace folio::model
