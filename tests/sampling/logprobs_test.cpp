// Log-probabilities against a direct double-precision log_softmax.
#include "sampling/logprobs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace folio::sampling {
namespace {

TEST(Logprobs, MatchesLogSoftmaxAndTopN) {
  std::mt19937 rng(5);
  std::normal_distribution<float> d(0.0f, 4.0f);
  std::vector<float> l(49152);
  for (auto& v : l) v = d(rng);
  double z = 0;
  for (float v : l) z += std::exp(double(v));
  const double log_z = std::log(z);

  const auto r = compute_logprobs(l, 123, 5);
  EXPECT_EQ(r.chosen.id, 123);
  EXPECT_NEAR(r.chosen.logprob, double(l[123]) - log_z, 1e-4);
  std::vector<std::size_t> order(l.size());
  for (std::size_t i = 0; i < l.size(); ++i) order[i] = i;
  std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                    [&](std::size_t a, std::size_t b) { return l[a] > l[b]; });
  ASSERT_EQ(r.top.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(r.top[i].id, static_cast<TokenId>(order[i]));
    EXPECT_NEAR(r.top[i].logprob, double(l[order[i]]) - log_z, 1e-4);
  }
  double mass = 0;
  for (float v : l) mass += std::exp(double(v) - log_z);
  EXPECT_NEAR(mass, 1.0, 1e-9);
}

TEST(Logprobs, TiesByLowerIdAndZeroTop) {
  const std::vector<float> l = {1.0f, 1.0f, 1.0f, 1.0f};
  const auto r = compute_logprobs(l, 2, 2);
  ASSERT_EQ(r.top.size(), 2u);
  EXPECT_EQ(r.top[0].id, 0);
  EXPECT_EQ(r.top[1].id, 1);
  EXPECT_NEAR(r.chosen.logprob, std::log(0.25), 1e-6);
  EXPECT_TRUE(compute_logprobs(l, 0, 0).top.empty());
  EXPECT_EQ(compute_logprobs(l, 0, 20).top.size(), 4u);
}

}  // namespace
}  // namespace folio::sampling
