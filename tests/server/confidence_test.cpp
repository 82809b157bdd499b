// tests/server/confidence_test.cpp: answer confidence and the cascade rule
// (server/confidence.h).
#include "server/confidence.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace folio::server {
namespace {

TEST(ConfidenceTest, MeansOverTokens) {
  ConfidenceMeter m;
  m.add(-0.5, -0.5, -2.5);  // margin 2
  m.add(-1.5, -1.0, -1.5);  // chose the runner-up: margin 0.5
  m.add(-1.0, std::nullopt, std::nullopt);
  const Confidence c = m.result();
  EXPECT_EQ(c.tokens, 3);
  EXPECT_DOUBLE_EQ(c.mean_logprob, -1.0);
  EXPECT_DOUBLE_EQ(c.mean_margin, 1.25);  // over the tokens that had two alternatives
}

TEST(ConfidenceTest, EscalatesBelowEitherBound) {
  CascadePolicy p;
  const Confidence c{.mean_logprob = -1.0, .mean_margin = 1.0, .tokens = 5};
  EXPECT_FALSE(escalate(c, p));  // off
  p.enabled = true;
  p.min_mean_logprob = -1.5;
  EXPECT_FALSE(escalate(c, p));
  p.min_mean_logprob = -0.5;
  EXPECT_TRUE(escalate(c, p));
  p.min_mean_logprob.reset();
  p.min_mean_margin = 0.5;
  EXPECT_FALSE(escalate(c, p));
  p.min_mean_margin = 2.0;
  EXPECT_TRUE(escalate(c, p));
  EXPECT_TRUE(escalate(Confidence{}, p));  // no tokens: no evidence
}

TEST(ConfidenceTest, ParsesTheCascadeObject) {
  const CascadePolicy p =
      parse_cascade_policy(nlohmann::json{{"min_mean_logprob", -1.2}, {"min_mean_margin", 0.7}});
  EXPECT_TRUE(p.enabled);
  EXPECT_DOUBLE_EQ(*p.min_mean_logprob, -1.2);
  EXPECT_DOUBLE_EQ(*p.min_mean_margin, 0.7);
  const auto fails = [](const nlohmann::json& j, const std::string& what) {
    try {
      parse_cascade_policy(j);
      ADD_FAILURE() << "accepted " << j.dump();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  fails(nlohmann::json::object(), "needs");
  fails(nlohmann::json::array(), "object");
  fails({{"min_mean_logprob", 0.5}}, "<= 0");
  fails({{"min_mean_margin", -1}}, ">= 0");
  fails({{"min_mean_logprob", "x"}}, "number");
  fails({{"min_logprob", -1}}, "cascade.min_logprob");
}

}  // namespace
}  // namespace folio::server
