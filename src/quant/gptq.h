// quant/gptq.h: GPTQ (Frantar et al., 2022) onto GGUF block types: each row
// of a linear's weight matrix is quantized one column at a time, and each
// column's rounding error is spread over the columns not yet quantized so
// that the layer's output on calibration inputs, not the weights, stays
// close:  minimize ||W X - Q X||^2  =  sum_r (w_r - q_r)^T H (w_r - q_r),
// H = X^T X / n (the input second-moment matrix).
//
//   H += damp * mean(diag H) * I           (dead columns: H_jj = 1, w_j = 0)
//   U = upper Cholesky factor of H^-1
//   for each column j (in order, or by descending H_jj with act_order):
//     at the first column of a GGUF block, fix the block's scales from the
//       current (compensated) weights, importance-weighted by diag H
//       (act_order: every block's scales are fixed first, from the original
//       weights: "static groups", since a block's columns are no longer
//       visited together)
//     q_j = the block grid's point nearest w_j
//     w_k -= (w_j - q_j) / U_jj * U_jk      for every later column k
//
// Rows are independent given U, so they run on separate threads; the result
// does not depend on the thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "gguf/tensor_type.h"

namespace folio::quant {

struct GptqOptions {
  double damp = 0.01;      // fraction of mean(diag H) added to the diagonal
  bool act_order = false;  // columns by descending H_jj, with static groups
  int threads = 1;
};

struct GptqResult {
  std::vector<std::uint8_t> bytes;  // the quantized matrix, rows x row_bytes
  // Reconstruction error sum_r (w_r - q_r)^T H (w_r - q_r) (= ||WX - QX||^2 / n)
  // of GPTQ's result and of round-to-nearest on the same weights.
  double error = 0;
  double rtn_error = 0;
  double damp_used = 0;  // the damping that made H positive definite
};

// W: rows x cols (row-major); H: cols x cols (symmetric, row-major). Throws
// folio::Error when the type has no element codes (block_codes.h), sizes
// disagree, or H stays indefinite after raising the damping.
GptqResult gptq_quantize(gguf::TensorType type, std::span<const float> W, std::size_t rows,
                         std::size_t cols, std::span<const double> H, const GptqOptions& options);

// e^T H e for one row's weight error e (n = e.size(), H n x n and
// symmetric): a linear's output error on inputs with second moment H. `y` is scratch.
double output_error(std::span<const double> e, std::span<const double> H, std::vector<double>& y);

// The same for k rows at once: E holds e_0..e_{k-1} (k x n, row-major) and
// out[r] = e_r^T H e_r, each equal to output_error's value for that row. H is
// read once for all k rows (one row at a time, an H past L2 made this
// memory-bound). `y` is scratch.
void output_errors(std::span<const double> E, std::size_t k, std::span<const double> H,
                   std::span<double> out, std::vector<double>& y);
// Rows per output_errors call for callers that sum many rows' errors.
inline constexpr std::size_t kOutputErrorRows = 8;

// The reconstruction error of `bytes` (type, rows x cols) against W under H.
double reconstruction_error(gguf::TensorType type, std::span<const std::uint8_t> bytes,
                            std::span<const float> W, std::size_t rows, std::size_t cols,
                            std::span<const double> H);

}  // namespace folio::quant
