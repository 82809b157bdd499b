// The quantizers without a model: error bounds of every writable type on
// random rows, edge cases (zeros, constants, one outlier), what the
// importance-weighted search buys, size/type errors. Bit-exactness against
// gguf-py's quantizers is tests/python/test_quantize.py; against
// llama-quantize, bench/quantize.sh.
#include "quant/quantize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "gguf/tensor_type.h"
#include "quant/dequantize.h"
#include "quant/scale_search.h"
#include "quant/traits.h"

namespace folio::quant {
namespace {

using gguf::TensorType;

constexpr TensorType kQuantTypes[] = {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0,
                                      TensorType::Q5_1, TensorType::Q8_0, TensorType::Q4_K,
                                      TensorType::Q5_K, TensorType::Q6_K};

std::vector<float> random_row(std::size_t n, std::uint32_t seed, float scale = 0.05f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

std::vector<float> round_trip(TensorType t, const std::vector<float>& x,
                              const std::vector<float>& importance = {}) {
  std::vector<std::uint8_t> q(quantized_bytes(t, x.size()));
  quantize_row(t, x, importance, q);
  std::vector<float> y(x.size());
  dequantize_row(t, q, y);
  return y;
}

double weighted_sq_error(const std::vector<float>& x, const std::vector<float>& y,
                         const std::vector<float>& w) {
  double e = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double d = static_cast<double>(x[i]) - y[i];
    e += (w.empty() ? 1.0 : w[i]) * d * d;
  }
  return e;
}

double rms(const std::vector<float>& x) {
  return std::sqrt(weighted_sq_error(x, std::vector<float>(x.size(), 0.0f), {}) /
                   static_cast<double>(x.size()));
}

// The relative RMS error each type must reach on Gaussian rows (about 1.5x
// what these formats give: 4 bits ~ 0.10, 5 bits ~ 0.05, 6 ~ 0.025, 8 ~ 0.006).
double error_bound(TensorType t) {
  switch (t) {
    case TensorType::Q4_0:
      return 0.16;
    case TensorType::Q4_1:
      return 0.14;
    case TensorType::Q4_K:
      return 0.12;
    case TensorType::Q5_0:
      return 0.08;
    case TensorType::Q5_1:
      return 0.07;
    case TensorType::Q5_K:
      return 0.06;
    case TensorType::Q6_K:
      return 0.035;
    case TensorType::Q8_0:
      return 0.008;
    default:
      return 0;
  }
}

TEST(Quantize, WritableTypesAreThoseInTheTraits) {
  for (TensorType t : kQuantTypes) EXPECT_TRUE(can_quantize(t)) << gguf::tensor_type_name(t);
  for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::BF16})
    EXPECT_TRUE(can_quantize(t));
  for (TensorType t : {TensorType::Q2_K, TensorType::Q3_K, TensorType::Q8_K}) {
    EXPECT_FALSE(can_quantize(t)) << gguf::tensor_type_name(t);
  }
}

TEST(Quantize, RandomRowsMeetTheErrorBoundOfEachType) {
  for (TensorType t : kQuantTypes) {
    for (std::uint32_t seed = 1; seed <= 4; ++seed) {
      const auto x = random_row(1024, seed, 0.02f * static_cast<float>(seed));
      const auto y = round_trip(t, x);
      const double rel = std::sqrt(weighted_sq_error(x, y, {}) / x.size()) / rms(x);
      EXPECT_LT(rel, error_bound(t)) << gguf::tensor_type_name(t) << " seed " << seed;
      EXPECT_GT(rel, 0.0) << gguf::tensor_type_name(t);
    }
  }
}

TEST(Quantize, EveryElementOfALegacyBlockIsWithinHalfAStep) {
  // Round to nearest: |x - y| <= |d|/2 (+ fp16 rounding of d) for elements
  // inside the grid d * [-levels, levels - 1] (d = max / -levels); the _0
  // grids stop one step short on the far side of max, where x is clipped.
  const auto x = random_row(32 * 64, 7);
  for (TensorType t : {TensorType::Q4_0, TensorType::Q5_0, TensorType::Q8_0}) {
    const auto y = round_trip(t, x);
    const float levels = t == TensorType::Q4_0 ? 8.0f : t == TensorType::Q5_0 ? 16.0f : 127.0f;
    const float top = t == TensorType::Q8_0 ? levels : levels - 1.0f;
    for (std::size_t b = 0; b < x.size() / 32; ++b) {
      float amax = 0, max = 0;
      for (std::size_t j = 0; j < 32; ++j) {
        if (std::fabs(x[32 * b + j]) > amax) {
          amax = std::fabs(x[32 * b + j]);
          max = x[32 * b + j];
        }
      }
      const float d = t == TensorType::Q8_0 ? amax / levels : max / -levels;
      for (std::size_t j = 0; j < 32; ++j) {
        const float q = x[32 * b + j] / d;
        const float err = std::fabs(x[32 * b + j] - y[32 * b + j]);
        // fp16 rounding of d moves code q by up to |q| * 2^-11 steps.
        const float tol = std::fabs(d) * 0.5f + std::fabs(x[32 * b + j]) / 1024.0f + 1e-7f;
        if (q <= top + 0.5f) {
          EXPECT_LE(err, tol) << gguf::tensor_type_name(t) << " block " << b << " elem " << j;
        } else {  // clipped to the top code
          EXPECT_NEAR(y[32 * b + j], top * d, tol) << gguf::tensor_type_name(t) << " block " << b;
        }
      }
    }
  }
}

TEST(Quantize, ZerosAndConstantsSurvive) {
  for (TensorType t : kQuantTypes) {
    const std::vector<float> zeros(512, 0.0f);
    EXPECT_EQ(round_trip(t, zeros), zeros) << gguf::tensor_type_name(t);
    const std::vector<float> ones(512, 0.25f);  // exactly representable everywhere
    const auto y = round_trip(t, ones);
    for (float v : y) EXPECT_NEAR(v, 0.25f, 0.25f * 0.01f) << gguf::tensor_type_name(t);
  }
}

TEST(Quantize, AnOutlierKeepsItsValue) {
  // The _0 and K types put the largest magnitude on the grid's end.
  for (TensorType t : kQuantTypes) {
    auto x = random_row(256, 3, 0.01f);
    x[77] = -1.0f;
    const auto y = round_trip(t, x);
    EXPECT_NEAR(y[77], -1.0f, 0.02f) << gguf::tensor_type_name(t);
  }
}

TEST(Quantize, ImportanceLowersTheWeightedError) {
  // Columns with large importance should come out closer, on average, than
  // round-to-nearest puts them: the weighted search minimizes exactly that.
  for (TensorType t : {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1,
                       TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K}) {
    double plain = 0;
    double weighted = 0;
    for (std::uint32_t seed = 1; seed <= 8; ++seed) {
      const auto x = random_row(2048, seed);
      std::mt19937 rng(seed + 100);
      std::exponential_distribution<float> imp_dist(1.0f);
      std::vector<float> imp(x.size());
      for (float& v : imp) v = imp_dist(rng) * imp_dist(rng);  // heavy-tailed, like activations
      plain += weighted_sq_error(x, round_trip(t, x), imp);
      weighted += weighted_sq_error(x, round_trip(t, x, imp), imp);
    }
    EXPECT_LT(weighted, 0.9 * plain) << gguf::tensor_type_name(t);
  }
}

TEST(Quantize, ResultsDoNotDependOnTheRowSplit) {
  // A row quantized alone equals the same row inside a longer call (no state).
  const auto x = random_row(256 * 4, 11);
  for (TensorType t : kQuantTypes) {
    std::vector<std::uint8_t> all(quantized_bytes(t, x.size()));
    quantize_row(t, x, {}, all);
    const std::size_t half = quantized_bytes(t, x.size() / 2);
    std::vector<std::uint8_t> second(half);
    quantize_row(t, std::span(x).subspan(x.size() / 2), {}, second);
    EXPECT_TRUE(std::equal(second.begin(), second.end(), all.begin() + static_cast<long>(half)))
        << gguf::tensor_type_name(t);
  }
}

TEST(Quantize, BadSizesAndTypesAreErrorsNamingThem) {
  const std::vector<float> x(48, 1.0f);
  std::vector<std::uint8_t> q(100);
  EXPECT_THROW(quantize_row(TensorType::Q4_0, x, {}, q), Error);  // 48 is not whole blocks
  const std::vector<float> y(64, 1.0f);
  try {
    quantize_row(TensorType::Q4_0, y, {}, q);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Q4_0"), std::string::npos) << e.what();
  }
  std::vector<std::uint8_t> right(quantized_bytes(TensorType::Q4_0, 64));
  const std::vector<float> imp(10, 1.0f);
  EXPECT_THROW(quantize_row(TensorType::Q4_0, y, imp, right), Error);
  std::vector<std::uint8_t> q3(quantized_bytes(TensorType::Q3_K, 256));
  const std::vector<float> z(256, 1.0f);
  try {
    quantize_row(TensorType::Q3_K, z, {}, q3);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write Q3_K"), std::string::npos) << e.what();
  }
}

TEST(ScaleSearch, NearestIntRoundsHalfToEven) {
  EXPECT_EQ(nearest_int(0.5f), 0);
  EXPECT_EQ(nearest_int(1.5f), 2);
  EXPECT_EQ(nearest_int(2.5f), 2);
  EXPECT_EQ(nearest_int(-0.5f), 0);
  EXPECT_EQ(nearest_int(-1.5f), -2);
  EXPECT_EQ(nearest_int(3.49f), 3);
}

TEST(ScaleSearch, TheSymmetricFitIsNoWorseThanItsFirstCandidate) {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    const auto x = random_row(32, seed);
    std::vector<std::int8_t> L(32);
    const float d = fit_symmetric(x, 8, {}, L);
    float amax = 0, max = 0;
    for (float v : x) {
      if (std::fabs(v) > amax) {
        amax = std::fabs(v);
        max = v;
      }
    }
    const float d0 = max / -8.0f;
    double e_fit = 0, e_rtn = 0;
    for (std::size_t i = 0; i < 32; ++i) {
      const double w = static_cast<double>(x[i]) * x[i];
      const int l0 = std::clamp(nearest_int(x[i] / d0), -8, 7);
      e_fit += w * std::pow(x[i] - d * (L[i] - 8), 2);
      e_rtn += w * std::pow(x[i] - d0 * l0, 2);
    }
    EXPECT_LE(e_fit, e_rtn * (1 + 1e-5)) << "seed " << seed;
  }
}

TEST(ScaleSearch, TheCodeFitRecoversExactMultiples) {
  // Values that are exact multiples of a step come back as those multiples.
  const std::vector<float> x = {0.0f, 0.1f, 0.5f, 6.3f, 3.0f, 1.2f, 0.7f, 6.2f};
  std::vector<std::uint8_t> L(x.size());
  const std::vector<float> w(x.size(), 1.0f);
  const float step = fit_codes(x, 63, w, L);
  EXPECT_NEAR(step, 0.1f, 1e-6f);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(L[i] * step, x[i], 1e-5f) << i;
}

}  // namespace
}  // namespace folio::quant
