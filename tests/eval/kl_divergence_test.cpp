// KL divergence per row and llama.cpp's statistics over rows, on cases small
// enough to check by hand.
#include "eval/kl_divergence.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace folio::eval {
namespace {

std::vector<std::uint16_t> compress(const std::vector<float>& logits) {
  std::vector<std::uint16_t> row(logprob_row_width(logits.size()));
  compress_logprobs(logits, row);
  return row;
}

TEST(KlDivergence, HandCheckedTwoTokens) {
  // p = (1/2, 1/2), q = (3/4, 1/4): KL(p || q) = 1/2 ln(4/3).
  const std::vector<float> base = {0, 0}, cand = {static_cast<float>(std::log(3.0)), 0};
  const RowComparison r = compare_row(cand, base, 0);
  EXPECT_NEAR(r.kld, 0.5 * std::log(4.0 / 3.0), 1e-7);  // ln 3 as an f32 logit
  EXPECT_NEAR(r.nll, -std::log(0.75), 1e-7);
  EXPECT_NEAR(r.nll_base, std::log(2.0), 1e-12);
  EXPECT_NEAR(r.p_diff, 0.25, 1e-7);
  EXPECT_TRUE(r.same_top);  // the base's tie goes to its first index
  const RowComparison r1 = compare_row(cand, base, 1);
  EXPECT_NEAR(r1.p_diff, -0.25, 1e-7);
  // The same through a stored row (a two-value row is stored exactly enough).
  const std::vector<std::uint16_t> row = compress(base);
  const RowComparison c = compare_row(cand, CompressedRow(row, 2), 0);
  EXPECT_NEAR(c.kld, 0.5 * std::log(4.0 / 3.0), 1e-6);
  EXPECT_NEAR(c.nll_base, std::log(2.0), 1e-6);
  // Swapped roles: a different top token.
  EXPECT_FALSE(compare_row(std::vector<float>{0, 1}, cand, 0).same_top);
}

TEST(KlDivergence, IdenticalDistributionsGiveZero) {
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0, 3);
  std::vector<float> logits(5000);
  for (float& x : logits) x = d(rng);
  const RowComparison r = compare_row(logits, logits, 17);
  EXPECT_NEAR(r.kld, 0, 1e-12);
  EXPECT_EQ(r.p_diff, 0);
  EXPECT_TRUE(r.same_top);
  EXPECT_EQ(r.nll, r.nll_base);
  // Against its own stored row only the compression remains: each stored
  // log p is off by at most half a step (8 / 65535 nats), so |KLD| and
  // |delta p| stay below that, far below the KLDs that matter (1e-3 .. 1e-1).
  const std::vector<std::uint16_t> row = compress(logits);
  const RowComparison c = compare_row(logits, CompressedRow(row, logits.size()), 17);
  EXPECT_LT(std::fabs(c.kld), 8.0 / 65535);
  EXPECT_LT(std::fabs(c.p_diff), 8.0 / 65535);
  EXPECT_TRUE(c.same_top);
}

TEST(KlDivergence, QuantileIsLlamaCpps) {
  const std::vector<float> v = {1, 2, 3, 4};
  EXPECT_EQ(quantile(v, 0), 1);
  EXPECT_EQ(quantile(v, 1), 4);
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile(v, 0.9), 3.7);
  EXPECT_DOUBLE_EQ(quantile(std::vector<float>{5}, 0.3), 5);
}

TEST(KlDivergence, Statistics) {
  KldAccumulator acc;
  // 20 rows: KLD 0.01 * (i + 1); 15 with the same top; delta p +-0.1; NLL 1 or 2.
  for (int i = 0; i < 20; ++i) {
    acc.add({.nll = i % 2 == 0 ? 1.0 : 2.0,
             .nll_base = 1.0,
             .kld = 0.01 * (i + 1),
             .p_diff = i % 2 == 0 ? 0.1 : -0.1,
             .same_top = i < 15});
  }
  const KldSummary s = acc.summary(true);
  EXPECT_EQ(s.count, 20u);
  EXPECT_NEAR(s.kld.value, 0.105, 1e-12);
  // Standard error: sqrt(var / (n - 1)), var = population variance of 0.01..0.20.
  EXPECT_NEAR(s.kld.uncertainty, std::sqrt(0.01 * 0.01 * (400 - 1) / 12.0 / 19.0), 1e-12);
  EXPECT_NEAR(s.same_top.value, 0.75, 1e-12);
  EXPECT_NEAR(s.same_top.uncertainty, std::sqrt(0.75 * 0.25 / 19), 1e-12);
  EXPECT_NEAR(s.rms_p_diff.value, 0.1, 1e-12);
  EXPECT_NEAR(s.rms_p_diff.uncertainty, 0, 1e-9);  // every |delta p| is 0.1
  EXPECT_NEAR(s.p_diff.value, 0, 1e-12);
  EXPECT_NEAR(s.ppl.value, std::exp(1.5), 1e-9);
  EXPECT_NEAR(s.ppl_base.value, std::exp(1.0), 1e-12);
  EXPECT_EQ(s.ppl_base.uncertainty, 0);            // a constant NLL
  EXPECT_TRUE(std::isnan(s.log_ppl_correlation));  // undefined against a constant
  EXPECT_NEAR(s.log_ppl_ratio.value, 0.5, 1e-12);
  EXPECT_NEAR(s.log_ppl_ratio.uncertainty, s.ppl.uncertainty / s.ppl.value, 1e-12);
  EXPECT_NEAR(s.ppl_ratio.value, std::exp(0.5), 1e-12);
  ASSERT_EQ(s.kld_quantiles.size(), 11u);
  EXPECT_EQ(s.kld_quantiles.front().fraction, 1);
  EXPECT_NEAR(s.kld_quantiles.front().value, 0.20, 1e-7);
  EXPECT_NEAR(s.kld_quantiles[5].value, 0.105, 1e-7);  // the median
  EXPECT_NEAR(s.kld_quantiles.back().value, 0.01, 1e-7);
  ASSERT_EQ(s.p_diff_quantiles.size(), 13u);
  EXPECT_NEAR(s.p_diff_quantiles.front().value, 0.1, 1e-7);
  EXPECT_TRUE(acc.summary(false).kld_quantiles.empty());
}

TEST(KlDivergence, FewRowsHaveNoUncertainty) {
  KldAccumulator acc;
  for (int i = 0; i < 10; ++i) acc.add({.nll = 1.0 + i, .nll_base = 1, .kld = 0.1 * i});
  const KldSummary s = acc.summary(false);
  EXPECT_EQ(s.kld.uncertainty, 0);
  EXPECT_EQ(s.ppl.uncertainty, 0);
  EXPECT_EQ(KldAccumulator().summary(true).count, 0u);
}

TEST(KlDivergence, CorrelatedRuns) {
  // The candidate's NLL is the base's plus a constant: correlation 1, and
  // the ratio's uncertainty collapses (the covariance term cancels it).
  KldAccumulator acc;
  for (int i = 0; i < 50; ++i) {
    const double nll = 1 + 0.1 * (i % 7);
    acc.add({.nll = nll + 0.2, .nll_base = nll});
  }
  const KldSummary s = acc.summary(false);
  EXPECT_NEAR(s.log_ppl_correlation, 1, 1e-9);
  EXPECT_NEAR(s.log_ppl_ratio.value, 0.2, 1e-12);
  EXPECT_NEAR(s.log_ppl_ratio.uncertainty, 0, 1e-6);
}

}  // namespace
}  // namespace folio::eval
