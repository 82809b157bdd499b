// tests/server/multi_model_test.cpp: one server, two models and the `auto`
// virtual model (server/served_model.h, server/model_routing.h), over
// localhost against two FakeEngines.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "fake_engine.h"
#include "http_client.h"
#include "server/server.h"
#include "server_fixture.h"

namespace folio::server::testing {
namespace {

using nlohmann::json;

constexpr std::int32_t kSmallLen = 64;
constexpr std::int32_t kLargeLen = 512;

class MultiModelTest : public ::testing::Test {
 protected:
  void SetUp() override { start({}); }
  void TearDown() override { stop(); }

  void stop() {
    if (server_) server_->shutdown(1.0);
    server_.reset();
    small_engine_.reset();
    large_engine_.reset();
  }

  void start(const std::vector<std::string>& small_lacks, double threshold = 0.3,
             CascadePolicy cascade = {}) {
    stop();
    cfg_.host = "127.0.0.1";
    cfg_.port = 0;
    cfg_.shutdown_grace_s = 1;
    const tokenizer::Tokenizer& tok = test_tokenizer();
    script_ = tok.encode(kScriptText);
    small_ = std::make_unique<ModelContext>(make_model_context(
        tok, {"small-model", "tiny"}, "/models/small.gguf", kSmallLen, kTestTemplate));
    large_ = std::make_unique<ModelContext>(
        make_model_context(tok, {"large-model"}, "/models/large.gguf", kLargeLen, kTestTemplate));
    small_engine_ = std::make_unique<FakeEngine>(options(kSmallLen));
    large_engine_ = std::make_unique<FakeEngine>(options(kLargeLen));
    log_ = std::make_unique<Logger>(stderr, LogLevel::kWarn);
    route::RoutePolicy policy;
    policy.threshold = threshold;
    server_ = std::make_unique<Server>(
        cfg_,
        std::vector<ModelSpec>{
            {.model = small_.get(), .engine = small_engine_.get(), .lacks = small_lacks},
            {.model = large_.get(), .engine = large_engine_.get(), .lacks = {}}},
        std::vector<VirtualModelSpec>{{.name = "auto",
                                       .small = "tiny",
                                       .large = "large-model",
                                       .policy = policy,
                                       .cascade = cascade}},
        *log_);
    port_ = server_->start();
  }

  FakeEngineOptions options(std::int32_t max_model_len) const {
    FakeEngineOptions o;
    o.script = script_;
    o.limits.max_model_len = max_model_len;
    o.limits.vocab_size = static_cast<std::int32_t>(test_tokenizer().vocab().size());
    return o;
  }

  HttpResponse post(const std::string& path, const json& body) {
    return HttpClient(port_).request("POST", path, body.dump());
  }
  HttpResponse get(const std::string& path) { return HttpClient(port_).request("GET", path); }

  // A streamed chat request to `auto`.
  HttpResponse stream_auto() {
    json body = chat("auto", "Hi");
    body["stream"] = true;
    return post("/v1/chat/completions", body);
  }

  static json chat(const std::string& model, const std::string& text) {
    return json{{"model", model},
                {"messages", json::array({{{"role", "user"}, {"content", text}}})},
                {"max_tokens", 4}};
  }

  ServerConfig cfg_;
  std::vector<TokenId> script_;
  std::unique_ptr<ModelContext> small_, large_;
  std::unique_ptr<FakeEngine> small_engine_, large_engine_;
  std::unique_ptr<Logger> log_;
  std::unique_ptr<Server> server_;
  std::uint16_t port_ = 0;
};

TEST_F(MultiModelTest, ModelsListsEveryConcreteAndVirtualName) {
  const HttpResponse r = get("/v1/models");
  ASSERT_EQ(r.status, 200);
  const json b = body_json(r);
  std::vector<std::string> ids;
  for (const json& m : b["data"]) ids.push_back(m["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"small-model", "tiny", "large-model", "auto"}));
  EXPECT_EQ(b["data"][0]["max_model_len"], kSmallLen);
  EXPECT_EQ(b["data"][2]["max_model_len"], kLargeLen);
  EXPECT_EQ(b["data"][3]["folio_route"]["small"], "small-model");
  EXPECT_EQ(b["data"][3]["folio_route"]["large"], "large-model");
}

TEST_F(MultiModelTest, RetrievesOneModelById) {
  HttpResponse r = get("/v1/models/large-model");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["id"], "large-model");
  EXPECT_EQ(body_json(r)["root"], "/models/large.gguf");
  r = get("/v1/models/tiny");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(body_json(r)["id"], "tiny");
  EXPECT_EQ(body_json(r)["max_model_len"], kSmallLen);
  r = get("/v1/models/au%74o");  // percent-encoded "auto"
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["id"], "auto");
  r = get("/v1/models/nope");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(body_json(r)["error"]["message"].get<std::string>().find(
                "small-model, tiny, large-model, auto"),
            std::string::npos)
      << r.body;
  EXPECT_EQ(HttpClient(port_).request("DELETE", "/v1/models/tiny").status, 405);
}

TEST_F(MultiModelTest, EachRequestGoesToTheModelItNames) {
  HttpResponse r = post("/v1/chat/completions", chat("large-model", "hi"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["model"], "large-model");
  EXPECT_EQ(large_engine_->submitted().size(), 1u);
  EXPECT_EQ(small_engine_->submitted().size(), 0u);
  EXPECT_EQ(r.headers.count("x-folio-route-model"), 0u);  // a concrete name is not routed
  r = post("/v1/completions", json{{"model", "tiny"}, {"prompt", "hi"}, {"max_tokens", 2}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["model"], "tiny");
  EXPECT_EQ(small_engine_->submitted().size(), 1u);
  // No model named: the first.
  r = post("/v1/completions", json{{"prompt", "hi"}, {"max_tokens", 2}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["model"], "small-model");
  r = post("/v1/chat/completions", chat("gpt-4", "hi"));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(body_json(r)["error"]["param"], "model");
  EXPECT_NE(r.body.find("large-model"), std::string::npos);
}

TEST_F(MultiModelTest, AutoSendsAnEasyPromptToTheSmallModel) {
  const HttpResponse r = post("/v1/chat/completions", chat("auto", "Hi there"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["model"], "small-model");
  EXPECT_EQ(r.headers.at("x-folio-route-model"), "small-model");
  EXPECT_EQ(r.headers.at("x-folio-route-reason"), "score_below");
  EXPECT_LT(std::stod(r.headers.at("x-folio-route-score")), 0.3);
  EXPECT_EQ(small_engine_->submitted().size(), 1u);
  EXPECT_EQ(large_engine_->submitted().size(), 0u);
}

TEST_F(MultiModelTest, AutoSendsAHardPromptToTheLargeModel) {
  const std::string hard =
      "Prove step by step that the algorithm is correct, then derive its complexity and "
      "explain why: def f(x):\n    return x * 2\nSolve 12*7 + 3^2 = ? and compare.";
  const HttpResponse r = post("/v1/chat/completions", chat("auto", hard));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["model"], "large-model");
  EXPECT_EQ(r.headers.at("x-folio-route-reason"), "score");
  EXPECT_GE(std::stod(r.headers.at("x-folio-route-score")), 0.3);
  EXPECT_EQ(large_engine_->submitted().size(), 1u);
}

TEST_F(MultiModelTest, APromptTooLongForTheSmallContextGoesLarge) {
  std::string text;
  for (int i = 0; i < 80; ++i) text += "hello ";  // > 64 tokens
  const HttpResponse r = post("/v1/chat/completions", chat("auto", text));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers.at("x-folio-route-model"), "large-model");
  EXPECT_EQ(r.headers.at("x-folio-route-reason"), "context");
}

TEST_F(MultiModelTest, AFeatureTheSmallModelLacksGoesLarge) {
  start({"logprobs"});
  json body = chat("auto", "Hi");
  body["logprobs"] = true;
  HttpResponse r = post("/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers.at("x-folio-route-reason"), "feature:logprobs");
  EXPECT_EQ(body_json(r)["model"], "large-model");
  // Naming the small model directly still works.
  body["model"] = "tiny";
  r = post("/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["model"], "tiny");
}

TEST_F(MultiModelTest, AutoStreamsWithTheRouteHeaders) {
  const HttpResponse r = stream_auto();
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers.at("content-type"), "text/event-stream");
  EXPECT_EQ(r.headers.at("x-folio-route-model"), "small-model");
  EXPECT_NE(r.body.find("\"model\":\"small-model\""), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("data: [DONE]"), std::string::npos);
}

TEST_F(MultiModelTest, AnInvalidRequestIsRefusedWhateverTheRoute) {
  json body = chat("auto", "Hi");
  body["temperature"] = -1;
  HttpResponse r = post("/v1/chat/completions", body);
  EXPECT_EQ(r.status, 400) << r.body;
  body = chat("auto", "Hi");
  body["frobnicate"] = 1;
  r = post("/v1/chat/completions", body);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(body_json(r)["error"]["param"], "frobnicate");
  body["model"] = 7;
  r = post("/v1/chat/completions", body);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(small_engine_->submitted().size() + large_engine_->submitted().size(), 0u);
}

TEST_F(MultiModelTest, MetricsCarryEveryModelAndTheRouter) {
  ASSERT_EQ(post("/v1/chat/completions", chat("auto", "Hi")).status, 200);
  ASSERT_EQ(post("/v1/chat/completions", chat("large-model", "Hi")).status, 200);
  const HttpResponse r = get("/metrics");
  ASSERT_EQ(r.status, 200);
  const std::string& m = r.body;
  const auto count = [&](const std::string& s) {
    std::size_t n = 0;
    for (auto p = m.find(s); p != std::string::npos; p = m.find(s, p + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("# TYPE folio:num_requests_running gauge"), 1u);
  EXPECT_EQ(count("folio:num_requests_running{model_name=\"small-model\"}"), 1u);
  EXPECT_EQ(count("folio:num_requests_running{model_name=\"large-model\"}"), 1u);
  // A family's samples follow its TYPE line without another family between.
  const auto type = m.find("# TYPE folio:num_requests_running gauge");
  const auto small = m.find("folio:num_requests_running{model_name=\"small-model\"}");
  const auto large = m.find("folio:num_requests_running{model_name=\"large-model\"}");
  const auto next = m.find("# HELP", type);
  EXPECT_TRUE(type < small && small < large && large < next);
  EXPECT_EQ(count("folio:route_decisions_total{virtual_model=\"auto\",model_name=\"small-model\","
                  "reason=\"score_below\"} 1"),
            1u)
      << m;
  EXPECT_EQ(count("folio:route_score_count{virtual_model=\"auto\"} 1"), 1u) << m;
  EXPECT_EQ(count("folio:request_success_total{finished_reason=\"length\",model_name=\"large-"
                  "model\"} 1"),
            1u)
      << m;
}

TEST_F(MultiModelTest, HealthReflectsEveryEngine) {
  EXPECT_EQ(get("/health").status, 200);
  large_engine_->set_healthy(false);
  const HttpResponse r = get("/health");
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body.find("large-model"), std::string::npos) << r.body;
}

TEST_F(MultiModelTest, TokenizeNeedsAConcreteModel) {
  HttpResponse r = post("/tokenize", json{{"model", "large-model"}, {"prompt", "hello world"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["max_model_len"], kLargeLen);
  r = post("/tokenize", json{{"model", "auto"}, {"prompt", "hello"}});
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(body_json(r)["error"]["param"], "model");
  r = post("/detokenize", json{{"model", "nope"}, {"tokens", {1, 2}}});
  EXPECT_EQ(r.status, 404);
}

// The fake engine's tokens have logprob -0.5 and a top-1/top-2 margin of 1.
CascadePolicy cascade_below(double min_mean_logprob) {
  CascadePolicy c;
  c.enabled = true;
  c.min_mean_logprob = min_mean_logprob;
  return c;
}

TEST_F(MultiModelTest, ACascadeKeepsAConfidentSmallAnswer) {
  start({}, 0.3, cascade_below(-0.6));
  const HttpResponse r = post("/v1/chat/completions", chat("auto", "Hi"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["model"], "small-model");
  EXPECT_EQ(r.headers.at("x-folio-route-model"), "small-model");
  EXPECT_EQ(r.headers.at("x-folio-route-reason"), "score_below");
  EXPECT_TRUE(body_json(r)["choices"][0]["logprobs"].is_null()) << r.body;  // not asked for
  ASSERT_EQ(small_engine_->submitted().size(), 1u);
  EXPECT_EQ(small_engine_->submitted()[0].params.logprobs, 2);  // the probe's top-2
  EXPECT_EQ(large_engine_->submitted().size(), 0u);
  EXPECT_NE(
      get("/metrics").body.find("folio:route_cascade_escalations_total{virtual_model=\"auto\"} 0"),
      std::string::npos);
}

TEST_F(MultiModelTest, ACascadeRerunsAnUnsureSmallAnswerOnTheLargeModel) {
  start({}, 0.3, cascade_below(-0.4));
  const HttpResponse r = post("/v1/chat/completions", chat("auto", "Hi"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["model"], "large-model");
  EXPECT_EQ(r.headers.at("x-folio-route-model"), "large-model");
  EXPECT_EQ(r.headers.at("x-folio-route-reason"), "cascade");
  EXPECT_EQ(small_engine_->submitted().size(), 1u);
  ASSERT_EQ(large_engine_->submitted().size(), 1u);
  EXPECT_FALSE(large_engine_->submitted()[0].params.logprobs.has_value());
  const std::string m = get("/metrics").body;
  EXPECT_NE(m.find("folio:route_cascade_escalations_total{virtual_model=\"auto\"} 1"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("folio:route_cascade_wasted_tokens_total{virtual_model=\"auto\"} 4"),
            std::string::npos)
      << m;
}

TEST_F(MultiModelTest, AStreamedCascadeSendsOnlyTheChosenAnswer) {
  start({}, 0.3, cascade_below(-0.4));
  const HttpResponse r = stream_auto();
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers.at("x-folio-route-model"), "large-model");
  EXPECT_EQ(r.headers.at("x-folio-route-reason"), "cascade");
  EXPECT_EQ(r.body.find("small-model"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("\"model\":\"large-model\""), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("data: [DONE]"), r.body.rfind("data: [DONE]"));  // one stream
}

TEST_F(MultiModelTest, ACascadeShowsOnlyTheLogprobsTheClientAskedFor) {
  CascadePolicy c;
  c.enabled = true;
  c.min_mean_margin = 0.5;  // the fake's margin is 1: kept
  start({}, 0.3, c);
  json body = chat("auto", "Hi");
  body["logprobs"] = true;  // top_logprobs 0
  const HttpResponse r = post("/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["model"], "small-model");
  const json b = body_json(r);
  const json& content = b["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), 4u) << r.body;
  for (const json& t : content) EXPECT_TRUE(t["top_logprobs"].empty()) << r.body;
}

TEST(ServerContextTest, RefusesInconsistentModelLists) {
  const tokenizer::Tokenizer& tok = test_tokenizer();
  const ModelContext a = make_model_context(tok, {"a"}, "a.gguf", 64, std::nullopt);
  const ModelContext b = make_model_context(tok, {"b", "a"}, "b.gguf", 64, std::nullopt);
  const ModelContext c = make_model_context(tok, {"c"}, "c.gguf", 64, std::nullopt);
  FakeEngine e(FakeEngineOptions{});
  const Logger log(stderr, LogLevel::kWarn);
  const ServerConfig cfg;
  const auto spec = [&](const ModelContext& m) {
    return ModelSpec{.model = &m, .engine = &e, .lacks = {}};
  };
  EXPECT_THROW(Server(cfg, {}, {}, log), Error);
  EXPECT_THROW(Server(cfg, {spec(a), spec(b)}, {}, log), Error);  // `a` twice
  EXPECT_THROW(
      Server(cfg, {spec(a), spec(c)},
             {{.name = "a", .small = "a", .large = "c", .policy = {}, .cascade = {}}}, log),
      Error);  // a virtual name that is a concrete one
  EXPECT_THROW(
      Server(cfg, {spec(a), spec(c)},
             {{.name = "auto", .small = "a", .large = "x", .policy = {}, .cascade = {}}}, log),
      Error);  // unknown large
  EXPECT_THROW(
      Server(cfg, {spec(a), spec(c)},
             {{.name = "auto", .small = "a", .large = "a", .policy = {}, .cascade = {}}}, log),
      Error);  // the same model twice
  EXPECT_NO_THROW(
      Server(cfg, {spec(a), spec(c)},
             {{.name = "auto", .small = "a", .large = "c", .policy = {}, .cascade = {}}}, log));
}

}  // namespace
}  // namespace folio::server::testing
