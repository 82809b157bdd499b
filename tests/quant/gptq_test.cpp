// GPTQ and the element codes it writes through, without a model: codes read
// back and rewritten leave a block unchanged and decode as the dequantizer
// does; on correlated inputs GPTQ's ||WX - QX||^2 is well below
// round-to-nearest's (with and without act-order), its reported error is the
// error of the bytes it returns, dead columns and thread counts (which change
// how rows are grouped into blocks) are handled; output_errors over several
// rows equals e^T H e summed directly.
#include "quant/gptq.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <span>
#include <vector>

#include "base/error.h"
#include "quant/block_codes.h"
#include "quant/dequantize.h"
#include "quant/quantize.h"
#include "quant/traits.h"

namespace folio::quant {
namespace {

using gguf::TensorType;

constexpr TensorType kTypes[] = {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0,
                                 TensorType::Q5_1, TensorType::Q8_0, TensorType::Q4_K,
                                 TensorType::Q5_K, TensorType::Q6_K};

std::vector<float> gaussian(std::size_t n, std::uint32_t seed, float sd) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sd);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TEST(BlockCodes, ReadRewriteAndDecodeAgreeWithTheFormat) {
  for (TensorType t : kTypes) {
    const std::size_t B = traits(t).block_elems;
    const auto x = gaussian(B, 5, 0.1f);
    std::vector<std::uint8_t> block(traits(t).block_bytes);
    quantize_row(t, x, {}, block);
    std::vector<int> codes(B);
    block_codes(t, block, codes);
    std::vector<ElementGrid> grids(B);
    block_grids(t, block, grids);
    std::vector<float> y(B);
    dequantize_row(t, block, y);
    for (std::size_t i = 0; i < B; ++i) {
      EXPECT_GE(codes[i], grids[i].lo) << gguf::tensor_type_name(t);
      EXPECT_LE(codes[i], grids[i].hi) << gguf::tensor_type_name(t);
      EXPECT_NEAR(grids[i].value(codes[i]), y[i], 1e-6f * (1 + std::fabs(y[i])))
          << gguf::tensor_type_name(t) << " element " << i;
    }
    std::vector<std::uint8_t> copy = block;
    set_block_codes(t, copy, codes);
    EXPECT_EQ(copy, block) << gguf::tensor_type_name(t);
    // Every code lands where it should: write i % range, read it back.
    for (std::size_t i = 0; i < B; ++i) {
      codes[i] = grids[i].lo +
                 static_cast<int>(i * 7 % static_cast<std::size_t>(grids[i].hi - grids[i].lo + 1));
    }
    set_block_codes(t, copy, codes);
    std::vector<int> back(B);
    block_codes(t, copy, back);
    EXPECT_EQ(back, codes) << gguf::tensor_type_name(t);
  }
}

// Inputs with strongly correlated columns (a few latent factors), as
// activations are: X = Z A + noise; H = X^T X / n.
std::vector<double> correlated_hessian(std::size_t cols, std::uint32_t seed) {
  const std::size_t n = 4 * cols, factors = 8;
  const auto z = gaussian(n * factors, seed, 1.0f);
  const auto a = gaussian(factors * cols, seed + 1, 1.0f);
  const auto noise = gaussian(n * cols, seed + 2, 0.3f);
  std::vector<double> X(n * cols);
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t j = 0; j < cols; ++j) {
      double v = noise[r * cols + j];
      for (std::size_t f = 0; f < factors; ++f) v += z[r * factors + f] * a[f * cols + j];
      X[r * cols + j] = v * (1.0 + static_cast<double>(j % 7));  // uneven column scales
    }
  }
  std::vector<double> H(cols * cols, 0.0);
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < cols; ++i) {
      for (std::size_t j = 0; j < cols; ++j) H[i * cols + j] += X[r * cols + i] * X[r * cols + j];
    }
  }
  for (double& h : H) h /= static_cast<double>(n);
  return H;
}

TEST(Gptq, BeatsRoundToNearestOnCorrelatedInputs) {
  const std::size_t rows = 24, cols = 256;
  const auto W = gaussian(rows * cols, 11, 0.05f);
  const auto H = correlated_hessian(cols, 21);
  for (TensorType t : kTypes) {
    for (bool act_order : {false, true}) {
      GptqOptions o;
      o.act_order = act_order;
      o.threads = 2;
      const GptqResult r = gptq_quantize(t, W, rows, cols, H, o);
      EXPECT_LT(r.error, 0.8 * r.rtn_error)
          << gguf::tensor_type_name(t) << (act_order ? " act-order" : "");
      const double check = reconstruction_error(t, r.bytes, W, rows, cols, H);
      EXPECT_NEAR(check, r.error, 1e-9 * (1 + check)) << gguf::tensor_type_name(t);
    }
  }
}

TEST(Gptq, OutputErrorsMatchTheDirectSum) {
  const std::size_t n = 96, k = 5;
  const auto H = correlated_hessian(n, 31);
  const auto ef = gaussian(k * n, 32, 0.01f);
  std::vector<double> E(ef.begin(), ef.end());
  for (std::size_t c = 0; c < n; c += 7) E[2 * n + c] = 0.0;  // skipped zeros
  std::vector<double> out(k), y;
  output_errors(E, k, H, out, y);
  for (std::size_t r = 0; r < k; ++r) {
    double direct = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) direct += E[r * n + i] * H[i * n + j] * E[r * n + j];
    }
    EXPECT_NEAR(out[r], direct, 1e-12 * std::abs(direct)) << r;
    EXPECT_GT(out[r], 0.0);
    EXPECT_EQ(out[r], output_error(std::span(E).subspan(r * n, n), H, y)) << r;  // same value alone
  }
}

TEST(Gptq, ThreadCountDoesNotChangeTheBytes) {
  const std::size_t rows = 9, cols = 256;
  const auto W = gaussian(rows * cols, 3, 0.05f);
  const auto H = correlated_hessian(cols, 4);
  GptqOptions one, three;
  three.threads = 3;
  EXPECT_EQ(gptq_quantize(TensorType::Q4_K, W, rows, cols, H, one).bytes,
            gptq_quantize(TensorType::Q4_K, W, rows, cols, H, three).bytes);
}

TEST(Gptq, DeadColumnsAndBadInputs) {
  const std::size_t rows = 4, cols = 64;
  const auto W = gaussian(rows * cols, 8, 0.05f);
  auto H = correlated_hessian(cols, 9);
  for (std::size_t j = 0; j < cols; ++j) {  // column 5 never activated
    H[5 * cols + j] = 0.0;
    H[j * cols + 5] = 0.0;
  }
  const GptqResult r = gptq_quantize(TensorType::Q4_0, W, rows, cols, H, {});
  std::vector<float> y(rows * cols);
  dequantize_row(TensorType::Q4_0, r.bytes, y);
  for (std::size_t i = 0; i < rows; ++i) EXPECT_NEAR(y[i * cols + 5], 0.0f, 0.02f);
  EXPECT_LE(r.error, r.rtn_error);
  EXPECT_THROW(gptq_quantize(TensorType::Q4_0, W, rows, cols + 1, H, {}), Error);
  EXPECT_THROW(gptq_quantize(TensorType::F16, W, rows, cols, H, {}), Error);
}

}  // namespace
}  // namespace folio::quant
