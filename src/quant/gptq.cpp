// quant/gptq.cpp: GPTQ onto GGUF block types (see gptq.h).
#include "quant/gptq.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "base/error.h"
#include "quant/block_codes.h"
#include "quant/dequantize.h"
#include "quant/parallel_rows.h"
#include "quant/quantize.h"
#include "quant/traits.h"

namespace folio::quant {

namespace {

using Matrix = std::vector<double>;  // n x n, row-major

// Every loop below is an axpy over a contiguous row (it vectorizes, and
// each element's operations run in a fixed order, so results do not depend
// on the vector width).

// In-place upper Cholesky factor R of `a` (H = R^T R; the strict lower
// triangle is zeroed); false when `a` is not positive definite.
bool cholesky_upper(Matrix& a, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) {
    double* ak = &a[k * n];
    if (!(ak[k] > 0.0)) return false;
    const double r = std::sqrt(ak[k]);
    ak[k] = r;
    const double inv = 1.0 / r;
    for (std::size_t j = k + 1; j < n; ++j) ak[j] *= inv;
    for (std::size_t i = k + 1; i < n; ++i) {
      const double f = ak[i];
      if (f == 0.0) continue;
      double* ai = &a[i * n];
      for (std::size_t j = i; j < n; ++j) ai[j] -= f * ak[j];
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < i; ++j) a[i * n + j] = 0.0;
  }
  return true;
}

// U, upper triangular with U^T U = H^-1, or empty when H (damped) is not
// positive definite: H = R^T R, X = R^-1, H^-1 = X X^T, U = chol_upper(H^-1).
Matrix inverse_upper_factor(const Matrix& H, std::size_t n) {
  Matrix R = H;
  if (!cholesky_upper(R, n)) return {};
  Matrix X(n * n, 0.0);  // R^-1 (upper), rows by back substitution
  for (std::size_t ii = n; ii-- > 0;) {
    double* xi = &X[ii * n];
    xi[ii] = 1.0;
    for (std::size_t k = ii + 1; k < n; ++k) {
      const double f = R[ii * n + k];
      if (f == 0.0) continue;
      const double* xk = &X[k * n];
      for (std::size_t j = k; j < n; ++j) xi[j] -= f * xk[j];
    }
    const double inv = 1.0 / R[ii * n + ii];
    for (std::size_t j = ii; j < n; ++j) xi[j] *= inv;
  }
  Matrix T(n * n, 0.0);  // X^T (lower): row k holds column k of X
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i; j < n; ++j) T[j * n + i] = X[i * n + j];
  }
  Matrix Hinv(n * n, 0.0);  // X X^T = T^T T, upper triangle: sum over k of T[k] outer T[k]
  for (std::size_t k = 0; k < n; ++k) {
    const double* tk = &T[k * n];
    for (std::size_t i = 0; i <= k; ++i) {
      const double f = tk[i];
      if (f == 0.0) continue;
      double* hi = &Hinv[i * n];
      for (std::size_t j = i; j <= k; ++j) hi[j] += f * tk[j];
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < i; ++j) Hinv[i * n + j] = Hinv[j * n + i];
  }
  if (!cholesky_upper(Hinv, n)) return {};
  return Hinv;
}

}  // namespace

double output_error(std::span<const double> e, std::span<const double> H, std::vector<double>& y) {
  const std::size_t n = e.size();
  y.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {  // y = H e as axpys, which vectorize
    if (e[i] == 0.0) continue;
    const double ei = e[i];
    const double* h = &H[i * n];
    for (std::size_t k = 0; k < n; ++k) y[k] += h[k] * ei;
  }
  double total = 0.0;
  for (std::size_t k = 0; k < n; ++k) total += e[k] * y[k];
  return total;
}

double reconstruction_error(gguf::TensorType type, std::span<const std::uint8_t> bytes,
                            std::span<const float> W, std::size_t rows, std::size_t cols,
                            std::span<const double> H) {
  const std::size_t row_bytes = quantized_bytes(type, cols);
  FOLIO_CHECK(
      bytes.size() == rows * row_bytes && W.size() == rows * cols && H.size() == cols * cols,
      "reconstruction_error: sizes disagree");
  std::vector<float> q(cols);
  std::vector<double> e(cols), y;
  double total = 0.0;
  for (std::size_t r = 0; r < rows; ++r) {
    dequantize_row(type, bytes.subspan(r * row_bytes, row_bytes), q);
    for (std::size_t j = 0; j < cols; ++j) e[j] = static_cast<double>(W[r * cols + j]) - q[j];
    total += output_error(e, H, y);
  }
  return total;
}

GptqResult gptq_quantize(gguf::TensorType type, std::span<const float> W, std::size_t rows,
                         std::size_t cols, std::span<const double> H, const GptqOptions& options) {
  if (!has_element_codes(type)) {
    throw Error("GPTQ cannot write " + std::string(gguf::tensor_type_name(type)) +
                " (it writes Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K)");
  }
  if (W.size() != rows * cols || H.size() != cols * cols) {
    throw Error("GPTQ: a " + std::to_string(rows) + " x " + std::to_string(cols) +
                " matrix needs " + std::to_string(rows * cols) + " weights and a " +
                std::to_string(cols) + "^2 Hessian (got " + std::to_string(W.size()) + " and " +
                std::to_string(H.size()) + ")");
  }
  const std::size_t B = traits(type).block_elems;
  const std::size_t row_bytes = quantized_bytes(type, cols);  // also checks cols % B == 0
  const std::size_t n = cols;

  // Dead columns (never activated) carry no information: zero them.
  std::vector<bool> dead(n, false);
  std::vector<float> importance(n);
  double mean_diag = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    dead[j] = !(H[j * n + j] > 0.0);
    importance[j] = static_cast<float>(std::max(H[j * n + j], 0.0));
    mean_diag += dead[j] ? 1.0 : H[j * n + j];
  }
  mean_diag /= static_cast<double>(n);

  // Column order (act_order: most important first) and H in that order.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (options.act_order) {
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return H[a * n + a] > H[b * n + b]; });
  }
  GptqResult result;
  Matrix U;
  for (double damp = options.damp; damp <= 10.0 && U.empty(); damp *= 10.0) {
    Matrix Hp(n * n);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        const std::size_t oi = order[i], oj = order[j];
        Hp[i * n + j] = dead[oi] || dead[oj] ? (oi == oj ? 1.0 : 0.0) : H[oi * n + oj];
      }
      Hp[i * n + i] += damp * mean_diag;
    }
    U = inverse_upper_factor(Hp, n);
    result.damp_used = damp;
  }
  if (U.empty()) throw Error("GPTQ: the Hessian stays indefinite even with damping 10");

  result.bytes.assign(rows * row_bytes, 0);
  std::vector<double> errors(rows, 0.0), rtn_errors(rows, 0.0);
  parallel_rows(rows, options.threads, [&](std::size_t r0, std::size_t r1) {
    std::vector<double> w(n), e(n), y;
    std::vector<float> block_in(B), q(n);
    std::vector<ElementGrid> grids(n);
    std::vector<int> codes(n);
    std::vector<std::uint8_t> rtn(row_bytes);
    const auto fix_block = [&](std::size_t blk, std::span<std::uint8_t> out) {
      for (std::size_t i = 0; i < B; ++i) block_in[i] = static_cast<float>(w[blk * B + i]);
      const auto bytes = out.subspan(blk * traits(type).block_bytes, traits(type).block_bytes);
      quantize_row(type, block_in, std::span(importance).subspan(blk * B, B), bytes);
      block_grids(type, bytes, std::span(grids).subspan(blk * B, B));
    };
    std::vector<double> wp(n);  // the row in processing order
    for (std::size_t r = r0; r < r1; ++r) {
      const auto out = std::span(result.bytes).subspan(r * row_bytes, row_bytes);
      for (std::size_t j = 0; j < n; ++j) w[j] = dead[j] ? 0.0 : W[r * n + j];
      if (options.act_order) {
        for (std::size_t blk = 0; blk < n / B; ++blk) fix_block(blk, out);
      }
      for (std::size_t jj = 0; jj < n; ++jj) wp[jj] = w[order[jj]];
      for (std::size_t jj = 0; jj < n; ++jj) {
        const std::size_t j = order[jj];
        if (!options.act_order && j % B == 0) {  // identity order: w[j..] is wp[jj..]
          for (std::size_t i = 0; i < B; ++i) w[j + i] = wp[jj + i];
          fix_block(j / B, out);
        }
        codes[j] = grids[j].nearest(static_cast<float>(wp[jj]));
        const double err = (wp[jj] - grids[j].value(codes[j])) / U[jj * n + jj];
        const double* u = &U[jj * n];
        for (std::size_t kk = jj + 1; kk < n; ++kk) wp[kk] -= err * u[kk];
      }
      for (std::size_t blk = 0; blk < n / B; ++blk) {
        const std::size_t bb = traits(type).block_bytes;
        set_block_codes(type, out.subspan(blk * bb, bb), std::span(codes).subspan(blk * B, B));
      }
      // The objective, for GPTQ's row and for round-to-nearest's.
      const auto w_row = W.subspan(r * n, n);
      dequantize_row(type, out, q);
      for (std::size_t j = 0; j < n; ++j) e[j] = static_cast<double>(w_row[j]) - q[j];
      errors[r] = output_error(e, H, y);
      quantize_row(type, w_row, {}, rtn);
      dequantize_row(type, rtn, q);
      for (std::size_t j = 0; j < n; ++j) e[j] = static_cast<double>(w_row[j]) - q[j];
      rtn_errors[r] = output_error(e, H, y);
    }
  });
  result.error = std::accumulate(errors.begin(), errors.end(), 0.0);
  result.rtn_error = std::accumulate(rtn_errors.begin(), rtn_errors.end(), 0.0);
  return result;
}

}  // namespace folio::quant
