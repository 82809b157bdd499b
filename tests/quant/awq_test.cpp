// The AWQ scale search without a model: alpha = 0 is plain rounding, the
// chosen scales never measure worse than it, activation-heavy channels get
// larger scales, a fixed alpha is honoured, bad inputs are errors.
#include "quant/awq.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "base/error.h"

namespace folio::quant {
namespace {

using gguf::TensorType;

TEST(Awq, SearchNeverWorseThanPlainAndFavoursBusyChannels) {
  const std::size_t cols = 64, rows = 32;
  std::mt19937 rng(7);
  std::normal_distribution<float> d(0.0f, 0.05f);
  std::vector<float> w(rows * cols);
  for (float& v : w) v = d(rng);
  // Channel j's activations: a few channels carry 30x more than the rest.
  std::vector<float> mean_abs(cols, 0.1f);
  for (std::size_t j = 0; j < cols; j += 16) mean_abs[j] = 3.0f;
  std::vector<double> H(cols * cols, 0.0);
  for (std::size_t j = 0; j < cols; ++j) H[j * cols + j] = mean_abs[j] * mean_abs[j];
  const std::vector<AwqLinear> ls = {{w, rows, TensorType::Q4_0}};
  AwqOptions o;
  o.max_rows = 0;
  const AwqScales s = awq_search(ls, cols, mean_abs, H, o);
  EXPECT_LE(s.error, s.plain_error);
  EXPECT_LT(s.error, 0.9 * s.plain_error);  // busy channels dominate: scaling them pays
  EXPECT_GT(s.alpha, 0.0);
  EXPECT_GT(s.scales[0], s.scales[1]);
  // sqrt(max * min) = 1
  float lo = 1e30f, hi = 0;
  for (float v : s.scales) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_NEAR(std::sqrt(lo * hi), 1.0f, 1e-4f);

  o.fixed_alpha = 0.0;
  const AwqScales plain = awq_search(ls, cols, mean_abs, H, o);
  EXPECT_EQ(plain.alpha, 0.0);
  for (float v : plain.scales) EXPECT_EQ(v, 1.0f);
  EXPECT_DOUBLE_EQ(plain.error, s.plain_error);
  o.fixed_alpha = 0.5;
  EXPECT_EQ(awq_search(ls, cols, mean_abs, H, o).alpha, 0.5);
}

TEST(Awq, BadInputsAreErrors) {
  const std::vector<float> w(64, 0.1f);
  const std::vector<float> mean_abs(32, 1.0f);
  const std::vector<double> H(32 * 32, 0.0);
  const std::vector<AwqLinear> ls = {{w, 2, TensorType::Q4_0}};
  EXPECT_THROW(awq_search(ls, 64, mean_abs, H, {}), Error);
  const std::vector<AwqLinear> bad = {{w, 3, TensorType::Q4_0}};
  EXPECT_THROW(awq_search(bad, 32, mean_abs, H, {}), Error);
  AwqOptions o;
  o.fixed_alpha = 1.5;
  EXPECT_THROW(awq_search(ls, 32, mean_abs, H, o), Error);
}

}  // namespace
}  // namespace folio::quant

namespace folio::quant {
namespace {

// The clipping search: r = 1 is tried, so no block measures worse than
// plain rounding; a block whose one outlier sets a coarse grid for 31 small
// weights gets clipped when the outlier's channel barely matters (small H
// entry); 32-value types only; the clipped weights are within the original range.
TEST(AwqClip, NeverWorseThanPlainAndClipsUnimportantOutliers) {
  const std::size_t cols = 64, rows = 8;
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0.0f, 0.02f);
  std::vector<float> w(rows * cols);
  for (float& v : w) v = d(rng);
  for (std::size_t r = 0; r < rows; ++r) w[r * cols + 5] = 0.5f;  // an outlier in block 0
  std::vector<double> H(cols * cols, 0.0);
  for (std::size_t j = 0; j < cols; ++j) H[j * cols + j] = j == 5 ? 1e-4 : 1.0;
  const std::vector<float> before = w;
  for (const TensorType t :
       {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q8_0}) {
    w = before;
    const AwqClipResult r = awq_clip(w, rows, cols, t, H, {});
    EXPECT_LE(r.error, r.plain_error) << gguf::tensor_type_name(t);
    for (std::size_t i = 0; i < w.size(); ++i) {
      EXPECT_LE(std::fabs(w[i]), std::fabs(before[i])) << i;
      EXPECT_EQ(std::signbit(w[i]), std::signbit(before[i])) << i;
    }
    if (t == TensorType::Q4_0) {
      EXPECT_GE(r.clipped, rows);  // every row's block 0
      EXPECT_LT(w[5], 0.5f);
      EXPECT_LT(r.error, 0.5 * r.plain_error);
    }
  }
  // When the outlier's channel dominates H, clipping it costs more than it saves.
  for (std::size_t j = 0; j < cols; ++j) H[j * cols + j] = j == 5 ? 1e4 : 1.0;
  w = before;
  awq_clip(w, rows, cols, TensorType::Q4_0, H, {});
  for (std::size_t r = 0; r < rows; ++r) EXPECT_EQ(w[r * cols + 5], 0.5f);
}

TEST(AwqClip, RefusesOtherTypesAndShapes) {
  std::vector<float> w(256, 0.1f);
  const std::vector<double> H(256 * 256, 0.0);
  EXPECT_THROW(awq_clip(w, 1, 256, TensorType::Q4_K, H, {}), Error);
  EXPECT_THROW(awq_clip(w, 2, 100, TensorType::Q4_0, H, {}), Error);
  AwqClipOptions o;
  o.max_shrink = 1.0;
  EXPECT_THROW(awq_clip(w, 1, 256, TensorType::Q4_0, H, o), Error);
}

}  // namespace
}  // namespace folio::quant
