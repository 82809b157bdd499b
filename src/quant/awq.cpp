// quant/awq.cpp: the AWQ scale search (see awq.h).
#include "quant/awq.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "base/error.h"
#include "quant/dequantize.h"
#include "quant/gptq.h"
#include "quant/parallel_rows.h"
#include "quant/quantize.h"
#include "quant/traits.h"

namespace folio::quant {

namespace {

// The output error of quantizing the measured rows with channel scales s.
double scaled_error(std::span<const AwqLinear> linears, std::size_t cols, std::span<const float> s,
                    std::span<const double> H, std::size_t max_rows, int threads) {
  struct Job {
    const AwqLinear* l;
    std::size_t row;
  };
  std::vector<Job> jobs;
  for (const AwqLinear& l : linears) {
    const std::size_t n = max_rows == 0 ? l.rows : std::min(l.rows, max_rows);
    for (std::size_t k = 0; k < n; ++k) jobs.push_back({&l, k * l.rows / n});
  }
  std::vector<double> per_job(jobs.size(), 0.0);       // summed in job order: thread-count free
  constexpr std::size_t kRowBlock = kOutputErrorRows;  // rows per read of H
  parallel_rows(jobs.size(), threads, [&](std::size_t k0, std::size_t k1) {
    std::vector<float> scaled(cols), q(cols);
    std::vector<double> E(kRowBlock * cols), y;
    std::vector<std::uint8_t> bytes;
    for (std::size_t kb = k0; kb < k1; kb += kRowBlock) {
      const std::size_t m = std::min(kRowBlock, k1 - kb);
      for (std::size_t b = 0; b < m; ++b) {
        const AwqLinear& l = *jobs[kb + b].l;
        const float* w = &l.w[jobs[kb + b].row * cols];
        for (std::size_t j = 0; j < cols; ++j) scaled[j] = w[j] * s[j];
        bytes.resize(quantized_bytes(l.type, cols));
        quantize_row(l.type, scaled, {}, bytes);
        dequantize_row(l.type, bytes, q);
        for (std::size_t j = 0; j < cols; ++j) {
          E[b * cols + j] = static_cast<double>(w[j]) - q[j] / s[j];
        }
      }
      output_errors(std::span(E).first(m * cols), m, H, std::span(per_job).subspan(kb, m), y);
    }
  });
  double total = 0.0;
  for (const double p : per_job) total += p;
  return total;
}

}  // namespace

AwqScales awq_search(std::span<const AwqLinear> linears, std::size_t cols,
                     std::span<const float> mean_abs, std::span<const double> H,
                     const AwqOptions& options) {
  if (linears.empty() || mean_abs.size() != cols || H.size() != cols * cols || options.grid < 1) {
    throw Error("AWQ: " + std::to_string(linears.size()) + " linears, " +
                std::to_string(mean_abs.size()) + " channel means and a Hessian of " +
                std::to_string(H.size()) + " for " + std::to_string(cols) + " input channels");
  }
  for (const AwqLinear& l : linears) {
    if (l.w.size() != l.rows * cols) throw Error("AWQ: a linear's weights are not rows x cols");
    if (!can_quantize(l.type)) {
      throw Error("AWQ: folio cannot write " + std::string(gguf::tensor_type_name(l.type)));
    }
  }
  float max_abs = 0.0f;
  for (float v : mean_abs) max_abs = std::max(max_abs, v);
  const float floor = std::max(max_abs * 1e-4f, 1e-12f);  // channels never seen still get a scale

  AwqScales best;
  std::vector<float> s(cols, 1.0f);
  const bool fixed = options.fixed_alpha >= 0.0;
  if (fixed && options.fixed_alpha >= 1.0) throw Error("AWQ: a fixed alpha must be in [0, 1)");
  for (int g = 0; g < (fixed ? 2 : options.grid); ++g) {
    const double alpha =
        fixed ? (g == 0 ? 0.0 : options.fixed_alpha) : static_cast<double>(g) / options.grid;
    double lo = 1e300, hi = 0.0;
    for (std::size_t j = 0; j < cols; ++j) {
      const double v = std::pow(static_cast<double>(std::max(mean_abs[j], floor)), alpha);
      s[j] = static_cast<float>(v);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    const auto norm = static_cast<float>(1.0 / std::sqrt(lo * hi));
    for (float& v : s) v *= norm;
    const double err = scaled_error(linears, cols, s, H, options.max_rows, options.threads);
    if (g == 0) best.plain_error = err;
    if (g == 0 || err < best.error || fixed) {
      best.error = err;
      best.alpha = alpha;
      best.scales = s;
    }
  }
  return best;
}

AwqClipResult awq_clip(std::span<float> w, std::size_t rows, std::size_t cols,
                       gguf::TensorType type, std::span<const double> H,
                       const AwqClipOptions& options) {
  constexpr std::size_t kBlock = 32;
  const TypeTraits* t = find_traits(type);
  if (t == nullptr || t->block_elems != kBlock || !can_quantize(type)) {
    throw Error("AWQ clipping: " + std::string(gguf::tensor_type_name(type)) +
                " is not a 32-value block type folio writes");
  }
  if (cols % kBlock != 0 || w.size() != rows * cols || H.size() != cols * cols ||
      options.grid < 1 || !(options.max_shrink >= 0.0 && options.max_shrink < 1.0)) {
    throw Error("AWQ clipping: " + std::to_string(w.size()) + " weights for " +
                std::to_string(rows) + " x " + std::to_string(cols) + " and a Hessian of " +
                std::to_string(H.size()));
  }
  const std::size_t nb = cols / kBlock;
  const int steps = static_cast<int>(options.max_shrink * options.grid + 1e-9);
  std::vector<AwqClipResult> per_row(rows);  // summed in row order: thread-count free
  parallel_rows(rows, options.threads, [&](std::size_t r0, std::size_t r1) {
    std::vector<float> cand(kBlock), q(kBlock);
    std::vector<std::uint8_t> bytes(quantized_bytes(type, kBlock));
    std::array<double, kBlock> e{};
    std::array<double, kBlock> he{};
    const auto block_error = [&](std::size_t b) {  // e^T H_bb e
      // he = H_bb e as axpys over H's rows (which vectorize); H is symmetric,
      // so each he_i sums H_ij e_j in j order, the same value as a dot with
      // row i.
      he.fill(0.0);
      for (std::size_t j = 0; j < kBlock; ++j) {
        const double* h = &H[(b * kBlock + j) * cols + b * kBlock];
        const double ej = e[j];
        for (std::size_t i = 0; i < kBlock; ++i) he[i] += h[i] * ej;
      }
      double sum = 0.0;
      for (std::size_t i = 0; i < kBlock; ++i) sum += e[i] * he[i];
      return sum;
    };
    for (std::size_t r = r0; r < r1; ++r) {
      AwqClipResult& res = per_row[r];
      for (std::size_t b = 0; b < nb; ++b) {
        float* g = &w[r * cols + b * kBlock];
        float max_abs = 0.0f;
        for (std::size_t i = 0; i < kBlock; ++i) max_abs = std::max(max_abs, std::fabs(g[i]));
        double best = 0.0;
        int best_step = 0;
        for (int k = 0; k <= steps; ++k) {
          const float lim =
              max_abs * static_cast<float>(1.0 - static_cast<double>(k) / options.grid);
          for (std::size_t i = 0; i < kBlock; ++i) cand[i] = std::clamp(g[i], -lim, lim);
          quantize_row(type, cand, {}, bytes);
          dequantize_row(type, bytes, q);
          for (std::size_t i = 0; i < kBlock; ++i) e[i] = static_cast<double>(g[i]) - q[i];
          const double err = block_error(b);
          if (k == 0) res.plain_error += err;
          if (k == 0 || err < best) {
            best = err;
            best_step = k;
          }
        }
        res.error += best;
        if (best_step != 0) {
          ++res.clipped;
          const float lim =
              max_abs * static_cast<float>(1.0 - static_cast<double>(best_step) / options.grid);
          for (std::size_t i = 0; i < kBlock; ++i) g[i] = std::clamp(g[i], -lim, lim);
        }
      }
    }
  });
  AwqClipResult out;
  for (const AwqClipResult& p : per_row) {
    out.error += p.error;
    out.plain_error += p.plain_error;
    out.clipped += p.clipped;
  }
  return out;
}

}  // namespace folio::quant
