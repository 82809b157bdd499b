// The learned head: its file format (every refusal names the key), its score
// against the formula computed here by hand, normalization, the policy's
// blend with the feature score (hard rules still first), and the policy
// config's "head" / "head_weight".
#include "route/learned_head.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"
#include "route/policy.h"
#include "route/policy_config.h"

namespace folio::route {
namespace {

using nlohmann::json;

json head_json() {
  return json{{"format", "folio-route-head"},
              {"version", 1},
              {"n_embd", 3},
              {"mean", {0.1, -0.2, 0.0}},
              {"scale", {2.0, 1.0, 0.5}},
              {"weights", {1.5, -0.5, 3.0}},
              {"bias", -0.25},
              {"info", {{"label", "only large right"}}}};
}

std::string error_of(const json& j) {
  try {
    parse_learned_head(j.dump(), "h.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(LearnedHead, ScoreIsTheLogisticOfTheStandardizedUnitVector) {
  const LearnedHead h = parse_learned_head(head_json().dump(), "h.json");
  EXPECT_EQ(h.n_embd, 3u);
  EXPECT_EQ(h.info, R"({"label":"only large right"})");
  const float pooled[] = {3.0F, 0.0F, 4.0F};  // length 5: (0.6, 0, 0.8)
  const double z0 = (0.6 - 0.1) * 2.0, z1 = (0.0 + 0.2) * 1.0, z2 = (0.8 - 0.0) * 0.5;
  const double want = 1 / (1 + std::exp(-(-0.25 + 1.5 * z0 - 0.5 * z1 + 3.0 * z2)));
  EXPECT_NEAR(h.score(pooled), want, 1e-6);
  const float scaled[] = {30.0F, 0.0F, 40.0F};  // any length: normalized first
  EXPECT_NEAR(h.score(scaled), want, 1e-6);
  const float wrong[] = {1.0F, 2.0F};
  EXPECT_THROW(h.score(wrong), Error);
}

TEST(LearnedHead, L2Normalized) {
  const float v[] = {3.0F, 4.0F};
  const auto n = l2_normalized(v);
  EXPECT_FLOAT_EQ(n[0], 0.6F);
  EXPECT_FLOAT_EQ(n[1], 0.8F);
  const float zero[] = {0.0F, 0.0F};
  EXPECT_EQ(l2_normalized(zero), (std::vector<float>{0.0F, 0.0F}));
}

TEST(LearnedHead, RefusalsNameTheKey) {
  EXPECT_NE(error_of(json::array()).find("expected a JSON object"), std::string::npos);
  json j = head_json();
  j["extra"] = 1;
  EXPECT_NE(error_of(j).find("unknown key \"extra\""), std::string::npos);
  j = head_json();
  j.erase("bias");
  EXPECT_NE(error_of(j).find("missing key \"bias\""), std::string::npos);
  j = head_json();
  j["format"] = "other";
  EXPECT_NE(error_of(j).find("\"format\""), std::string::npos);
  j = head_json();
  j["version"] = 2;
  EXPECT_NE(error_of(j).find("\"version\" must be 1"), std::string::npos);
  j = head_json();
  j["n_embd"] = 0;
  EXPECT_NE(error_of(j).find("\"n_embd\""), std::string::npos);
  j = head_json();
  j["weights"] = {1.0, 2.0};
  EXPECT_NE(error_of(j).find("\"weights\" must be an array of n_embd (3)"), std::string::npos);
  j = head_json();
  j["scale"][1] = "x";
  EXPECT_NE(error_of(j).find("scale[1]"), std::string::npos);
  j = head_json();
  j["mean"][2] = 1e300;
  EXPECT_NE(error_of(j).find("mean[2]"), std::string::npos);
  j = head_json();
  j["info"] = "text";
  EXPECT_NE(error_of(j).find("\"info\" must be an object"), std::string::npos);
  try {
    parse_learned_head("{not json", "bad.json");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("route head bad.json: not valid JSON"), std::string::npos);
  }
  EXPECT_THROW(load_learned_head("/nonexistent/head.json"), Error);
}

TEST(LearnedHead, LoadsFromAFile) {
  const std::string path = ::testing::TempDir() + "/folio_route_head_test.json";
  std::ofstream(path) << head_json().dump();
  EXPECT_EQ(load_learned_head(path).n_embd, 3u);
}

RoutePolicy policy_with_head(double weight) {
  RoutePolicy p;
  p.threshold = 0.5;
  p.head = std::make_shared<const LearnedHead>(parse_learned_head(head_json().dump(), "h"));
  p.head_weight = weight;
  return p;
}

TEST(LearnedHead, PolicyBlendsTheHeadWithTheFeatureScore) {
  RouteRequest r;
  r.input.text = "hello";
  r.input.prompt_tokens = 10;
  const RoutePolicy none = policy_with_head(0.0);
  const double features = decide(r, none, {}).score;  // no head score given: features only
  r.head_score = 0.9;
  EXPECT_DOUBLE_EQ(decide(r, none, {}).score, features);  // weight 0
  const RouteDecision all = decide(r, policy_with_head(1.0), {});
  EXPECT_DOUBLE_EQ(all.score, 0.9);
  EXPECT_EQ(all.reason, "score");
  EXPECT_DOUBLE_EQ(all.feature_score, features);
  ASSERT_TRUE(all.head_score.has_value());
  const RouteDecision half = decide(r, policy_with_head(0.5), {});
  EXPECT_DOUBLE_EQ(half.score, 0.5 * features + 0.5 * 0.9);
  r.head_score = 0.1;
  EXPECT_EQ(decide(r, policy_with_head(1.0), {}).reason, "score_below");
  // A policy without a head ignores a head score; hard rules come first.
  RoutePolicy plain;
  plain.threshold = 0.5;
  EXPECT_DOUBLE_EQ(decide(r, plain, {}).score, features);
  r.fits_small = false;
  EXPECT_EQ(decide(r, policy_with_head(1.0), {}).reason, "context");
}

TEST(LearnedHead, PolicyConfigKeys) {
  PolicyConfig c =
      parse_policy_config(json{{"head", "h.json"}, {"head_weight", 0.7}, {"threshold", 0.4}});
  EXPECT_EQ(c.head_path, "h.json");
  EXPECT_DOUBLE_EQ(c.policy.head_weight, 0.7);
  EXPECT_EQ(c.policy.head, nullptr);  // the caller loads the file
  EXPECT_THROW(parse_policy_config(json{{"head", 3}}), Error);
  EXPECT_THROW(parse_policy_config(json{{"head", ""}}), Error);
  EXPECT_THROW(parse_policy_config(json{{"head", "h.json"}, {"head_weight", 1.5}}), Error);
  try {
    parse_policy_config(json{{"head_weight", 0.5}});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs a \"head\""), std::string::npos);
  }
}

}  // namespace
}  // namespace folio::route
