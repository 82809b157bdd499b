// Truncation steps: hand-made distributions with known answers, plus a
// 50k-token random vocabulary checked against a brute-force full sort.
#include "sampling/truncation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace folio::sampling {
namespace {

Candidates from_probs(const std::vector<double>& probs) {
  std::vector<float> logits;
  for (double p : probs) logits.push_back(static_cast<float>(std::log(p)));
  Candidates c;
  c.assign(logits);
  return c;
}

std::vector<TokenId> ids(const Candidates& c) {
  std::vector<TokenId> out;
  for (const auto& x : c.items) out.push_back(x.id);
  return out;
}

std::vector<TokenId> sorted_ids(const Candidates& c) {
  auto v = ids(c);
  std::sort(v.begin(), v.end());
  return v;
}

// Shuffled so the steps cannot rely on input order.
const std::vector<double> kProbs = {0.05, 0.3, 0.5, 0.15};  // ids 0..3

TEST(Truncation, TopKKeepsKBestSorted) {
  Candidates c = from_probs(kProbs);
  apply_top_k(c, 2);
  EXPECT_EQ(ids(c), (std::vector<TokenId>{2, 1}));
  EXPECT_TRUE(c.sorted);
  Candidates all = from_probs(kProbs);
  apply_top_k(all, 0);
  EXPECT_EQ(all.items.size(), 4u);
  apply_top_k(all, 10);
  EXPECT_EQ(all.items.size(), 4u);
}

TEST(Truncation, TopKTiesBrokenByLowerId) {
  Candidates c;
  const std::vector<float> l = {1.0f, 3.0f, 3.0f, 3.0f};
  c.assign(l);
  apply_top_k(c, 2);
  EXPECT_EQ(ids(c), (std::vector<TokenId>{1, 2}));
}

TEST(Truncation, TopPKeepsMinimalSetWithMassP) {
  struct Case {
    float p;
    std::vector<TokenId> want;
  };
  for (const Case& k :
       {Case{0.4f, {2}}, Case{0.75f, {2, 1}}, Case{0.81f, {2, 1, 3}}, Case{0.96f, {2, 1, 3, 0}}}) {
    Candidates c = from_probs(kProbs);
    apply_top_p(c, k.p);
    EXPECT_EQ(ids(c), k.want) << "p=" << k.p;
  }
}

TEST(Truncation, MinPKeepsRatioAboveThreshold) {
  Candidates c = from_probs(kProbs);
  apply_min_p(c, 0.31f);  // threshold 0.155: keeps 0.5 and 0.3
  EXPECT_EQ(sorted_ids(c), (std::vector<TokenId>{1, 2}));
  Candidates d = from_probs(kProbs);
  apply_min_p(d, 0.09f);  // threshold 0.045: keeps all
  EXPECT_EQ(d.items.size(), 4u);
  Candidates e = from_probs(kProbs);
  apply_min_p(e, 1.0f);  // only the top survives
  EXPECT_EQ(ids(e), (std::vector<TokenId>{2}));
}

TEST(Truncation, TemperatureScalesLogits) {
  Candidates c;
  const std::vector<float> l = {1.0f, -2.0f};
  c.assign(l);
  apply_temperature(c, 0.5f);
  EXPECT_FLOAT_EQ(c.items[0].logit, 2.0f);
  EXPECT_FLOAT_EQ(c.items[1].logit, -4.0f);
}

// ---- against a brute-force reference on a realistic vocabulary ----------------

std::vector<float> random_logits(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 3.0f);
  std::vector<float> l(n);
  for (auto& v : l) v = d(rng);
  return l;
}

std::vector<Candidate> full_sort(const std::vector<float>& l) {
  std::vector<Candidate> v;
  for (std::size_t i = 0; i < l.size(); ++i) v.push_back({static_cast<TokenId>(i), l[i]});
  std::sort(v.begin(), v.end(), higher);
  return v;
}

TEST(Truncation, TopKMatchesFullSortOnLargeVocab) {
  const auto l = random_logits(50000, 1);
  const auto ref = full_sort(l);
  for (int k : {1, 40, 1000}) {
    Candidates c;
    c.assign(l);
    apply_top_k(c, k);
    ASSERT_EQ(c.items.size(), static_cast<std::size_t>(k));
    for (int i = 0; i < k; ++i) EXPECT_EQ(c.items[i].id, ref[i].id);
  }
}

TEST(Truncation, TopPMatchesFullSortOnLargeVocab) {
  for (float temp : {0.3f, 1.0f, 3.0f}) {  // sharp (1 round) to flat (many rounds)
    auto l = random_logits(50000, 2);
    for (auto& v : l) v /= temp;
    const auto ref = full_sort(l);
    double total = 0;
    for (const auto& x : ref) total += std::exp(double(x.logit - ref[0].logit));
    for (float p : {0.1f, 0.9f, 0.99f}) {
      std::size_t want = 0;
      double cum = 0;
      while (cum < p * total) cum += std::exp(double(ref[want++].logit - ref[0].logit));
      Candidates c;
      c.assign(l);
      apply_top_p(c, p);
      ASSERT_EQ(c.items.size(), want) << "temp " << temp << " p " << p;
      for (std::size_t i = 0; i < want; ++i) ASSERT_EQ(c.items[i].id, ref[i].id);
    }
  }
}

TEST(Truncation, MinPMatchesDefinitionOnLargeVocab) {
  const auto l = random_logits(50000, 3);
  double z = 0, pmax = 0;
  for (float v : l) z += std::exp(double(v));
  for (float v : l) pmax = std::max(pmax, std::exp(double(v)) / z);
  Candidates c;
  c.assign(l);
  apply_min_p(c, 0.05f);
  std::vector<TokenId> want;
  for (std::size_t i = 0; i < l.size(); ++i) {
    if (std::exp(double(l[i])) / z >= 0.05 * pmax) want.push_back(static_cast<TokenId>(i));
  }
  EXPECT_EQ(ids(c), want);  // order kept (id order when unsorted)
  EXPECT_GT(want.size(), 1u);
}

TEST(Truncation, AssignTopKMatchesFullSort) {
  const auto l = random_logits(50000, 6);
  const auto ref = full_sort(l);
  for (std::size_t k : {1u, 7u, 40u, 50000u}) {
    Candidates c;
    c.assign_top_k(l, k);
    ASSERT_EQ(c.items.size(), k);
    EXPECT_TRUE(c.sorted);
    for (std::size_t i = 0; i < k; ++i) ASSERT_EQ(c.items[i].id, ref[i].id) << k << " " << i;
  }
  Candidates ties;
  ties.assign_top_k(std::vector<float>{2, 5, 5, 1, 5}, 2);
  EXPECT_EQ(ids(ties), (std::vector<TokenId>{1, 2}));
}

TEST(Truncation, TopPAfterTopKUsesSortedList) {
  const auto l = random_logits(50000, 4);
  Candidates c;
  c.assign(l);
  apply_top_k(c, 50);
  apply_top_p(c, 0.5f);
  const auto ref = full_sort(l);
  double total = 0;
  for (int i = 0; i < 50; ++i) total += std::exp(double(ref[i].logit - ref[0].logit));
  std::size_t want = 0;
  double cum = 0;
  while (cum < 0.5 * total) cum += std::exp(double(ref[want++].logit - ref[0].logit));
  EXPECT_EQ(c.items.size(), want);
}

}  // namespace
}  // namespace folio::sampling
