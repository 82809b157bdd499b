// model/rope_table.h: a model's RoPE frequencies after context scaling.
//
// For rotated pair i < n_rot / 2 the angle at position p is p * inv_freq[i]
// (f32 product, as HF forms it) and cos/sin are multiplied by `mscale`:
//
//   none    inv_freq[i] = base^(-2i / n_rot)  (correctly rounded to f32), mscale 1
//   linear  inv_freq[i] * (1 / factor), mscale 1 (position interpolation)
//   yarn    r_i = clamp((i - lo) / (hi - lo), 0, 1) blends the plain frequency
//           (r_i = 0: fast-rotating pairs are extrapolated) with base^(-2i/n_rot) / factor
//           (r_i = 1: slow pairs are interpolated):
//             inv_freq[i] = (1 - r_i) * base^(-2i/n_rot) + r_i * base^(-2i/n_rot) / factor
//           lo = floor(dim(beta_fast)), hi = ceil(dim(beta_slow)), clamped to [0, n_rot - 1],
//           dim(b) = n_rot * ln(n_ctx_orig / (2 pi b)) / (2 ln base), i.e. the pair that turns b
//           times over the original context; beta_fast 32, beta_slow 1 unless the file says
//           otherwise; mscale = attn_factor * (1 + 0.1 ln factor) (factor > 1; else attn_factor).
//           The same function as HF's _compute_yarn_parameters and llama.cpp's rope_yarn
//           (ext_factor 1).
// Other scaling types are refused with an error that names them.
#pragma once

#include <vector>

#include "model/config.h"

namespace folio::model {

struct RopeTable {
  std::vector<float> inv_freq;  // n_rot / 2 values
  float mscale = 1.0f;
};

RopeTable rope_table(const ModelConfig& c);

}  // namespace folio::model
