// route_score: documented defaults, range [0, 1], monotone in every feature
// (random property test and end to end through extract_features), weight
// validation and normalisation, and a known ordering of prompts.
#include "route/score.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "base/error.h"
#include "route/policy.h"

namespace folio::route {
namespace {

std::int32_t* field(RouteFeatures& f, int i) {
  switch (i) {
    case 0:
      return &f.prompt_tokens;
    case 1:
      return &f.turns;
    case 2:
      return &f.max_tokens;
    case 3:
      return &f.code_signals;
    case 4:
      return &f.math_signals;
    default:
      return &f.keyword_hits;
  }
}
constexpr int kFields = 6;

RouteFeatures random_features(std::mt19937_64& rng) {
  std::uniform_int_distribution<std::int32_t> small(-2, 40), big(-10, 9000);
  RouteFeatures f;
  f.prompt_tokens = big(rng);
  f.turns = small(rng);
  f.max_tokens = big(rng);
  f.code_signals = small(rng);
  f.math_signals = small(rng);
  f.keyword_hits = small(rng);
  return f;
}

TEST(Score, DefaultsAreTheDocumentedOnes) {
  const ScoreWeights w;
  EXPECT_EQ(w.prompt_tokens, 0.25);
  EXPECT_EQ(w.keywords, 0.20);
  EXPECT_EQ(w.code, 0.20);
  EXPECT_EQ(w.math, 0.20);
  EXPECT_EQ(w.max_tokens, 0.10);
  EXPECT_EQ(w.turns, 0.05);
  EXPECT_DOUBLE_EQ(w.prompt_tokens + w.keywords + w.code + w.math + w.max_tokens + w.turns, 1.0);
  EXPECT_EQ(w.prompt_tokens_scale, 512);
  EXPECT_EQ(w.max_tokens_scale, 512);
  EXPECT_EQ(w.keywords_scale, 2);
  EXPECT_EQ(w.code_scale, 4);
  EXPECT_EQ(w.math_scale, 6);
  EXPECT_EQ(w.turns_scale, 4);
  ASSERT_EQ(score_terms().size(), 6u);
  EXPECT_STREQ(score_terms()[0].name, "prompt_tokens");
}

TEST(Score, EmptyRequestScoresZeroAndHugeOneScoresNearOne) {
  EXPECT_EQ(route_score(RouteFeatures{}, {}), 0.0);
  RouteFeatures f;
  for (int i = 0; i < kFields; ++i) *field(f, i) = std::numeric_limits<std::int32_t>::max();
  EXPECT_GT(route_score(f, {}), 0.999);
  EXPECT_LE(route_score(f, {}), 1.0);
}

TEST(Score, OneTermIsItsSaturatingCurve) {
  ScoreWeights w;
  for (const ScoreTerm& t : score_terms()) w.*t.weight = 0;
  w.keywords = 3;  // normalised to 1
  RouteFeatures f;
  f.keyword_hits = 2;  // = the scale: 1 - 1/e
  EXPECT_NEAR(route_score(f, w), 1 - std::exp(-1.0), 1e-12);
  f.code_signals = 50;  // weight 0: no effect
  EXPECT_NEAR(route_score(f, w), 1 - std::exp(-1.0), 1e-12);
  w.turns = 3;  // now half and half; turns 1 contributes nothing (turns - 1 = 0)
  EXPECT_NEAR(route_score(f, w), 0.5 * (1 - std::exp(-1.0)), 1e-12);
}

TEST(Score, ScalingAllWeightsChangesNothing) {
  std::mt19937_64 rng(3);
  ScoreWeights scaled;
  for (const ScoreTerm& t : score_terms()) scaled.*t.weight *= 7.5;
  for (int i = 0; i < 200; ++i) {
    const RouteFeatures f = random_features(rng);
    EXPECT_NEAR(route_score(f, scaled), route_score(f, {}), 1e-12);
  }
}

TEST(Score, InRangeAndMonotoneInEveryFeature) {
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> weight(0, 1), scale(0.5, 2000);
  std::uniform_int_distribution<std::int32_t> step(0, 500);
  for (int trial = 0; trial < 5000; ++trial) {
    ScoreWeights w;
    for (const ScoreTerm& t : score_terms()) {
      w.*t.weight = trial % 2 == 0 ? w.*t.weight : weight(rng);
      w.*t.scale = trial % 2 == 0 ? w.*t.scale : scale(rng);
    }
    RouteFeatures f = random_features(rng);
    const double s = route_score(f, w);
    ASSERT_GE(s, 0.0);
    ASSERT_LE(s, 1.0);
    for (int i = 0; i < kFields; ++i) {
      RouteFeatures g = f;
      *field(g, i) += step(rng);
      ASSERT_GE(route_score(g, w), s) << "field " << i << " trial " << trial;
    }
  }
}

TEST(Score, EveryWeightedTermRaisesTheScoreFromZero) {
  for (int i = 0; i < kFields; ++i) {
    RouteFeatures f;
    RouteFeatures g;
    *field(g, i) = i == 1 ? 2 : 1;  // turns counts from the second
    EXPECT_GT(route_score(g, {}), route_score(f, {})) << "field " << i;
  }
}

TEST(Score, InvalidWeightsThrow) {
  auto bad = [](auto mutate) {
    ScoreWeights w;
    mutate(w);
    EXPECT_THROW(validate_weights(w), Error);
    EXPECT_THROW(route_score(RouteFeatures{}, w), Error);
    EXPECT_THROW(normalize_weights(w), Error);
  };
  bad([](ScoreWeights& w) { w.code = -0.1; });
  bad([](ScoreWeights& w) { w.math = std::nan(""); });
  bad([](ScoreWeights& w) { w.turns = std::numeric_limits<double>::infinity(); });
  bad([](ScoreWeights& w) {
    for (const ScoreTerm& t : score_terms()) w.*t.weight = 0;
  });
  bad([](ScoreWeights& w) { w.keywords_scale = 0; });
  bad([](ScoreWeights& w) { w.prompt_tokens_scale = -512; });
  bad([](ScoreWeights& w) { w.max_tokens_scale = std::nan(""); });
  try {
    ScoreWeights w;
    w.code = -1;
    validate_weights(w);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"code\""), std::string::npos) << e.what();
  }
}

TEST(Score, NormalizeMakesWeightsSumToOne) {
  ScoreWeights w;
  w.prompt_tokens = 3;
  w.code = 1;
  const ScoreWeights n = normalize_weights(w);
  double sum = 0;
  for (const ScoreTerm& t : score_terms()) sum += n.*t.weight;
  EXPECT_NEAR(sum, 1.0, 1e-15);
  EXPECT_NEAR(n.prompt_tokens / n.code, 3.0, 1e-12);
  EXPECT_EQ(n.code_scale, w.code_scale);
}

// End to end: the score of a text, with prompt_tokens estimated at 4 bytes a token.
double score_of(const std::string& text, const FeatureConfig& cfg = {}) {
  RouteInput in;
  in.text = text;
  in.prompt_tokens = static_cast<std::int32_t>(text.size() / 4) + 8;
  return route_score(extract_features(in, cfg), {});
}

TEST(Score, LongerPromptsAndKeywordsNeverLowerTheScore) {
  std::string text = "Tell me about cats.";
  double prev = score_of(text);
  const std::vector<std::string> tails = {" They purr.", "\nint x = 1;\n", " 12*7 = 84",
                                          " Prove it.", " Explain why, step by step."};
  for (int i = 0; i < 40; ++i) {
    text += tails[static_cast<std::size_t>(i) % tails.size()];
    const double s = score_of(text);
    ASSERT_GE(s, prev) << text;
    prev = s;
  }
  // Each listed keyword, added, strictly raises the score.
  for (const std::string& k : default_keywords()) {
    EXPECT_GT(score_of("Tell me about cats. " + k), score_of("Tell me about cats. ")) << k;
  }
}

TEST(Score, KnownOrderingOfPrompts) {
  const double hi = score_of("hi!");
  const double sum = score_of("What is 2+3?");
  const double proof = score_of(
      "Prove by induction that 1 + 2 + ... + n = n(n+1)/2 for every n >= 1. Then derive, step "
      "by step, a closed form for the sum of the first n odd numbers, prove it the same way, "
      "and explain why the two results agree: compare the sums 1 + 3 + 5 + ... + (2n-1) and "
      "n^2 for n = 1, 2, 3, 4 and show the equation holds at every step.");
  EXPECT_LT(hi, sum);
  EXPECT_LT(sum, 0.2);
  EXPECT_GT(proof, kDefaultThreshold);
  EXPECT_LT(sum, proof);
}

}  // namespace
}  // namespace folio::route
