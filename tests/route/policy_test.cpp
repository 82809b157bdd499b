// decide(): every branch and its reason, hard rules before score and load,
// the load rule only raising the threshold, and determinism.
#include "route/policy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

namespace folio::route {
namespace {

// A policy whose score is 1 - exp(-prompt_tokens / 512): easy to aim at.
RoutePolicy length_only(double threshold) {
  RoutePolicy p;
  for (const ScoreTerm& t : score_terms()) p.weights.*t.weight = 0;
  p.weights.prompt_tokens = 1;
  p.threshold = threshold;
  return p;
}

// prompt_tokens for which length_only's score is `score`.
RouteRequest request_scoring(double score) {
  RouteRequest r;
  r.input.text = "plain text";
  r.input.prompt_tokens = static_cast<std::int32_t>(std::ceil(-512 * std::log(1 - score)));
  return r;
}

const LoadSnapshot kIdle{};
const LoadSnapshot kOverloaded{30.0, 50};

TEST(Policy, TargetNames) {
  EXPECT_STREQ(target_name(Target::kSmall), "small");
  EXPECT_STREQ(target_name(Target::kLarge), "large");
}

TEST(Policy, ScoreAtOrAboveThresholdGoesLarge) {
  const RoutePolicy p = length_only(0.5);
  const RouteDecision above = decide(request_scoring(0.6), p, kIdle);
  EXPECT_EQ(above.target, Target::kLarge);
  EXPECT_EQ(above.reason, "score");
  EXPECT_NEAR(above.score, 0.6, 1e-3);
  EXPECT_EQ(above.threshold, 0.5);
  EXPECT_EQ(above.features.prompt_tokens, request_scoring(0.6).input.prompt_tokens);

  const RouteDecision below = decide(request_scoring(0.4), p, kIdle);
  EXPECT_EQ(below.target, Target::kSmall);
  EXPECT_EQ(below.reason, "score_below");

  // Equal counts as large: threshold 0 sends everything, an empty request too.
  EXPECT_EQ(decide(RouteRequest{}, length_only(0), kIdle).target, Target::kLarge);
  EXPECT_EQ(decide(RouteRequest{}, length_only(0), kIdle).reason, "score");
}

TEST(Policy, ContextRuleComesFirst) {
  RouteRequest r = request_scoring(0.1);
  r.fits_small = false;
  r.small_missing = {"tools"};
  const RouteDecision d = decide(r, length_only(0.5), kOverloaded);
  EXPECT_EQ(d.target, Target::kLarge);
  EXPECT_EQ(d.reason, "context");
  EXPECT_NEAR(d.score, 0.1, 1e-3);  // computed anyway, for the histogram
}

TEST(Policy, MissingFeatureNamesTheFirst) {
  RouteRequest r = request_scoring(0.1);
  r.small_missing = {"tools", "chat_template"};
  const RouteDecision d = decide(r, length_only(0.5), kIdle);
  EXPECT_EQ(d.target, Target::kLarge);
  EXPECT_EQ(d.reason, "feature:tools");
  EXPECT_GT(d.score, 0.0);
}

TEST(Policy, LoadRaisesTheThresholdAndSaysSo) {
  RoutePolicy p = length_only(0.3);
  p.load_wait_bound_s = 2.0;
  p.load_threshold_raise = 0.5;
  const RouteRequest r = request_scoring(0.6);
  // Idle, or a wait at the bound: the plain rule.
  EXPECT_EQ(decide(r, p, kIdle).reason, "score");
  EXPECT_EQ(decide(r, p, LoadSnapshot{2.0, 3}).reason, "score");
  // Overloaded: 0.6 < 0.3 + 0.5, so small, because of the load.
  const RouteDecision d = decide(r, p, kOverloaded);
  EXPECT_EQ(d.target, Target::kSmall);
  EXPECT_EQ(d.reason, "load");
  EXPECT_DOUBLE_EQ(d.threshold, 0.8);
  // A request that clears the raised threshold still goes large.
  EXPECT_EQ(decide(request_scoring(0.9), p, kOverloaded).reason, "score");
  // One that was small anyway stays "score_below", not "load".
  EXPECT_EQ(decide(request_scoring(0.2), p, kOverloaded).reason, "score_below");
  // Off (bound 0): no raise at any wait.
  p.load_wait_bound_s = 0;
  EXPECT_EQ(decide(r, p, kOverloaded).reason, "score");
}

TEST(Policy, RaisedThresholdIsCappedAboveAnyScore) {
  RoutePolicy p = length_only(0.9);
  p.load_wait_bound_s = 1;
  p.load_threshold_raise = 1;
  EXPECT_EQ(applied_threshold(p, kOverloaded), kAboveAnyScore);
  RouteRequest r;
  r.input.prompt_tokens = 1 << 30;  // score 1 (exp underflows)
  const RouteDecision d = decide(r, p, kOverloaded);
  EXPECT_EQ(d.score, 1.0);
  EXPECT_EQ(d.target, Target::kSmall);
  EXPECT_EQ(d.reason, "load");
  r.fits_small = false;  // ... but never against a hard rule
  EXPECT_EQ(decide(r, p, kOverloaded).target, Target::kLarge);
}

TEST(Policy, LoadNeverOverridesHardRules) {
  RoutePolicy p = length_only(0.2);
  p.load_wait_bound_s = 0.5;
  p.load_threshold_raise = 1;
  for (double score : {0.01, 0.5, 0.99}) {
    RouteRequest r = request_scoring(score);
    r.small_missing = {"tools"};
    EXPECT_EQ(decide(r, p, kOverloaded).target, Target::kLarge);
    EXPECT_EQ(decide(r, p, kOverloaded).reason, "feature:tools");
    r.fits_small = false;
    EXPECT_EQ(decide(r, p, kOverloaded).reason, "context");
  }
}

TEST(Policy, LoadRuleOnlyRaisesAndDecisionsAreDeterministic) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> unit(0, 1), wait(0, 10), raise(-0.5, 1.5);
  std::uniform_int_distribution<std::int32_t> tokens(0, 3000);
  for (int i = 0; i < 2000; ++i) {
    RoutePolicy p = length_only(unit(rng) * 1.2);
    p.load_wait_bound_s = unit(rng) < 0.2 ? 0 : wait(rng);
    p.load_threshold_raise = raise(rng);
    const LoadSnapshot load{wait(rng), 1};
    const double t = applied_threshold(p, load);
    ASSERT_GE(t, p.threshold);
    ASSERT_LE(t, std::max(p.threshold, kAboveAnyScore));

    RouteRequest r;
    r.input.prompt_tokens = tokens(rng);
    r.input.text = "Prove that 2+2 = 4";
    const RouteDecision a = decide(r, p, load);
    const RouteDecision b = decide(r, p, load);
    ASSERT_EQ(a.target, b.target);
    ASSERT_EQ(a.reason, b.reason);
    ASSERT_EQ(a.score, b.score);
    ASSERT_EQ(a.threshold, t);
    ASSERT_EQ(a.features, b.features);
    // Under load a request never goes large that would not have gone large idle.
    if (a.target == Target::kLarge) {
      ASSERT_EQ(decide(r, p, kIdle).target, Target::kLarge);
    }
    ASSERT_EQ(a.reason == "load", a.score >= p.threshold && a.score < t);
  }
}

TEST(Policy, DefaultPolicyRoutesEasySmallAndHardLarge) {
  const RoutePolicy p;
  RouteRequest easy;
  easy.input.text = "What is the capital of France?";
  easy.input.prompt_tokens = 16;
  EXPECT_EQ(decide(easy, p, kIdle).target, Target::kSmall);
  RouteRequest hard;
  hard.input.text =
      "Prove step by step that sqrt(2) is irrational, then derive the same for sqrt(3) and "
      "explain why the argument fails for sqrt(4) = 2.";
  hard.input.prompt_tokens = 400;
  hard.input.max_tokens = 2048;
  EXPECT_EQ(decide(hard, p, kIdle).target, Target::kLarge);
}

}  // namespace
}  // namespace folio::route
