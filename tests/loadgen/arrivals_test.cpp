// Arrival schedules: gamma gaps with mean 1/R and CV 1/sqrt(B); inf -> zeros; seeded.
#include "loadgen/arrivals.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>

#include "base/error.h"

namespace folio::loadgen {
namespace {

struct Moments {
  double mean, cv;
};

Moments moments(const std::vector<double>& v) {
  const double n = static_cast<double>(v.size());
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return {mean, std::sqrt(ss / (n - 1)) / mean};
}

TEST(Arrivals, MeanGapIsOneOverRate) {
  for (double rate : {0.5, 4.0, 100.0}) {
    const auto gaps = inter_arrival_times(200000, {rate, 1.0, 7});
    // Standard error of the mean of 2e5 exponential gaps is 1/(R*sqrt(2e5)) ~ 0.22% of 1/R.
    EXPECT_NEAR(moments(gaps).mean * rate, 1.0, 0.01) << "rate " << rate;
  }
}

TEST(Arrivals, BurstinessSetsCoefficientOfVariationAsGammaPredicts) {
  // Gamma(shape B) has CV = 1/sqrt(B): B=1 is Poisson (CV 1), B<1 burstier, B>1 more regular.
  for (double b : {0.25, 1.0, 4.0, 16.0}) {
    const Moments m = moments(inter_arrival_times(200000, {2.0, b, 3}));
    EXPECT_NEAR(m.mean, 0.5, 0.5 * 0.02) << "burstiness " << b;
    EXPECT_NEAR(m.cv, 1.0 / std::sqrt(b), 0.03) << "burstiness " << b;
  }
}

TEST(Arrivals, InfiniteRateSendsEverythingAtOnce) {
  const double inf = std::numeric_limits<double>::infinity();
  for (double g : inter_arrival_times(50, {inf, 1.0, 0})) EXPECT_EQ(g, 0.0);
  for (double t : arrival_offsets(50, {inf, 0.5, 9})) EXPECT_EQ(t, 0.0);
}

TEST(Arrivals, DeterministicBySeed) {
  const auto a = inter_arrival_times(1000, {3.0, 0.7, 42});
  EXPECT_EQ(a, inter_arrival_times(1000, {3.0, 0.7, 42}));
  EXPECT_NE(a, inter_arrival_times(1000, {3.0, 0.7, 43}));
}

TEST(Arrivals, OffsetsAreRunningSumsStartingAtZero) {
  const ArrivalConfig c{5.0, 2.0, 11};
  const auto gaps = inter_arrival_times(10, c);
  const auto at = arrival_offsets(10, c);
  ASSERT_EQ(at.size(), 10u);
  EXPECT_EQ(at[0], 0.0);
  for (std::size_t i = 1; i < at.size(); ++i) EXPECT_DOUBLE_EQ(at[i], at[i - 1] + gaps[i - 1]);
}

TEST(Arrivals, RejectsBadValues) {
  EXPECT_THROW(inter_arrival_times(3, {0.0, 1.0, 0}), Error);
  EXPECT_THROW(inter_arrival_times(3, {-1.0, 1.0, 0}), Error);
  EXPECT_THROW(inter_arrival_times(3, {1.0, 0.0, 0}), Error);
  EXPECT_THROW(inter_arrival_times(3, {1.0, std::nan(""), 0}), Error);
  EXPECT_THROW(inter_arrival_times(3, {std::nan(""), 1.0, 0}), Error);
}

TEST(Arrivals, ParsesRequestRate) {
  EXPECT_TRUE(std::isinf(parse_request_rate("inf")));
  EXPECT_TRUE(std::isinf(parse_request_rate("INF")));
  EXPECT_DOUBLE_EQ(parse_request_rate("2.5"), 2.5);
  for (const char* bad : {"", "0", "-3", "fast", "2x", "nan"})
    EXPECT_THROW(parse_request_rate(bad), Error) << bad;
}

}  // namespace
}  // namespace folio::loadgen
