// tests/spec/rejection_test.cpp: the verification rule keeps the target
// distribution. Thousands of seeded verifications of a draft token against a
// fixed target p give tokens distributed as p (chi-square), whatever the
// draft; a deliberately biased acceptance rule fails the same test, so the
// test can tell the difference. Greedy targets accept exactly the argmax.
#include "spec/rejection.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace folio::spec {
namespace {

using sampling::Candidate;
using sampling::Candidates;

Candidates target(const std::vector<float>& logits) {
  Candidates c;
  c.items.clear();
  for (std::size_t i = 0; i < logits.size(); ++i)
    c.items.push_back({static_cast<TokenId>(i), logits[i]});
  return c;
}

std::vector<double> probs(const std::vector<float>& logits) {
  double m = -std::numeric_limits<double>::infinity(), total = 0;
  for (float l : logits) m = std::max(m, static_cast<double>(l));
  std::vector<double> p;
  for (float l : logits) p.push_back(std::exp(l - m));
  for (double x : p) total += x;
  for (double& x : p) x /= total;
  return p;
}

// Pearson's statistic of `counts` against probabilities `p` over n draws.
double chi_square(const std::vector<int>& counts, const std::vector<double>& p, int n) {
  double x2 = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double e = p[i] * n;
    x2 += (counts[i] - e) * (counts[i] - e) / e;
  }
  return x2;
}

// 0.999 quantile of chi-square with 7 degrees of freedom (8 tokens).
constexpr double kCritical7 = 24.32;
constexpr int kDraws = 40000;

// A wrong rule for the control: accepts the draft too often.
Verdict biased(const Candidates& p, TokenId draft, sampling::Rng& rng, std::vector<double>& w) {
  const double pd = probability(p, draft, w);
  if (sampling::uniform01(rng) < std::min(1.0, 1.3 * pd)) return {draft, true};
  return verify_one_hot(p, draft, rng, w);  // (its own accept test runs again: more bias)
}

template <class Rule>
std::vector<int> histogram(const std::vector<float>& logits, TokenId draft, Rule rule,
                           int* accepted) {
  const Candidates p = target(logits);
  sampling::Rng rng(1000 + static_cast<std::uint64_t>(draft));  // seeded: the test is fixed
  std::vector<double> w;
  std::vector<int> counts(logits.size(), 0);
  *accepted = 0;
  for (int i = 0; i < kDraws; ++i) {
    const Verdict v = rule(p, draft, rng, w);
    ++counts.at(static_cast<std::size_t>(v.token));
    *accepted += v.accepted ? 1 : 0;
    EXPECT_EQ(v.accepted, v.token == draft);
  }
  return counts;
}

const std::vector<float> kLogits = {1.5f, 0.2f, -0.7f, 2.1f, 0.0f, -1.9f, 0.9f, 1.1f};

TEST(Rejection, OneHotDraftsKeepTheTargetDistribution) {
  const auto p = probs(kLogits);
  for (TokenId draft = 0; draft < 8; ++draft) {
    int accepted = 0;
    const auto counts = histogram(kLogits, draft, verify_one_hot, &accepted);
    EXPECT_LT(chi_square(counts, p, kDraws), kCritical7) << "draft " << draft;
    // The draft is accepted exactly as often as the target would pick it.
    EXPECT_NEAR(static_cast<double>(accepted) / kDraws, p[static_cast<std::size_t>(draft)], 0.01);
  }
}

TEST(Rejection, ABiasedAcceptanceRuleFailsTheSameTest) {
  const auto p = probs(kLogits);
  int accepted = 0;
  const auto counts = histogram(kLogits, 6, biased, &accepted);
  EXPECT_GT(chi_square(counts, p, kDraws), kCritical7 * 4);
}

TEST(Rejection, ADraftOutsideATruncatedTargetIsAlwaysRejected) {
  Candidates p = target({0.5f, 1.0f, 0.25f});  // candidates 0..2 only (top-k, top-p...)
  sampling::Rng rng(1);
  std::vector<double> w;
  std::vector<int> counts(3, 0);
  for (int i = 0; i < kDraws; ++i) {
    const Verdict v = verify_one_hot(p, /*draft=*/7, rng, w);
    ASSERT_FALSE(v.accepted);
    ++counts.at(static_cast<std::size_t>(v.token));
  }
  // 0.999 quantile, 2 degrees of freedom.
  EXPECT_LT(chi_square(counts, probs({0.5f, 1.0f, 0.25f}), kDraws), 13.82);
}

TEST(Rejection, GreedyTargetsAcceptExactlyTheArgmaxWithoutRandomness) {
  Candidates p;
  p.items = {Candidate{42, 3.0f}};  // Sampler::target of a greedy request
  sampling::Rng rng(9), untouched(9);
  std::vector<double> w;
  EXPECT_EQ(verify_one_hot(p, 42, rng, w).token, 42);
  EXPECT_TRUE(verify_one_hot(p, 42, rng, w).accepted);
  const Verdict v = verify_one_hot(p, 41, rng, w);
  EXPECT_FALSE(v.accepted);
  EXPECT_EQ(v.token, 42);
  EXPECT_EQ(rng(), untouched());  // accepting a sure token draws nothing
}

}  // namespace
}  // namespace folio::spec
