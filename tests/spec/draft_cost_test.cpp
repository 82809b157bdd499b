// spec::DraftCostEstimate: the start-up estimate until proposals and the
// one-row step are both known, then seconds per draft forward over the
// step (synthetic seconds, no model and no clock).
#include "spec/draft_cost.h"

#include <gtest/gtest.h>

#include <limits>

#include "spec/row_cost.h"

namespace folio::spec {
namespace {

TEST(DraftCost, ThePriorUntilProposalsAndTheStepAreKnown) {
  DraftCostEstimate e(0.33);  // weight bytes: a third of the target's
  EXPECT_FALSE(e.measured());
  EXPECT_DOUBLE_EQ(e.value(0.010), 0.33);
  e.observe(4, 4 * 0.002);
  EXPECT_DOUBLE_EQ(e.value(0.010), 0.33);  // one proposal is not enough
  e.observe(3, 3 * 0.002);
  EXPECT_TRUE(e.measured());
  EXPECT_DOUBLE_EQ(e.value(0.010), 0.2);  // 2 ms a forward against a 10 ms step
  EXPECT_DOUBLE_EQ(e.value(0), 0.33);     // the step not known yet: the prior
  // A running mean: a machine that slows down is followed.
  for (int i = 0; i < 100; ++i) e.observe(2, 2 * 0.004);
  EXPECT_NEAR(e.value(0.010), 0.4, 1e-3);
}

TEST(DraftCost, TheStepComesFromTheRowCostEstimate) {
  RowCostEstimate rows;
  EXPECT_DOUBLE_EQ(rows.one_row_seconds(), 0);
  for (int i = 0; i < RowCostEstimate::kMinOneRowSteps; ++i) rows.observe(1, 0.012);
  EXPECT_DOUBLE_EQ(rows.one_row_seconds(), 0.012);
  // Also under a pinned row cost (its observations still time the step).
  RowCostEstimate pinned = RowCostEstimate::pinned(0.3);
  for (int i = 0; i < RowCostEstimate::kMinOneRowSteps; ++i) pinned.observe(1, 0.012);
  EXPECT_DOUBLE_EQ(pinned.one_row_seconds(), 0.012);
  EXPECT_DOUBLE_EQ(pinned.value(), 0.3);
  DraftCostEstimate e(0.5);
  e.observe(4, 0.012);
  e.observe(4, 0.012);
  EXPECT_DOUBLE_EQ(e.value(rows.one_row_seconds()), 0.25);
}

TEST(DraftCost, ClampsAndIgnoresBadInputAndPinnedIgnoresObservations) {
  DraftCostEstimate e(0.33);
  for (double bad : {0.0, -1.0, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()})
    e.observe(4, bad);
  e.observe(0, 0.004);
  e.observe(-2, 0.004);
  EXPECT_FALSE(e.measured());
  EXPECT_DOUBLE_EQ(e.value(0.010), 0.33);
  DraftCostEstimate slow(0.33), fast(0.33);
  for (int i = 0; i < 5; ++i) {
    slow.observe(1, 1.0);
    fast.observe(1, 1e-9);
  }
  EXPECT_DOUBLE_EQ(slow.value(0.010), DraftCostEstimate::kMaxCost);
  EXPECT_DOUBLE_EQ(fast.value(0.010), DraftCostEstimate::kMinCost);
  DraftCostEstimate pinned = DraftCostEstimate::pinned(0.5);
  for (int i = 0; i < 5; ++i) pinned.observe(4, 0.004);
  EXPECT_FALSE(pinned.measured());
  EXPECT_DOUBLE_EQ(pinned.value(0.010), 0.5);
}

}  // namespace
}  // namespace folio::spec
