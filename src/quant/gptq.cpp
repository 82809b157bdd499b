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
// positive definite. With J the order reversal, J H J = R^T R (R upper, the
// Cholesky factor) gives H = V V^T with V = J R^T J upper, so H^-1 = U^T U
// with U = V^-1 = J R^-T J: U[i][j] = (R^-1)[n-1-j][n-1-i]. One factorization
// and one triangular inverse, half the work of inverting H and factoring the
// inverse (and fewer roundings).
Matrix inverse_upper_factor(const Matrix& H, std::size_t n) {
  Matrix R(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) R[i * n + j] = H[(n - 1 - i) * n + (n - 1 - j)];
  }
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
  Matrix U(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i; j < n; ++j) U[i * n + j] = X[(n - 1 - j) * n + (n - 1 - i)];
  }
  return U;
}

}  // namespace

double output_error(std::span<const double> e, std::span<const double> H, std::vector<double>& y) {
  double total = 0.0;
  output_errors(e, 1, H, std::span(&total, 1), y);
  return total;
}

void output_errors(std::span<const double> E, std::size_t k, std::span<const double> H,
                   std::span<double> out, std::vector<double>& y) {
  if (k == 0) return;
  const std::size_t n = E.size() / k;
  FOLIO_CHECK(E.size() == k * n && H.size() == n * n && out.size() == k,
              "output_errors: sizes disagree");
  // H is symmetric: e^T H e = sum_c e_c (H_cc e_c + 2 z_c) with z_c = sum_{i<c}
  // H_ic e_i, the strict upper triangle only (half the products).
  y.assign(k * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {  // z_r[c] += H_ic e_r[i], axpys, which vectorize
    const double* h = &H[i * n];
    for (std::size_t r = 0; r < k; ++r) {
      const double ei = E[r * n + i];
      if (ei == 0.0) continue;
      double* zr = &y[r * n];
      for (std::size_t c = i + 1; c < n; ++c) zr[c] += h[c] * ei;
    }
  }
  for (std::size_t r = 0; r < k; ++r) {
    const double* e = &E[r * n];
    const double* z = &y[r * n];
    double total = 0.0;
    for (std::size_t c = 0; c < n; ++c) total += e[c] * (H[c * n + c] * e[c] + 2.0 * z[c]);
    out[r] = total;
  }
}

double reconstruction_error(gguf::TensorType type, std::span<const std::uint8_t> bytes,
                            std::span<const float> W, std::size_t rows, std::size_t cols,
                            std::span<const double> H) {
  const std::size_t row_bytes = quantized_bytes(type, cols);
  FOLIO_CHECK(
      bytes.size() == rows * row_bytes && W.size() == rows * cols && H.size() == cols * cols,
      "reconstruction_error: sizes disagree");
  // Rows kBlock at a time through output_errors (H read once per block), summed in row order.
  constexpr std::size_t kBlock = kOutputErrorRows;
  std::vector<float> q(cols);
  std::vector<double> E(kBlock * cols), errs(kBlock), y;
  double total = 0.0;
  for (std::size_t r0 = 0; r0 < rows; r0 += kBlock) {
    const std::size_t k = std::min(kBlock, rows - r0);
    for (std::size_t i = 0; i < k; ++i) {
      const std::size_t r = r0 + i;
      dequantize_row(type, bytes.subspan(r * row_bytes, row_bytes), q);
      for (std::size_t j = 0; j < cols; ++j)
        E[i * cols + j] = static_cast<double>(W[r * cols + j]) - q[j];
    }
    output_errors(std::span(E).first(k * cols), k, H, std::span(errs).first(k), y);
    for (std::size_t i = 0; i < k; ++i) total += errs[i];
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
  // Rows go through the column loop kRowBlock at a time, so that each row of
  // U (and of H for the errors) is read once for the block rather than once
  // per row: U is n^2 doubles (18 MiB at n = 1536), past L2, and one row at
  // a time made both loops memory-bound. Each row's operations and their
  // order are the same as one row at a time: the bytes do not depend on the
  // block (nor the thread count).
  constexpr std::size_t kRowBlock = 8;
  const std::size_t bb = traits(type).block_bytes;
  parallel_rows(rows, options.threads, [&](std::size_t r0, std::size_t r1) {
    struct Row {
      std::vector<double> w, wp;  // the row in column order, and in processing order
      std::vector<ElementGrid> grids;
      std::vector<int> codes;
    };
    std::vector<Row> block(std::min(kRowBlock, r1 - r0));
    for (Row& row : block) {
      row.w.resize(n);
      row.wp.resize(n);
      row.grids.resize(n);
      row.codes.resize(n);
    }
    std::vector<float> block_in(B), q(n);
    std::vector<double> E(2 * kRowBlock * n), y, errs(2 * kRowBlock);
    std::vector<std::uint8_t> rtn(row_bytes);
    const auto fix_block = [&](Row& row, std::size_t blk, std::span<std::uint8_t> out) {
      for (std::size_t i = 0; i < B; ++i) block_in[i] = static_cast<float>(row.w[blk * B + i]);
      const auto bytes = out.subspan(blk * bb, bb);
      quantize_row(type, block_in, std::span(importance).subspan(blk * B, B), bytes);
      block_grids(type, bytes, std::span(row.grids).subspan(blk * B, B));
    };
    const auto out_row = [&](std::size_t r) {
      return std::span(result.bytes).subspan(r * row_bytes, row_bytes);
    };
    for (std::size_t rb = r0; rb < r1; rb += kRowBlock) {
      const std::size_t k = std::min(kRowBlock, r1 - rb);
      for (std::size_t b = 0; b < k; ++b) {
        Row& row = block[b];
        for (std::size_t j = 0; j < n; ++j) row.w[j] = dead[j] ? 0.0 : W[(rb + b) * n + j];
        if (options.act_order) {
          for (std::size_t blk = 0; blk < n / B; ++blk) fix_block(row, blk, out_row(rb + b));
        }
        for (std::size_t jj = 0; jj < n; ++jj) row.wp[jj] = row.w[order[jj]];
      }
      for (std::size_t jj = 0; jj < n; ++jj) {
        const std::size_t j = order[jj];
        const double* u = &U[jj * n];
        for (std::size_t b = 0; b < k; ++b) {
          Row& row = block[b];
          if (!options.act_order && j % B == 0) {  // identity order: w[j..] is wp[jj..]
            for (std::size_t i = 0; i < B; ++i) row.w[j + i] = row.wp[jj + i];
            fix_block(row, j / B, out_row(rb + b));
          }
          row.codes[j] = row.grids[j].nearest(static_cast<float>(row.wp[jj]));
          const double err = (row.wp[jj] - row.grids[j].value(row.codes[j])) / u[jj];
          double* wp = row.wp.data();
          for (std::size_t kk = jj + 1; kk < n; ++kk) wp[kk] -= err * u[kk];
        }
      }
      // The objective, for GPTQ's rows and for round-to-nearest's.
      for (std::size_t b = 0; b < k; ++b) {
        const auto out = out_row(rb + b);
        for (std::size_t blk = 0; blk < n / B; ++blk) {
          set_block_codes(type, out.subspan(blk * bb, bb),
                          std::span(block[b].codes).subspan(blk * B, B));
        }
        const auto w_row = W.subspan((rb + b) * n, n);
        dequantize_row(type, out, q);
        for (std::size_t j = 0; j < n; ++j) E[b * n + j] = static_cast<double>(w_row[j]) - q[j];
        quantize_row(type, w_row, {}, rtn);
        dequantize_row(type, rtn, q);
        for (std::size_t j = 0; j < n; ++j) {
          E[(k + b) * n + j] = static_cast<double>(w_row[j]) - q[j];
        }
      }
      output_errors(std::span(E).first(2 * k * n), 2 * k, H, std::span(errs).first(2 * k), y);
      for (std::size_t b = 0; b < k; ++b) {
        errors[rb + b] = errs[b];
        rtn_errors[rb + b] = errs[k + b];
      }
    }
  });
  result.error = std::accumulate(errors.begin(), errors.end(), 0.0);
  result.rtn_error = std::accumulate(rtn_errors.begin(), rtn_errors.end(), 0.0);
  return result;
}

}  // namespace folio::quant
