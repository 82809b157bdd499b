// parse_policy_config: defaults, every key, and every error path naming its
// key.
#include "route/policy_config.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"

namespace folio::route {
namespace {

using nlohmann::json;

// The error message parse_policy_config throws for `text`, or "" when it parses.
std::string error_of(const std::string& text) {
  try {
    parse_policy_config(json::parse(text));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The error for `text` names `needle` and starts with "route policy:".
void expect_error(const std::string& text, const std::string& needle) {
  const std::string e = error_of(text);
  EXPECT_EQ(e.rfind("route policy: ", 0), 0u) << text << " -> " << e;
  EXPECT_NE(e.find(needle), std::string::npos) << text << " -> " << e;
}

TEST(PolicyConfig, EmptyObjectKeepsTheDefaults) {
  const PolicyConfig c = parse_policy_config(json::object());
  EXPECT_FALSE(c.large_share.has_value());
  EXPECT_EQ(c.policy.threshold, kDefaultThreshold);
  EXPECT_EQ(c.policy.load_wait_bound_s, 0);
  EXPECT_EQ(c.policy.load_threshold_raise, 0.2);
  EXPECT_EQ(c.policy.features.keywords, default_keywords());
  EXPECT_DOUBLE_EQ(c.policy.weights.prompt_tokens, 0.25);
  EXPECT_DOUBLE_EQ(c.policy.weights.turns, 0.05);
  EXPECT_EQ(c.policy.weights.code_scale, 4);
}

TEST(PolicyConfig, EveryKey) {
  const PolicyConfig c = parse_policy_config(json::parse(R"({
    "large_share": 0.3,
    "weights": {"prompt_tokens": 0.3, "keywords": 0.2, "code": 0.2, "math": 0.2,
                "turns": 0.05, "max_tokens": 0.05},
    "scales": {"prompt_tokens": 1024, "keywords": 1},
    "keywords": ["prove", "Kubernetes"],
    "load_wait_bound_s": 2.0, "load_threshold_raise": 0.25})"));
  ASSERT_TRUE(c.large_share.has_value());
  EXPECT_EQ(*c.large_share, 0.3);
  const RoutePolicy& p = c.policy;
  EXPECT_DOUBLE_EQ(p.weights.prompt_tokens, 0.3);
  EXPECT_DOUBLE_EQ(p.weights.max_tokens, 0.05);
  EXPECT_EQ(p.weights.prompt_tokens_scale, 1024);
  EXPECT_EQ(p.weights.keywords_scale, 1);
  EXPECT_EQ(p.weights.code_scale, 4);  // not named: the default
  EXPECT_EQ(p.features.keywords, (std::vector<std::string>{"prove", "Kubernetes"}));
  EXPECT_EQ(p.load_wait_bound_s, 2.0);
  EXPECT_EQ(p.load_threshold_raise, 0.25);

  const PolicyConfig t = parse_policy_config(json::parse(R"({"threshold": 0.4})"));
  EXPECT_EQ(t.policy.threshold, 0.4);
  EXPECT_FALSE(t.large_share.has_value());
}

TEST(PolicyConfig, WeightsAreTheWholeVectorAndNormalized) {
  const PolicyConfig c = parse_policy_config(json::parse(R"({"weights": {"code": 2, "math": 6}})"));
  EXPECT_DOUBLE_EQ(c.policy.weights.code, 0.25);
  EXPECT_DOUBLE_EQ(c.policy.weights.math, 0.75);
  EXPECT_EQ(c.policy.weights.prompt_tokens, 0);
  EXPECT_EQ(c.policy.weights.keywords, 0);
  EXPECT_EQ(parse_policy_config(json::parse(R"({"weights": {"turns": 1}})")).policy.weights.turns,
            1.0);
  EXPECT_EQ(parse_policy_config(json::parse(R"({"keywords": []})")).policy.features.keywords,
            std::vector<std::string>{});
}

TEST(PolicyConfig, UnknownKeysAreNamed) {
  expect_error(R"({"treshold": 0.5})", "unknown key \"treshold\"");
  expect_error(R"({"weights": {"length": 1}})", "unknown key \"weights.length\"");
  expect_error(R"({"scales": {"code": 2, "tokens": 3}})", "unknown key \"scales.tokens\"");
}

TEST(PolicyConfig, WrongTypesAreNamed) {
  expect_error("[]", "expected a JSON object");
  expect_error("0.5", "expected a JSON object");
  expect_error(R"({"threshold": "0.5"})", "\"threshold\" must be a number in [0, 1]");
  expect_error(R"({"threshold": true})", "\"threshold\" must be a number in [0, 1]");
  expect_error(R"({"large_share": null})", "\"large_share\" must be a number in [0, 1]");
  expect_error(R"({"weights": [1, 2]})", "\"weights\" must be an object");
  expect_error(R"({"scales": 3})", "\"scales\" must be an object");
  expect_error(R"({"weights": {"code": "high"}})", "\"weights.code\" must be a number >= 0");
  expect_error(R"({"scales": {"math": false}})", "\"scales.math\" must be a number > 0");
  expect_error(R"({"keywords": "prove"})", "\"keywords\" must be an array of strings");
  expect_error(R"({"keywords": ["prove", 3]})", "\"keywords[1]\" must be a string");
  expect_error(R"({"load_wait_bound_s": "2s"})", "\"load_wait_bound_s\" must be a number");
  expect_error(R"({"load_threshold_raise": [0.2]})", "\"load_threshold_raise\" must be");
}

TEST(PolicyConfig, OutOfRangeValuesAreNamed) {
  expect_error(R"({"threshold": 1.5})", "\"threshold\" must be a number in [0, 1], got 1.5");
  expect_error(R"({"threshold": -0.1})", "\"threshold\"");
  expect_error(R"({"large_share": 1.01})", "\"large_share\" must be a number in [0, 1]");
  expect_error(R"({"large_share": -1})", "\"large_share\"");
  expect_error(R"({"weights": {"code": -0.2}})", "\"weights.code\" must be a number >= 0");
  expect_error(R"({"weights": {"code": 0, "math": 0}})", "\"weights\" are all 0");
  expect_error(R"({"weights": {}})", "\"weights\" are all 0");
  expect_error(R"({"scales": {"code": 0}})", "\"scales.code\" must be a number > 0");
  expect_error(R"({"scales": {"prompt_tokens": -512}})", "\"scales.prompt_tokens\"");
  expect_error(R"({"keywords": ["prove", "  "]})", "\"keywords[1]\" must be a non-blank string");
  expect_error(R"({"keywords": [""]})", "\"keywords[0]\"");
  expect_error(R"({"load_wait_bound_s": -1})",
               "\"load_wait_bound_s\" must be a number of seconds >= 0");
  expect_error(R"({"load_threshold_raise": 1.5})",
               "\"load_threshold_raise\" must be a number in [0, 1]");
  expect_error(R"({"load_threshold_raise": -0.1})", "\"load_threshold_raise\"");
}

TEST(PolicyConfig, ThresholdAndLargeShareAreExclusive) {
  expect_error(R"({"threshold": 0.4, "large_share": 0.3})", "mutually exclusive");
  EXPECT_EQ(error_of(R"({"large_share": 0})"), "");
  EXPECT_EQ(error_of(R"({"large_share": 1, "load_wait_bound_s": 0})"), "");
}

}  // namespace
}  // namespace folio::route
