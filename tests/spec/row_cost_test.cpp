// spec::RowCostEstimate: the prior until one-row and several-row steps are
// both seen, then the measured cost per row (steps of synthetic seconds,
// no model and no clock).
#include "spec/row_cost.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace folio::spec {
namespace {

// A machine on which a step of r rows takes base * (1 + per_row * (r - 1)).
void feed(RowCostEstimate& e, int rows, double per_row, int times, double base = 0.005) {
  for (int i = 0; i < times; ++i) e.observe(rows, base * (1 + per_row * (rows - 1)));
}

TEST(RowCost, ThePriorUntilBothKindsOfStepAreSeen) {
  RowCostEstimate e;
  EXPECT_FALSE(e.measured());
  EXPECT_DOUBLE_EQ(e.value(), kDefaultRowCost);
  feed(e, 5, 0.1, 20);  // several-row steps only
  EXPECT_FALSE(e.measured());
  EXPECT_DOUBLE_EQ(e.value(), kDefaultRowCost);
  feed(e, 1, 0.1, RowCostEstimate::kMinOneRowSteps - 1);
  EXPECT_DOUBLE_EQ(e.value(), kDefaultRowCost);
  feed(e, 1, 0.1, 1);
  EXPECT_TRUE(e.measured());
  // 20 steps of 4 extra rows (weight 20 x 4^2) at 0.1 against the prior's
  // kPriorWeight at 0.3.
  const double w = RowCostEstimate::kPriorWeight;
  EXPECT_NEAR(e.value(), (w * kDefaultRowCost + 320 * 0.1) / (w + 320), 1e-9);
  // One two-row step (weight 1) at 0.5 moves it little.
  e.observe(2, 0.005 * 1.5);
  EXPECT_NEAR(e.value(), (w * kDefaultRowCost + 320 * 0.1 + 0.5) / (w + 321), 1e-9);
}

TEST(RowCost, ConvergesToTheMachinesCostAndFollowsAChange) {
  for (const double per_row : {0.05, 0.12, 0.3, 0.7}) {
    RowCostEstimate e;
    for (int i = 0; i < 100; ++i) {  // one-row and verify steps interleaved, mixed widths
      feed(e, 1, per_row, 2);
      feed(e, 2 + i % 4, per_row, 1);
    }
    EXPECT_NEAR(e.value(), per_row, 0.01 + 0.02 * std::abs(per_row - kDefaultRowCost)) << per_row;
  }
  // The machine gets busier for one-row steps too: the ratio, not the
  // seconds, is what counts.
  RowCostEstimate e;
  for (int i = 0; i < 50; ++i) {
    feed(e, 1, 0.1, 1, 0.005);
    feed(e, 5, 0.1, 1, 0.005);
  }
  for (int i = 0; i < 50; ++i) {
    feed(e, 1, 0.1, 1, 0.010);
    feed(e, 5, 0.1, 1, 0.010);
  }
  EXPECT_NEAR(e.value(), 0.1, 0.01);
}

TEST(RowCost, ClampsAndIgnoresWhatIsNotAStep) {
  RowCostEstimate cheap;  // verify steps no slower than one row (noise): the floor
  for (int i = 0; i < 200; ++i) {
    cheap.observe(1, 0.006);
    cheap.observe(5, 0.005);
  }
  EXPECT_NEAR(cheap.value(), RowCostEstimate::kMinCost, 0.01);
  EXPECT_GE(cheap.value(), RowCostEstimate::kMinCost);
  RowCostEstimate dear;
  for (int i = 0; i < 200; ++i) {
    dear.observe(1, 0.001);
    dear.observe(2, 0.1);
  }
  EXPECT_NEAR(dear.value(), RowCostEstimate::kMaxCost, 0.02);  // the prior fades
  EXPECT_LE(dear.value(), RowCostEstimate::kMaxCost);
  RowCostEstimate e;
  for (const double bad : {0.0, -1.0, std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN()}) {
    e.observe(1, bad);
    e.observe(5, bad);
  }
  e.observe(0, 0.005);
  e.observe(RowCostEstimate::kMaxRows + 1, 0.005);
  EXPECT_FALSE(e.measured());
  EXPECT_DOUBLE_EQ(e.value(), kDefaultRowCost);
  RowCostEstimate pinned = RowCostEstimate::pinned(0.15);
  feed(pinned, 1, 0.9, 10);
  feed(pinned, 5, 0.9, 10);
  EXPECT_FALSE(pinned.measured());
  EXPECT_DOUBLE_EQ(pinned.value(), 0.15);
}

}  // namespace
}  // namespace folio::spec
