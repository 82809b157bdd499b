// RopeTable: the frequency table per scaling type, checked against the
// formulas written out independently here (the end-to-end check against HF is
// qwen2_test's YaRN model).
#include "model/rope_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.h"

namespace folio::model {
namespace {

ModelConfig config(const std::string& type, double factor) {
  ModelConfig c;
  c.name = "toy";
  c.arch = "llama";
  c.n_rot = 64;
  c.rope_freq_base = 10000.0;
  c.rope_scaling.type = type;
  c.rope_scaling.factor = factor;
  c.rope_scaling.original_context = 4096;
  return c;
}

double plain(std::size_t i) {
  return std::pow(10000.0, -static_cast<double>(2 * i) / 64.0);
}

TEST(RopeTable, NoneAndLinear) {
  const RopeTable none = rope_table(config("none", 1.0));
  ASSERT_EQ(none.inv_freq.size(), 32u);
  EXPECT_EQ(none.mscale, 1.0f);
  const RopeTable linear = rope_table(config("linear", 4.0));
  for (std::size_t i = 0; i < 32; ++i) {
    EXPECT_EQ(none.inv_freq[i], static_cast<float>(plain(i))) << i;
    EXPECT_EQ(linear.inv_freq[i], static_cast<float>(plain(i)) * 0.25f) << i;
  }
}

// With n_rot 64, base 1e4 and 4096 original positions, the pair turning 32
// times is dim 64 ln(4096 / 64 pi) / (2 ln 1e4) = 10.5 -> lo 10, and the pair
// turning once 64 ln(4096 / 2 pi) / (2 ln 1e4) = 22.5 -> hi 23: pairs below 10
// keep their frequency, pairs from 23 on are divided by the factor, and the
// ones between are blended linearly.
TEST(RopeTable, YarnBlendsBetweenTheCorrectionDims) {
  const RopeTable t = rope_table(config("yarn", 4.0));
  for (std::size_t i = 0; i < 32; ++i) {
    const double r = std::clamp((static_cast<double>(i) - 10.0) / 13.0, 0.0, 1.0);
    const double want = (1 - r) * plain(i) + r * plain(i) / 4.0;
    EXPECT_NEAR(t.inv_freq[i], want, 1e-6 * want) << i;  // f32 operations, a few ulp
  }
  EXPECT_EQ(t.inv_freq[0], 1.0f);
  EXPECT_NEAR(t.mscale, 1.0 + 0.1 * std::log(4.0), 1e-7);
}

TEST(RopeTable, UnsupportedScalingIsRefusedByName) {
  try {
    (void)rope_table(config("longrope", 4.0));
    FAIL() << "longrope accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'longrope' is not supported"), std::string::npos)
        << e.what();
  }
  ModelConfig c = config("yarn", 4.0);
  c.rope_scaling.original_context = 0;
  EXPECT_THROW((void)rope_table(c), Error);
}

}  // namespace
}  // namespace folio::model
