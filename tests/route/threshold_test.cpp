// calibrate_threshold: exact thresholds on small samples, the edge shares,
// ties, errors, and the property: over random samples of 50 .. 5000
// scores the achieved large share is within 2 percentage points of the
// target (and always the nearest achievable share, with ties).
#include "route/threshold.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "base/error.h"
#include "route/score.h"

namespace folio::route {
namespace {

TEST(Threshold, ExactCutsAtMidpoints) {
  const std::vector<double> s = {0.4, 0.1, 0.3, 0.2};
  EXPECT_DOUBLE_EQ(calibrate_threshold(s, 0.5), 0.25);
  EXPECT_DOUBLE_EQ(calibrate_threshold(s, 0.25), 0.35);
  EXPECT_DOUBLE_EQ(calibrate_threshold(s, 0.75), 0.15);
  EXPECT_DOUBLE_EQ(calibrate_threshold(s, 0.3), 0.35);  // 0.25 is nearer than 0.5
  EXPECT_DOUBLE_EQ(share_at_or_above(s, calibrate_threshold(s, 0.5)), 0.5);
}

TEST(Threshold, ShareOneIsTheMinimum) {
  const std::vector<double> s = {0.7, 0.2, 0.9, 0.2};
  EXPECT_EQ(calibrate_threshold(s, 1.0), 0.2);
  EXPECT_EQ(share_at_or_above(s, 0.2), 1.0);
}

TEST(Threshold, ShareZeroIsAboveTheMaximumAndAboveAnyScore) {
  const std::vector<double> s = {0.7, 0.2, 0.9};
  const double t = calibrate_threshold(s, 0.0);
  EXPECT_GT(t, 1.0);
  EXPECT_GE(t, kAboveAnyScore);
  EXPECT_EQ(share_at_or_above(s, t), 0.0);
  // Scores above 1 (not route_score's) still get a threshold above them.
  EXPECT_GT(calibrate_threshold({3.0, 5.0}, 0.0), 5.0);
  EXPECT_EQ(calibrate_threshold({1.0}, 0.0), kAboveAnyScore);
}

TEST(Threshold, HeavyTiesTakeTheNearestAchievableShare) {
  const std::vector<double> all_same(10, 0.5);
  EXPECT_GT(calibrate_threshold(all_same, 0.3), 0.5);  // 0 is nearer than 1
  EXPECT_EQ(calibrate_threshold(all_same, 0.6), 0.5);  // 1 is nearer than 0
  // Shares 0, 0.5, 1 achievable; 0.25 is equally far from 0 and 0.5: the
  // smaller (fewer requests to the large model) wins.
  const std::vector<double> two = {0.2, 0.8};
  EXPECT_EQ(share_at_or_above(two, calibrate_threshold(two, 0.25)), 0.0);
  EXPECT_EQ(share_at_or_above(two, calibrate_threshold(two, 0.26)), 0.5);
  // 8 of 10 tie at 0.3: shares 0, 0.1, 0.2 and 1 only.
  const std::vector<double> s = {0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.6, 0.9};
  EXPECT_EQ(share_at_or_above(s, calibrate_threshold(s, 0.5)), 0.2);
  EXPECT_EQ(share_at_or_above(s, calibrate_threshold(s, 0.65)), 1.0);
}

TEST(Threshold, AdjacentDoublesStillCutBetween) {
  const double lo = 0.5;
  const double hi = std::nextafter(lo, 1.0);
  const std::vector<double> s = {lo, hi};
  EXPECT_EQ(share_at_or_above(s, calibrate_threshold(s, 0.5)), 0.5);
}

TEST(Threshold, Errors) {
  EXPECT_THROW(calibrate_threshold({}, 0.5), Error);
  EXPECT_THROW(calibrate_threshold({0.1}, -0.01), Error);
  EXPECT_THROW(calibrate_threshold({0.1}, 1.01), Error);
  EXPECT_THROW(calibrate_threshold({0.1}, std::nan("")), Error);
  EXPECT_THROW(calibrate_threshold({0.1, std::nan("")}, 0.5), Error);
  EXPECT_THROW(calibrate_threshold({0.1, HUGE_VAL}, 0.5), Error);
  EXPECT_EQ(share_at_or_above(std::vector<double>{}, 0.5), 0.0);
}

// The nearest share any threshold achieves on `s` (brute force over every cut).
double best_achievable_error(const std::vector<double>& s, double target) {
  double best = target;  // nothing large
  for (double v : s) best = std::min(best, std::abs(share_at_or_above(s, v) - target));
  return best;
}

// The largest fraction of the sample that shares one value.
double largest_tie_share(const std::vector<double>& s) {
  std::map<double, int> count;
  int most = 0;
  for (double v : s) most = std::max(most, ++count[v]);
  return static_cast<double>(most) / static_cast<double>(s.size());
}

struct Sampler {
  const char* name;
  double (*draw)(std::mt19937_64&);
};

TEST(Threshold, RandomSamplesHitTheTargetWithinTwoPoints) {
  const Sampler samplers[] = {
      {"uniform", [](std::mt19937_64& r) { return std::uniform_real_distribution<>(0, 1)(r); }},
      {"skewed",
       [](std::mt19937_64& r) { return std::pow(std::uniform_real_distribution<>(0, 1)(r), 4); }},
      {"grid of 200",  // ties: about n / 200 per value
       [](std::mt19937_64& r) { return std::uniform_int_distribution<>(0, 199)(r) / 200.0; }},
      {"grid of 8",  // heavy ties: about n / 8 per value
       [](std::mt19937_64& r) { return std::uniform_int_distribution<>(0, 7)(r) / 8.0; }},
  };
  std::mt19937_64 rng(2024);
  int checked_within_two_points = 0;
  for (const Sampler& sampler : samplers) {
    for (std::size_t n : {50, 137, 500, 1000, 5000}) {
      std::vector<double> s(n);
      for (double& x : s) x = sampler.draw(rng);
      for (double target : {0.0, 0.1, 0.25, 0.5, 0.9, 1.0}) {
        const double t = calibrate_threshold(s, target);
        const double error = std::abs(share_at_or_above(s, t) - target);
        // Always the nearest achievable share ...
        ASSERT_NEAR(error, best_achievable_error(s, target), 1e-12)
            << sampler.name << " n=" << n << " target=" << target;
        // ... which is within 2 points whenever no tie block is wider than 4%
        // of the sample (then consecutive shares are at most 4 points apart).
        if (largest_tie_share(s) <= 0.04) {
          ASSERT_LE(error, 0.02) << sampler.name << " n=" << n << " target=" << target;
          ++checked_within_two_points;
        }
      }
    }
  }
  // uniform, skewed: every size; grid of 200: n >= 500 (also 137 most likely).
  EXPECT_GE(checked_within_two_points, 2 * 5 * 6 + 3 * 6);
}

}  // namespace
}  // namespace folio::route
