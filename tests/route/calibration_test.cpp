// The built-in calibration sample: its size and variety, and that a share
// calibrated on it is achieved on it and routes its easiest prompts small and
// its hardest large.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "route/calibration_prompts.h"
#include "route/score.h"
#include "route/threshold.h"

namespace folio::route {
namespace {

// Features as the server would extract them, with prompt_tokens estimated at
// 4 bytes a token plus a chat template's 8.
RouteFeatures features_of(const std::string& text) {
  RouteInput in;
  in.text = text;
  in.prompt_tokens = static_cast<std::int32_t>(text.size() / 4) + 8;
  return extract_features(in, {});
}

std::vector<RouteFeatures> builtin_sample() {
  std::vector<RouteFeatures> out;
  for (const std::string& p : builtin_calibration_prompts()) out.push_back(features_of(p));
  return out;
}

TEST(Calibration, PromptsAreManyDistinctAndVaried) {
  const std::vector<std::string> prompts = builtin_calibration_prompts();
  EXPECT_GE(prompts.size(), 55u);
  EXPECT_LE(prompts.size(), 70u);
  EXPECT_EQ(std::set<std::string>(prompts.begin(), prompts.end()).size(), prompts.size());
  int plain = 0, code = 0, math = 0, keywords = 0, long_ones = 0;
  for (const std::string& p : prompts) {
    ASSERT_FALSE(p.empty());
    const RouteFeatures f = features_of(p);
    plain += f.code_signals == 0 && f.math_signals == 0 && f.keyword_hits == 0;
    code += f.code_signals >= 3;
    math += f.math_signals >= 4;
    keywords += f.keyword_hits >= 2;
    long_ones += p.size() >= 250;
  }
  EXPECT_GE(plain, 20);
  EXPECT_GE(code, 5);
  EXPECT_GE(math, 5);
  EXPECT_GE(keywords, 5);
  EXPECT_GE(long_ones, 5);
}

TEST(Calibration, CalibratedShareIsAchievedOnTheSample) {
  const std::vector<RouteFeatures> sample = builtin_sample();
  const RoutePolicy p;
  std::vector<double> scores;
  for (const RouteFeatures& f : sample) scores.push_back(route_score(f, p.weights));
  for (double share : {0.0, 0.1, 0.25, 0.3, 0.5, 0.75, 1.0}) {
    const double t = calibrate_policy_threshold(sample, p, share);
    EXPECT_NEAR(share_at_or_above(scores, t), share, 1.0 / static_cast<double>(sample.size()))
        << share;
    EXPECT_EQ(t, calibrate_threshold(scores, share));
  }
}

TEST(Calibration, EasyPromptsGoSmallAndHardOnesLarge) {
  const RoutePolicy p;
  const double t = calibrate_policy_threshold(builtin_sample(), p, 0.3);
  auto score = [&](const std::string& text) { return route_score(features_of(text), p.weights); };
  for (const char* easy : {"hi!", "What is the capital of Australia?", "Tell me a joke about cats.",
                           "What is 2+3?", "Thanks, that was helpful."}) {
    EXPECT_LT(score(easy), t) << easy;
  }
  const std::vector<std::string> prompts = builtin_calibration_prompts();
  int hard_large = 0;
  for (const std::string& prompt : prompts) {
    const bool hard = prompt.rfind("Prove by induction", 0) == 0 ||
                      prompt.rfind("Refactor this code", 0) == 0 ||
                      prompt.rfind("This C++ code crashes", 0) == 0 ||
                      prompt.rfind("Explain in detail how public-key", 0) == 0;
    if (hard) {
      EXPECT_GE(score(prompt), t) << prompt;
      ++hard_large;
    }
  }
  EXPECT_EQ(hard_large, 4);
}

TEST(Calibration, Errors) {
  EXPECT_THROW(calibrate_policy_threshold({}, RoutePolicy{}, 0.3), Error);
  EXPECT_THROW(calibrate_policy_threshold(builtin_sample(), RoutePolicy{}, 1.5), Error);
  RoutePolicy bad;
  bad.weights.code = -1;
  EXPECT_THROW(calibrate_policy_threshold(builtin_sample(), bad, 0.3), Error);
}

}  // namespace
}  // namespace folio::route
