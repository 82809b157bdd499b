// quant/awq.h: AWQ (Lin et al., 2023), activation-aware weight quantization:
// the input channels that carry large activations matter most, so scale
// them up before rounding (less relative error) and fold the inverse scale
// into whatever produces the input (a norm's weight, or the previous
// linear's rows), which leaves the float model's function unchanged:
//   W x = (W diag(s)) (diag(1/s) x)
// The scales are s = mean|x|^alpha (normalized so sqrt(max s * min s) = 1),
// alpha searched on a grid in [0, 1) to minimize the linears' output error
// on calibration inputs, sum (w - Q(w s)/s)^T H (w - Q(w s)/s) over rows
// (H = X^T X / n), with every linear that shares the input searched together.
// alpha = 0 is plain rounding, so the search never does worse than it on
// the rows it measures.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "gguf/tensor_type.h"

namespace folio::quant {

// One linear reading the shared input: rows x cols weights (row-major) and
// the type it will be quantized to.
struct AwqLinear {
  std::span<const float> w;
  std::size_t rows = 0;
  gguf::TensorType type;
};

struct AwqOptions {
  int grid = 20;              // alphas 0, 1/grid, ..., (grid-1)/grid
  std::size_t max_rows = 64;  // rows of each linear measured (evenly spaced); 0: all
  int threads = 1;
  double fixed_alpha = -1;  // >= 0: use this alpha, no search (plain_error still measured)
};

struct AwqScales {
  std::vector<float> scales;  // per input channel (multiply W's columns, divide the input)
  double alpha = 0;
  double error = 0;        // the measured rows' output error at the chosen alpha
  double plain_error = 0;  // ... at alpha = 0 (round to nearest)
};

// mean_abs: per input channel, mean |x| over calibration rows; H: cols x cols.
// Throws folio::Error on mismatched sizes or a type folio cannot write.
AwqScales awq_search(std::span<const AwqLinear> linears, std::size_t cols,
                     std::span<const float> mean_abs, std::span<const double> H,
                     const AwqOptions& options);

// AWQ's second step, the clipping search: after scaling, a weight group's
// largest values set its block scale, so clipping them can lower the error of
// everything else in the block. For each row and each 32-column block of a
// linear quantized to a 32-value block type (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0), try
// the clip |w| <= r * max|w| for r = 1, 1 - 1/grid, ..., 1 - max_shrink and keep
// the r whose rounding error e has the smallest e^T H_b e, H_b the block's
// diagonal block of H (AutoAWQ measures each group alone the same way).
// r = 1 is no clip, so no block gets worse by this measure.
struct AwqClipOptions {
  int grid = 20;
  double max_shrink = 0.5;
  int threads = 1;
};

struct AwqClipResult {
  double error = 0;         // sum over blocks of e^T H_b e after the search
  double plain_error = 0;   // ... without clipping
  std::size_t clipped = 0;  // blocks whose r < 1
};

// w: rows x cols (cols a multiple of 32), clipped in place. Throws folio::Error
// for a type whose blocks are not 32 values or mismatched sizes.
AwqClipResult awq_clip(std::span<float> w, std::size_t rows, std::size_t cols,
                       gguf::TensorType type, std::span<const double> H,
                       const AwqClipOptions& options);

}  // namespace folio::quant
