// tests/kernels/ops_test.cpp: vectorized element-wise ops (and their forced
// scalar fallbacks) against the *_ref oracles, over sizes that exercise every
// tail length and pointers misaligned by one float.
#include "kernels/ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu_features.h"

namespace folio::kernels {
namespace {

const std::size_t kSizes[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 576, 1537};

std::vector<float> randv(std::size_t n, std::mt19937& rng, float sd = 2.0f) {
  std::normal_distribution<float> nd(0.0f, sd);
  std::vector<float> v(n + 1);
  for (auto& x : v) x = nd(rng);
  return v;
}

// Runs `body(offset)` for offsets 0 and 1 (a misaligned start) and both ISAs.
template <class F>
void each_variant(F body) {
  for (Isa isa : {Isa::kAvx2, Isa::kScalar}) {
    IsaOverride force(isa);
    for (std::size_t off : {0, 1}) body(off, isa);
  }
}

TEST(Ops, RmsNorm) {
  std::mt19937 rng(1);
  for (std::size_t n : kSizes) {
    const auto x = randv(n, rng), w = randv(n, rng);
    each_variant([&](std::size_t off, Isa isa) {
      for (const float* wp : {w.data() + off, static_cast<const float*>(nullptr)}) {
        std::vector<float> ref(n), got(n);
        rmsnorm_ref(x.data() + off, wp, n, 1e-5f, ref.data());
        rmsnorm(x.data() + off, wp, n, 1e-5f, got.data());
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_NEAR(got[i], ref[i], 2e-6f * (1 + std::fabs(ref[i]))) << n << " " << isa_name(isa);
        }
      }
    });
  }
}

TEST(Ops, Rope) {
  std::mt19937 rng(2);
  for (bool neox : {false, true}) {
    for (std::size_t hd : {64, 128, 80}) {
      for (std::size_t rot : {hd, hd / 2, std::size_t{6}}) {
        for (std::size_t pos : {0, 1, 17, 4095, 100000}) {
          const auto x = randv(3 * hd, rng);
          each_variant([&](std::size_t off, Isa isa) {
            std::vector<float> ref(x.begin() + static_cast<long>(off),
                                   x.begin() + static_cast<long>(off + 3 * hd));
            std::vector<float> got = ref;
            rope_ref(ref.data(), 3, hd, rot, pos, 10000.0f, 1.0f, neox);
            rope(got.data(), 3, hd, rot, pos, 10000.0f, 1.0f, neox);
            for (std::size_t i = 0; i < ref.size(); ++i) {
              ASSERT_NEAR(got[i], ref[i], 2e-6f * (1 + std::fabs(ref[i])))
                  << "neox " << neox << " hd " << hd << " rot " << rot << " pos " << pos << " "
                  << isa_name(isa);
            }
          });
        }
      }
    }
  }
}

// Rotation by theta = pos * base^(-2i/d): check the angle formula itself on a
// unit vector (pair 0 has theta = pos, pair 1 theta = pos / base^(2/d)).
TEST(Ops, RopeAnglesFollowTheFormula) {
  std::vector<float> x = {1, 0, 1, 0};
  rope(x.data(), 1, 4, 4, 3, 100.0f, 1.0f, false);
  EXPECT_NEAR(x[0], std::cos(3.0), 1e-6);
  EXPECT_NEAR(x[1], std::sin(3.0), 1e-6);
  EXPECT_NEAR(x[2], std::cos(0.3), 1e-6);
  EXPECT_NEAR(x[3], std::sin(0.3), 1e-6);
  std::vector<float> y = {1, 1, 0, 0};  // neox pairs (0,2) and (1,3)
  rope(y.data(), 1, 4, 4, 3, 100.0f, 0.5f, true);
  EXPECT_NEAR(y[0], std::cos(1.5), 1e-6);
  EXPECT_NEAR(y[2], std::sin(1.5), 1e-6);
  EXPECT_NEAR(y[1], std::cos(0.15), 1e-6);
  EXPECT_NEAR(y[3], std::sin(0.15), 1e-6);
}

TEST(Ops, SwiGlu) {
  std::mt19937 rng(3);
  for (std::size_t n : kSizes) {
    auto g = randv(n, rng, 4.0f);
    g.at(0) = -100.0f;  // saturated exp
    g.at(n / 2) = 90.0f;
    const auto u = randv(n, rng);
    each_variant([&](std::size_t off, Isa isa) {
      std::vector<float> ref(n), got(n);
      swiglu_ref(g.data() + off, u.data() + off, n, ref.data());
      swiglu(g.data() + off, u.data() + off, n, got.data());
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_NEAR(got[i], ref[i], 2e-6f * (1 + std::fabs(ref[i]))) << n << " " << isa_name(isa);
      }
    });
  }
}

// GeGLU with PyTorch's tanh-approximated GELU: against the f64 formula, over
// a range that reaches both tails (Gemma's gate pre-activations reach +-20).
TEST(Ops, Geglu) {
  std::mt19937 rng(14);
  for (std::size_t n : kSizes) {
    const auto g = randv(n, rng, 12.0f);
    const auto u = randv(n, rng);
    each_variant([&](std::size_t off, Isa isa) {
      std::vector<float> ref(n), got(n);
      geglu_ref(g.data() + off, u.data() + off, n, ref.data());
      geglu(g.data() + off, u.data() + off, n, got.data());
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_NEAR(got[i], ref[i], 4e-6f * (1 + std::fabs(ref[i]))) << n << " " << isa_name(isa);
      }
    });
  }
  // Known values: gelu_tanh(1) = 0.841192, gelu_tanh(-3) = -0.003637.
  const float gate[2] = {1.0f, -3.0f}, up[2] = {1.0f, 2.0f};
  float out[2];
  geglu_ref(gate, up, 2, out);
  EXPECT_NEAR(out[0], 0.841192f, 1e-6f);
  EXPECT_NEAR(out[1], 2 * -0.00363739f, 1e-7f);
}

TEST(Ops, Softcap) {
  std::vector<float> x = {0.0f, 1.0f, -30.0f, 1000.0f, -1e30f};
  softcap(x.data(), x.size(), 30.0f);
  EXPECT_EQ(x[0], 0.0f);
  EXPECT_NEAR(x[1], 30.0 * std::tanh(1.0 / 30.0), 1e-6);
  EXPECT_NEAR(x[2], 30.0 * std::tanh(-1.0), 1e-5);
  EXPECT_FLOAT_EQ(x[3], 30.0f);
  EXPECT_FLOAT_EQ(x[4], -30.0f);
}

TEST(Ops, Softmax) {
  std::mt19937 rng(4);
  for (std::size_t n : kSizes) {
    auto x = randv(n, rng, 5.0f);
    x.at(n / 3) = -1e30f;  // effectively masked
    each_variant([&](std::size_t off, Isa isa) {
      std::vector<float> ref(x.begin() + static_cast<long>(off),
                             x.begin() + static_cast<long>(off + n));
      std::vector<float> got = ref;
      softmax_ref(ref.data(), n);
      softmax(got.data(), n);
      double sum = 0;
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_NEAR(got[i], ref[i], 1e-6f * (1 + ref[i] * 4)) << n << " " << isa_name(isa);
        sum += got[i];
      }
      EXPECT_NEAR(sum, 1.0, 1e-5);
    });
  }
}

TEST(Ops, Add) {
  std::mt19937 rng(5);
  for (std::size_t n : kSizes) {
    const auto x = randv(n, rng), y0 = randv(n, rng);
    each_variant([&](std::size_t off, Isa) {
      std::vector<float> ref(y0.begin() + static_cast<long>(off),
                             y0.begin() + static_cast<long>(off + n));
      std::vector<float> got = ref;
      add_ref(ref.data(), x.data() + off, n);
      add(got.data(), x.data() + off, n);
      EXPECT_EQ(ref, got);
    });
  }
}

}  // namespace
}  // namespace folio::kernels
