// tests/server/route_head_test.cpp: routing with a learned head
// (server/head_route_job.h) and POST /v1/embeddings (server/embedding_job.h),
// over localhost against two FakeEngines whose pooled state of a prompt is
// fake_pooled(prompt).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fake_engine.h"
#include "http_client.h"
#include "route/learned_head.h"
#include "server/server.h"
#include "server_fixture.h"

namespace folio::server::testing {
namespace {

using nlohmann::json;

// A head over the fake's 3 values whose output is sigmoid(bias) whatever the
// prompt (weights 0), so a test picks the decision.
std::shared_ptr<const route::LearnedHead> constant_head(double bias) {
  auto h = std::make_shared<route::LearnedHead>();
  h->n_embd = 3;
  h->mean.assign(3, 0.0F);
  h->scale.assign(3, 1.0F);
  h->weights.assign(3, 0.0F);
  h->bias = bias;
  return h;
}

std::vector<float> decode_base64_floats(const std::string& s) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
  };
  std::vector<unsigned char> bytes;
  unsigned acc = 0;
  int bits = 0;
  for (char c : s) {
    const int v = val(c);
    if (v < 0) break;
    acc = (acc << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push_back(static_cast<unsigned char>((acc >> bits) & 0xFF));
    }
  }
  std::vector<float> out(bytes.size() / 4);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint32_t u = 0;
    for (int b = 0; b < 4; ++b)
      u |= std::uint32_t{bytes[i * 4 + static_cast<std::size_t>(b)]} << (8 * b);
    std::memcpy(&out[i], &u, 4);
  }
  return out;
}

class RouteHeadTest : public ::testing::Test {
 protected:
  void TearDown() override { stop(); }

  void stop() {
    if (server_) server_->shutdown(1.0);
    server_.reset();
    small_engine_.reset();
    large_engine_.reset();
  }

  void start(double head_bias, bool cascade = false) {
    stop();
    cfg_.host = "127.0.0.1";
    cfg_.port = 0;
    cfg_.shutdown_grace_s = 1;
    const tokenizer::Tokenizer& tok = test_tokenizer();
    script_ = tok.encode(kScriptText);
    small_ = std::make_unique<ModelContext>(
        make_model_context(tok, {"small-model"}, "/models/small.gguf", 64, kTestTemplate));
    small_->hidden_size = 3;
    large_ = std::make_unique<ModelContext>(
        make_model_context(tok, {"large-model"}, "/models/large.gguf", 512, kTestTemplate));
    small_engine_ = std::make_unique<FakeEngine>(options(64));
    FakeEngineOptions large = options(512);
    large.limits.max_num_seqs = 2;  // refuses n = 3, which the small model takes
    large_engine_ = std::make_unique<FakeEngine>(large);
    log_ = std::make_unique<Logger>(stderr, LogLevel::kWarn);
    route::RoutePolicy policy;
    policy.threshold = 0.5;
    policy.head = constant_head(head_bias);
    CascadePolicy c;
    c.enabled = cascade;
    server_ = std::make_unique<Server>(
        cfg_,
        std::vector<ModelSpec>{
            {.model = small_.get(), .engine = small_engine_.get(), .lacks = {"tools"}},
            {.model = large_.get(), .engine = large_engine_.get(), .lacks = {}}},
        std::vector<VirtualModelSpec>{{.name = "auto",
                                       .small = "small-model",
                                       .large = "large-model",
                                       .policy = policy,
                                       .cascade = c}},
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

// The head sends it large: the small model pooled the prompt first (one
// pooling request with the prompt the small model would have run), the
// large model answered, and the headers carry the head's score.
TEST_F(RouteHeadTest, HeadAboveThresholdRoutesLargeAfterPoolingOnSmall) {
  start(/*head_bias=*/3.0);
  const HttpResponse r = post("/v1/chat/completions", chat("auto", "Hello there"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["model"], "large-model");
  EXPECT_EQ(r.headers.at("x-folio-route-model"), "large-model");
  EXPECT_EQ(r.headers.at("x-folio-route-reason"), "score");
  char want[32];
  std::snprintf(want, sizeof want, "%.4f", 1 / (1 + std::exp(-3.0)));
  EXPECT_EQ(r.headers.at("x-folio-route-score"), want);
  const auto small_seen = small_engine_->submitted();
  ASSERT_EQ(small_seen.size(), 1u);
  EXPECT_TRUE(small_seen[0].pool);
  EXPECT_EQ(*small_seen[0].params.max_tokens, 1);
  const auto large_seen = large_engine_->submitted();
  ASSERT_EQ(large_seen.size(), 1u);
  EXPECT_FALSE(large_seen[0].pool);
}

TEST_F(RouteHeadTest, HeadBelowThresholdRoutesSmallOnThePooledPrompt) {
  start(/*head_bias=*/-3.0);
  const HttpResponse r = post("/v1/chat/completions", chat("auto", "Hello there"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["model"], "small-model");
  EXPECT_EQ(r.headers.at("x-folio-route-reason"), "score_below");
  const auto seen = small_engine_->submitted();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_TRUE(seen[0].pool);
  EXPECT_FALSE(seen[1].pool);
  EXPECT_EQ(seen[0].prompt, seen[1].prompt);  // the prefix cache serves the answer
  EXPECT_TRUE(large_engine_->submitted().empty());
}

TEST_F(RouteHeadTest, StreamsAndCascadesAfterTheHead) {
  start(/*head_bias=*/-3.0, /*cascade=*/true);
  json body = chat("auto", "Hello there");
  body["stream"] = true;
  const HttpResponse r = post("/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers.at("content-type"), "text/event-stream");
  EXPECT_EQ(r.headers.count("x-folio-route-model"), 1u);
  EXPECT_NE(r.body.find("data: [DONE]"), std::string::npos);
}

// A hard rule decides without the head: nothing is pooled.
TEST_F(RouteHeadTest, HardRulesSkipPooling) {
  start(/*head_bias=*/-3.0);
  std::string longer;
  for (int i = 0; i < 80; ++i) longer += "word ";  // beyond the small model's 64 positions
  const HttpResponse r = post("/v1/chat/completions", chat("auto", longer));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers.at("x-folio-route-reason"), "context");
  EXPECT_TRUE(small_engine_->submitted().empty());
}

// After the head picks large, a request the large model refuses is that
// model's 400, streamed or not.
TEST_F(RouteHeadTest, LateRefusalIsAnError) {
  start(/*head_bias=*/3.0);
  json body = chat("auto", "Hello there");
  body["n"] = 3;  // the large engine admits at most 2 sequences
  HttpResponse r = post("/v1/chat/completions", body);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("n = 3"), std::string::npos) << r.body;
  EXPECT_EQ(small_engine_->submitted().size(), 1u);  // pooled first: the refusal came late
  body["stream"] = true;
  r = post("/v1/chat/completions", body);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.headers.at("content-type"), "application/json");
}

TEST_F(RouteHeadTest, EmbeddingsAreTheNormalizedPooledMean) {
  start(/*head_bias=*/0.0);
  const std::vector<TokenId> ids = test_tokenizer().encode("Hello there, world");
  const HttpResponse r =
      post("/v1/embeddings", json{{"model", "small-model"}, {"input", json::array({ids, {5, 6}})}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json b = body_json(r);
  EXPECT_EQ(b["object"], "list");
  EXPECT_EQ(b["model"], "small-model");
  ASSERT_EQ(b["data"].size(), 2u);
  EXPECT_EQ(b["data"][1]["index"], 1);
  const auto want = route::l2_normalized(fake_pooled(ids));
  const auto got = b["data"][0]["embedding"].get<std::vector<float>>();
  ASSERT_EQ(got.size(), 3u);
  for (int i = 0; i < 3; ++i)
    EXPECT_FLOAT_EQ(got[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(i)]);
  EXPECT_EQ(b["usage"]["prompt_tokens"], ids.size() + 2);

  const HttpResponse b64 =
      post("/v1/embeddings",
           json{{"model", "small-model"}, {"input", ids}, {"encoding_format", "base64"}});
  ASSERT_EQ(b64.status, 200) << b64.body;
  EXPECT_EQ(decode_base64_floats(body_json(b64)["data"][0]["embedding"]), want);

  const HttpResponse chat_form = post(
      "/v1/embeddings", json{{"model", "small-model"},
                             {"messages", json::array({{{"role", "user"}, {"content", "Hi"}}})},
                             {"add_generation_prompt", true}});
  ASSERT_EQ(chat_form.status, 200) << chat_form.body;
  for (const auto& seen : small_engine_->submitted()) EXPECT_TRUE(seen.pool);
}

TEST_F(RouteHeadTest, EmbeddingsRefuseWhatTheyCannotDo) {
  start(/*head_bias=*/0.0);
  const auto status_of = [&](const json& body) { return post("/v1/embeddings", body); };
  const json msgs = json::array({{{"role", "user"}, {"content", "Hi"}}});
  HttpResponse r = status_of({{"model", "small-model"}, {"input", "a"}, {"messages", msgs}});
  EXPECT_EQ(r.status, 400);
  r = status_of({{"model", "small-model"}});
  EXPECT_EQ(r.status, 400);
  r = status_of({{"model", "small-model"}, {"input", "a"}, {"dimensions", 2}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("dimensions"), std::string::npos);
  r = status_of({{"model", "small-model"}, {"input", "a"}, {"encoding_format", "int8"}});
  EXPECT_EQ(r.status, 400);
  r = status_of({{"model", "small-model"}, {"input", "a"}, {"truncate", true}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("'truncate'"), std::string::npos);
  r = status_of({{"model", "small-model"}, {"input", "a"}, {"add_generation_prompt", true}});
  EXPECT_EQ(r.status, 400);
  r = status_of({{"model", "auto"}, {"input", "a"}});
  EXPECT_EQ(r.status, 400);
  r = status_of({{"model", "nope"}, {"input", "a"}});
  EXPECT_EQ(r.status, 404);
  r = status_of({{"model", "small-model"}, {"input", ""}});
  EXPECT_EQ(r.status, 400);
  EXPECT_TRUE(small_engine_->submitted().empty());
}

}  // namespace
}  // namespace folio::server::testing
