// tests/server/endpoints_test.cpp: info endpoints, routing, auth and error shapes.
#include <cstdlib>

#include "server_fixture.h"

namespace folio::server::testing {
namespace {

using nlohmann::json;

// Every error has OpenAI's shape and the status in `code`.
void expect_error(const HttpResponse& r, int status) {
  EXPECT_EQ(r.status, status) << r.body;
  const json j = body_json(r);
  ASSERT_TRUE(j.contains("error")) << r.body;
  EXPECT_TRUE(j["error"]["message"].is_string());
  EXPECT_TRUE(j["error"]["type"].is_string());
  EXPECT_TRUE(j["error"].contains("param"));
  EXPECT_EQ(j["error"]["code"], status);
}

TEST_F(ServerTest, ModelsListsServedNames) {
  const auto r = get("/v1/models");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.headers.at("content-type"), "application/json");
  const json j = body_json(r);
  EXPECT_EQ(j["object"], "list");
  ASSERT_EQ(j["data"].size(), 2u);
  EXPECT_EQ(j["data"][0]["id"], "test-model");
  EXPECT_EQ(j["data"][0]["object"], "model");
  EXPECT_EQ(j["data"][0]["max_model_len"], 256);
  EXPECT_EQ(j["data"][1]["id"], "alias");
}

TEST_F(ServerTest, HealthFollowsEngine) {
  EXPECT_EQ(get("/health").status, 200);
  engine_->set_healthy(false);
  EXPECT_EQ(get("/health").status, 503);
  engine_->set_healthy(true);
  EXPECT_EQ(get("/health").status, 200);
}

// Liveness checks only that the server answers: a stalled engine is for
// /health (readiness) to report, not a reason to restart the process.
TEST_F(ServerTest, LivezIgnoresTheEngine) {
  const auto r = get("/livez");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");
  engine_->set_healthy(false);
  EXPECT_EQ(get("/livez").status, 200);
  EXPECT_EQ(get("/health").status, 503);
  engine_->set_healthy(true);
  EXPECT_EQ(post("/livez", json::object()).status, 405);
}

TEST_F(ServerTest, Version) {
  const auto r = get("/version");
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(body_json(r)["version"].is_string());
}

// Every field of /tokenize and /detokenize is read or refused, never ignored.
TEST_F(ServerTest, TokenizeRefusesWhatItWouldIgnore) {
  const json msgs = json::array({{{"role", "user"}, {"content", "hi"}}});
  const auto both = post("/tokenize", {{"prompt", "hi"}, {"messages", msgs}});
  EXPECT_EQ(both.status, 400);
  EXPECT_EQ(body_json(both)["error"]["param"], "prompt");
  const auto gen = post("/tokenize", {{"prompt", "hi"}, {"add_generation_prompt", true}});
  EXPECT_EQ(gen.status, 400);
  EXPECT_EQ(body_json(gen)["error"]["param"], "add_generation_prompt");
  const auto extra = post("/tokenize", {{"prompt", "hi"}, {"return_token_strs", true}});
  EXPECT_EQ(extra.status, 400);
  EXPECT_EQ(body_json(extra)["error"]["param"], "return_token_strs");
  const auto chat_extra = post("/tokenize", {{"messages", msgs}, {"tools", json::array()}});
  EXPECT_EQ(chat_extra.status, 400);
  EXPECT_EQ(body_json(chat_extra)["error"]["param"], "tools");
  const auto detok = post("/detokenize", {{"tokens", {1, 2}}, {"skip_special_tokens", true}});
  EXPECT_EQ(detok.status, 400);
  EXPECT_EQ(body_json(detok)["error"]["param"], "skip_special_tokens");
  EXPECT_EQ(post("/tokenize", {{"messages", msgs}, {"add_generation_prompt", false}}).status, 200);
}

TEST_F(ServerTest, TokenizeAndDetokenizeRoundTrip) {
  const auto t = post("/tokenize", {{"prompt", "Hello world"}});
  ASSERT_EQ(t.status, 200) << t.body;
  const json j = body_json(t);
  EXPECT_EQ(j["tokens"].get<std::vector<TokenId>>(), test_tokenizer().encode("Hello world"));
  EXPECT_EQ(j["count"], j["tokens"].size());
  EXPECT_EQ(j["max_model_len"], 256);
  const auto d = post("/detokenize", {{"tokens", j["tokens"]}});
  ASSERT_EQ(d.status, 200);
  EXPECT_EQ(body_json(d)["prompt"], "Hello world");
  const auto chat = post("/tokenize", {{"messages", {{{"role", "user"}, {"content", "hi"}}}}});
  ASSERT_EQ(chat.status, 200);
  EXPECT_EQ(body_json(chat)["tokens"].get<std::vector<TokenId>>(),
            test_tokenizer().encode("<|user|>hi\n<|assistant|>", {.parse_special = true}));
  expect_error(post("/detokenize", {{"tokens", {1, -5}}}), 400);
  expect_error(post("/detokenize", {{"tokens", {99999999}}}), 400);
}

TEST_F(ServerTest, UnknownRouteIs404AndWrongMethodIs405) {
  expect_error(get("/v1/nope"), 404);
  expect_error(get("/nope"), 404);
  const auto r = get("/v1/completions");
  expect_error(r, 405);
  EXPECT_EQ(r.headers.at("allow"), "POST");
  expect_error(post("/v1/models", json::object()), 405);
}

TEST_F(ServerTest, UnknownModelIs404) {
  const auto r = post("/v1/completions", {{"model", "gpt-4"}, {"prompt", "hi"}, {"max_tokens", 2}});
  expect_error(r, 404);
  EXPECT_NE(body_json(r)["error"]["message"].get<std::string>().find("gpt-4"), std::string::npos);
  // An alias from --served-model-name is served and echoed back.
  const auto ok =
      post("/v1/completions", {{"model", "alias"}, {"prompt", "hi"}, {"max_tokens", 2}});
  ASSERT_EQ(ok.status, 200);
  EXPECT_EQ(body_json(ok)["model"], "alias");
}

TEST_F(ServerTest, ApiKeyGuardsEveryV1Route) {
  ServerConfig cfg = default_config();
  cfg.api_keys = {"sekret"};
  restart(cfg, default_engine());
  expect_error(get("/v1/models"), 401);
  expect_error(get("/v1/models", {"Authorization: Bearer wrong"}), 401);
  expect_error(get("/v1/models", {"Authorization: sekret"}), 401);
  expect_error(post("/v1/completions", {{"prompt", "x"}}), 401);
  expect_error(post("/v1/chat/completions", {{"messages", json::array()}}), 401);
  expect_error(get("/v1/unknown"), 401);  // nothing about routes is revealed without the key
  EXPECT_EQ(get("/v1/models", {"Authorization: Bearer sekret"}).status, 200);
  EXPECT_EQ(get("/health").status, 200);  // not a /v1 route
  EXPECT_EQ(get("/metrics").status, 200);
}

TEST_F(ServerTest, ApiKeyFromEnvironment) {
  ::setenv("FOLIO_API_KEY", "from-env", 1);
  restart(default_config(), default_engine());
  ::unsetenv("FOLIO_API_KEY");
  expect_error(get("/v1/models"), 401);
  EXPECT_EQ(get("/v1/models", {"Authorization: Bearer from-env"}).status, 200);
}

TEST_F(ServerTest, BadBodiesAre400NeverCrash) {
  const std::vector<std::string> bodies = {
      "",
      "{",
      "[]",
      "null",
      "42",
      "{\"prompt\": }",
      "{\"prompt\": \"\xff\xfe\"}",                   // invalid UTF-8
      std::string(200, '[') + std::string(200, ']'),  // deep nesting
      "{\"a\":" + std::string(100, '{') + std::string(100, '}') + "}",
      "{\"prompt\": \"hi\", \"max_tokens\": 1e400}",
      "{\"prompt\": \"hi\", \"max_tokens\": 123456789012345678901234567890}",
      "{\"prompt\": \"hi\", \"max_tokens\": -1}",
      "{\"prompt\": \"hi\", \"max_tokens\": 2.5}",
      "{\"prompt\": \"hi\", \"temperature\": \"hot\"}",
      "{\"prompt\": \"hi\", \"temperature\": -1}",
      "{\"prompt\": \"hi\", \"top_p\": 0}",
      "{\"prompt\": \"hi\", \"n\": 0}",
      "{\"prompt\": \"hi\", \"n\": 100000}",
      "{\"prompt\": \"hi\", \"stop\": 5}",
      "{\"prompt\": \"hi\", \"stop\": [\"\"]}",
      "{\"prompt\": \"hi\", \"logit_bias\": {\"x\": 1}}",
      "{\"prompt\": \"hi\", \"logit_bias\": {\"1\": 1000}}",
      "{\"prompt\": \"hi\", \"seed\": \"s\"}",
      "{\"prompt\": \"hi\", \"stop_token_ids\": [-1]}",
      "{\"prompt\": [1, \"a\"]}",
      "{\"prompt\": [[1], \"a\"]}",
      "{\"prompt\": [99999999]}",
      "{\"prompt\": {}}",
      "{\"prompt\": \"hi\", \"stream\": \"yes\"}",
      "{\"prompt\": \"hi\", \"stream_options\": {}}",
      "{\"prompt\": \"hi\", \"min_tokens\": 10, \"max_tokens\": 5}",
      "{\"prompt\": \"hi\", \"presence_penalty\": 3}",
      "{\"prompt\": \"hi\", \"repetition_penalty\": 0}",
  };
  for (const auto& b : bodies) {
    HttpClient c(port_);
    const auto r = c.request("POST", "/v1/completions", b);
    SCOPED_TRACE(b.substr(0, 80));
    expect_error(r, 400);
  }
  const std::vector<std::string> chat_bodies = {
      "{}",
      "{\"messages\": []}",
      "{\"messages\": \"hi\"}",
      "{\"messages\": [{\"role\": \"wizard\", \"content\": \"x\"}]}",
      "{\"messages\": [{\"content\": \"x\"}]}",
      "{\"messages\": [{\"role\": \"user\", \"content\": 5}]}",
      "{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"image_url\"}]}]}",
      "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"top_logprobs\": 2}",
      R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true, "top_logprobs": 21})",
  };
  for (const auto& b : chat_bodies) {
    HttpClient c(port_);
    SCOPED_TRACE(b);
    expect_error(c.request("POST", "/v1/chat/completions", b), 400);
  }
  EXPECT_EQ(get("/health").status, 200);  // still alive
}

TEST_F(ServerTest, MetricsExposeVllmNamesAndStages) {
  ASSERT_EQ(post("/v1/completions", {{"prompt", "hi"}, {"max_tokens", 3}}).status, 200);
  const auto r = get("/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.headers.at("content-type").rfind("text/plain; version=0.0.4", 0), 0u);
  const std::string& m = r.body;
  const std::string lbl = "model_name=\"test-model\"";
  for (const char* name :
       {"folio:num_requests_running{", "folio:num_requests_waiting{", "folio:kv_cache_usage_perc{",
        "folio:prefix_cache_queries_total{", "folio:prefix_cache_hits_total{",
        "folio:num_preemptions_total{", "folio:time_to_first_token_seconds_bucket{",
        "folio:inter_token_latency_seconds_count{", "folio:e2e_request_latency_seconds_sum{",
        "folio:request_queue_time_seconds_count{", "folio:request_prefill_time_seconds_count{",
        "folio:request_decode_time_seconds_count{"}) {
    EXPECT_NE(m.find(name), std::string::npos) << name;
  }
  const std::size_t prompt = test_tokenizer().encode("hi", {.add_special = true}).size();
  EXPECT_NE(m.find("folio:prompt_tokens_total{" + lbl + "} " + std::to_string(prompt) + "\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("folio:generation_tokens_total{" + lbl + "} 3\n"), std::string::npos);
  EXPECT_NE(m.find("folio:request_success_total{finished_reason=\"length\"," + lbl + "} 1\n"),
            std::string::npos);
  EXPECT_NE(m.find("folio:e2e_request_latency_seconds_count{" + lbl + "} 1\n"), std::string::npos);
  EXPECT_NE(m.find("folio:time_to_first_token_seconds_bucket{le=\"+Inf\"," + lbl + "} 1\n"),
            std::string::npos);
  EXPECT_NE(m.find("folio:prefix_cache_hits_total{" + lbl + "} 25\n"), std::string::npos);
  for (const char* stage :
       {"tokenize", "schedule", "attention", "ffn", "sampling", "detokenize", "model_load"}) {
    EXPECT_NE(m.find("folio:stage_seconds_total{" + lbl + ",stage=\"" + stage + "\"}"),
              std::string::npos)
        << stage;
  }
  EXPECT_NE(m.find("stage=\"ffn\"} 2\n"), std::string::npos);
  EXPECT_NE(m.find("stage=\"model_load\"} 0.75\n"), std::string::npos);
  // Detokenized once per token, by the output processor: one series, not two added up.
  EXPECT_EQ(m.find("stage=\"detokenize\"}"), m.rfind("stage=\"detokenize\"}"));
  EXPECT_NE(m.find("# TYPE folio:time_to_first_token_seconds histogram"), std::string::npos);
}

}  // namespace
}  // namespace folio::server::testing
