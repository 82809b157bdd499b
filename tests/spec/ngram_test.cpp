// tests/spec/ngram_test.cpp: the incremental n-gram index proposes exactly
// what a brute-force search of the whole sequence proposes, step by step.
#include <gtest/gtest.h>

#include <random>

#include "spec/ngram_index.h"
#include "spec/ngram_proposer.h"

namespace folio::spec {
namespace {

// The longest suffix (n from max_n down to min_n) with an earlier
// occurrence; the latest such occurrence; the up to k tokens after it.
std::vector<TokenId> brute_force(const std::vector<TokenId>& t, int min_n, int max_n, int k) {
  const int len = static_cast<int>(t.size());
  for (int n = std::min(max_n, len - 1); n >= min_n; --n) {
    for (int end = len - 1; end >= n; --end) {
      if (std::equal(t.begin() + (end - n), t.begin() + end, t.end() - n))
        return {t.begin() + end, t.begin() + std::min(end + k, len)};
    }
  }
  return {};
}

TEST(NgramIndex, MatchesBruteForceTokenByToken) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    const int min_n = 1 + trial % 3, max_n = min_n + trial % 4, k = 1 + trial % 5;
    NgramIndex index(min_n, max_n);
    std::vector<TokenId> t;
    const TokenId vocab = 2 + trial % 5;  // small: many repeats
    int proposed = 0;
    for (int i = 0; i < 300; ++i) {
      t.push_back(std::uniform_int_distribution<TokenId>(0, vocab - 1)(rng));
      index.extend(t);
      std::vector<TokenId> got;
      index.propose(t, k, got);
      ASSERT_EQ(got, brute_force(t, min_n, max_n, k)) << "trial " << trial << " len " << t.size();
      proposed += got.empty() ? 0 : 1;
    }
    EXPECT_GT(proposed, 100);  // the test exercises matches, not only misses
  }
}

TEST(NgramIndex, PromptAtOnceThenOutputs) {
  // "a b c d X a b c" -> the suffix "a b c" occurred before, followed by "d X".
  const std::vector<TokenId> prompt = {1, 2, 3, 4, 9, 1, 2, 3};
  NgramIndex index(2, 3);
  index.extend(prompt);
  std::vector<TokenId> got;
  index.propose(prompt, 2, got);
  EXPECT_EQ(got, (std::vector<TokenId>{4, 9}));
  // The draft never runs past the end of the sequence.
  got.clear();
  index.propose(prompt, 10, got);
  EXPECT_EQ(got, (std::vector<TokenId>{4, 9, 1, 2, 3}));
  // No earlier occurrence of any suffix of length >= 2: no draft.
  auto t = prompt;
  t.push_back(7);
  index.extend(t);
  got.clear();
  index.propose(t, 3, got);
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(index.num_indexed(), 9);
}

TEST(NgramProposer, KeepsOneIndexPerSequence) {
  NgramProposer p(1, 2);
  const std::vector<TokenId> a = {5, 6, 7, 5, 6}, b = {1, 1, 1};
  std::vector<DraftQuery> q(2);
  q[0] = {1, a, 2, {}};
  q[1] = {2, b, 3, {}};
  p.propose(q);
  EXPECT_EQ(q[0].draft, (std::vector<TokenId>{7, 5}));
  EXPECT_EQ(q[1].draft, (std::vector<TokenId>{1}));  // "1 1" ended at 2, then one token
  EXPECT_EQ(p.num_sequences(), 2u);
  p.release(1);
  EXPECT_EQ(p.num_sequences(), 1u);
}

}  // namespace
}  // namespace folio::spec
