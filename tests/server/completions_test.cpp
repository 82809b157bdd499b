// tests/server/completions_test.cpp: /v1/completions against the fake engine.
#include "server_fixture.h"

namespace folio::server::testing {
namespace {

using nlohmann::json;

TEST_F(ServerTest, CompletionTextUsageAndShape) {
  const auto r = post("/v1/completions", {{"prompt", "Say hi"}, {"max_tokens", 5}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = body_json(r);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["id"].get<std::string>().rfind("cmpl-", 0), 0u);
  EXPECT_EQ(j["model"], "test-model");
  EXPECT_TRUE(j["created"].is_number_integer());
  ASSERT_EQ(j["choices"].size(), 1u);
  EXPECT_EQ(j["choices"][0]["index"], 0);
  EXPECT_EQ(j["choices"][0]["text"], script_text(5));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(j["choices"][0]["logprobs"].is_null());
  const auto prompt = test_tokenizer().encode("Say hi", {.add_special = true});
  EXPECT_EQ(j["usage"]["prompt_tokens"], prompt.size());
  EXPECT_EQ(j["usage"]["completion_tokens"], 5);
  EXPECT_EQ(j["usage"]["total_tokens"], prompt.size() + 5);
  EXPECT_EQ(j["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  const auto sub = engine_->submitted();
  ASSERT_EQ(sub.size(), 1u);
  EXPECT_EQ(sub[0].prompt, prompt);
  EXPECT_EQ(sub[0].params.max_tokens, 5);
}

TEST_F(ServerTest, CachedTokensReported) {
  FakeEngineOptions o = default_engine();
  o.cached_tokens = 2;
  restart(default_config(), o);
  const json j = body_json(post("/v1/completions", {{"prompt", "a b c d"}, {"max_tokens", 1}}));
  EXPECT_EQ(j["usage"]["prompt_tokens_details"]["cached_tokens"], 2);
}

TEST_F(ServerTest, PromptForms) {
  const auto ids = test_tokenizer().encode("one two");
  // list of strings -> one choice per prompt, in order
  json j = body_json(post("/v1/completions", {{"prompt", {"a", "b"}}, {"max_tokens", 2}}));
  ASSERT_EQ(j["choices"].size(), 2u);
  EXPECT_EQ(j["choices"][1]["index"], 1);
  // token ids
  j = body_json(post("/v1/completions", {{"prompt", ids}, {"max_tokens", 2}}));
  EXPECT_EQ(j["usage"]["prompt_tokens"], ids.size());
  EXPECT_EQ(engine_->submitted().back().prompt, ids);
  // list of token-id lists
  j = body_json(
      post("/v1/completions", {{"prompt", {ids, std::vector<TokenId>{5}}}, {"max_tokens", 2}}));
  ASSERT_EQ(j["choices"].size(), 2u);
  EXPECT_EQ(j["usage"]["prompt_tokens"], ids.size() + 1);
  EXPECT_EQ(j["usage"]["completion_tokens"], 4);
  // empty prompt forms are rejected
  EXPECT_EQ(post("/v1/completions", {{"prompt", ""}}).status, 400);
  EXPECT_EQ(post("/v1/completions", {{"prompt", json::array()}}).status, 400);
  EXPECT_EQ(post("/v1/completions", {{"prompt", {json::array()}}}).status, 400);
  EXPECT_EQ(post("/v1/completions", {{"max_tokens", 2}}).status, 400);
}

TEST_F(ServerTest, EchoAndSuffix) {
  const json j = body_json(
      post("/v1/completions", {{"prompt", "Echo me"}, {"max_tokens", 3}, {"echo", true}}));
  EXPECT_EQ(j["choices"][0]["text"], "Echo me" + script_text(3));
  const auto r = post("/v1/completions", {{"prompt", "x"}, {"suffix", "y"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body_json(r)["error"]["param"], "suffix");
}

// A field folio does not implement is a 400 naming it, on both endpoints,
// and nothing reaches the engine; a null one asks for nothing.
TEST_F(ServerTest, UnknownFieldsAreRefusedNamingThem) {
  auto r = post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 2}, {"frobnicate", 1}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body_json(r)["error"]["param"], "frobnicate");
  EXPECT_NE(body_json(r)["error"]["message"].get<std::string>().find("'frobnicate'"),
            std::string::npos);
  r = post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                                    {"prediction", {{"type", "content"}, {"content", "x"}}},
                                    {"frobnicate", json::array()}});
  EXPECT_EQ(r.status, 400);
  const std::string msg = body_json(r)["error"]["message"];
  EXPECT_NE(msg.find("'prediction'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'frobnicate'"), std::string::npos) << msg;
  EXPECT_TRUE(engine_->submitted().empty());
  r = post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 2}, {"frobnicate", nullptr}});
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(ServerTest, NSamplesAreIndependentChoices) {
  const json j = body_json(post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 4}, {"n", 3}}));
  ASSERT_EQ(j["choices"].size(), 3u);
  for (int s = 0; s < 3; ++s) {
    EXPECT_EQ(j["choices"][s]["index"], s);
    EXPECT_EQ(j["choices"][s]["text"],
              script_text(4, static_cast<std::size_t>(s)));  // fake: offset s
  }
  EXPECT_EQ(j["usage"]["completion_tokens"], 12);
  EXPECT_EQ(engine_->submitted().back().n, 3);
}

TEST_F(ServerTest, StopStringsTruncateAndFinishStop) {
  // " Hello world. The" -> stop at "d. T" (spans tokens); output ends before it.
  json j =
      body_json(post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 10}, {"stop", "d. T"}}));
  EXPECT_EQ(j["choices"][0]["text"], " Hello worl");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  j = body_json(post("/v1/completions", {{"prompt", "x"},
                                         {"max_tokens", 10},
                                         {"stop", {"zzz", "world"}},
                                         {"include_stop_str_in_output", true}}));
  EXPECT_EQ(j["choices"][0]["text"], " Hello world");
  EXPECT_EQ(engine_->live(), 0u);  // finish_sample released the request
}

TEST_F(ServerTest, StopTokenIsCountedNotRendered) {
  const TokenId third = script_[2];
  const json j = body_json(
      post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 10}, {"stop_token_ids", {third}}}));
  EXPECT_EQ(j["choices"][0]["text"], script_text(2));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["usage"]["completion_tokens"], 3);
}

TEST_F(ServerTest, EosStopsUnlessIgnored) {
  FakeEngineOptions o = default_engine();
  o.eos = script_[1];
  restart(default_config(), o);
  json j = body_json(post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 5}}));
  EXPECT_EQ(j["choices"][0]["text"], script_text(1));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  j = body_json(
      post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 5}, {"ignore_eos", true}}));
  EXPECT_EQ(j["choices"][0]["text"], script_text(5));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
}

TEST_F(ServerTest, SamplingParametersReachTheEngine) {
  const json body = {{"prompt", "x"},
                     {"max_tokens", 4},
                     {"temperature", 0.5},
                     {"top_p", 0.9},
                     {"top_k", 7},
                     {"min_p", 0.1},
                     {"seed", 42},
                     {"presence_penalty", 0.5},
                     {"frequency_penalty", -0.5},
                     {"repetition_penalty", 1.1},
                     {"logit_bias", {{"5", -100}, {"6", 2.5}}},
                     {"min_tokens", 2},
                     {"ignore_eos", true},
                     {"stop_token_ids", {9}},
                     {"user", "u"}};
  ASSERT_EQ(post("/v1/completions", body).status, 200);
  const auto submitted = engine_->submitted();
  const auto& p = submitted.back().params;
  EXPECT_FLOAT_EQ(p.temperature, 0.5f);
  EXPECT_FLOAT_EQ(p.top_p, 0.9f);
  EXPECT_EQ(p.top_k, 7);
  EXPECT_FLOAT_EQ(p.min_p, 0.1f);
  EXPECT_EQ(p.seed, 42u);
  EXPECT_FLOAT_EQ(p.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(p.frequency_penalty, -0.5f);
  EXPECT_FLOAT_EQ(p.repetition_penalty, 1.1f);
  EXPECT_EQ(p.logit_bias.size(), 2u);
  EXPECT_FLOAT_EQ(p.logit_bias.at(5), -100.0f);
  EXPECT_EQ(p.min_tokens, 2);
  EXPECT_TRUE(p.ignore_eos);
  EXPECT_EQ(p.stop_token_ids, std::vector<TokenId>{9});
}

TEST_F(ServerTest, ContextLengthErrorsSayTheNumbers) {
  // max_model_len is 256 in the fixture.
  const std::vector<TokenId> long_prompt(250, 5);
  auto r = post("/v1/completions", {{"prompt", long_prompt}, {"max_tokens", 10}});
  ASSERT_EQ(r.status, 400);
  const std::string msg = body_json(r)["error"]["message"];
  EXPECT_NE(msg.find("maximum context length is 256 tokens"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'max_tokens' or 'max_completion_tokens' is too large: 10."),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("your request has 250 input tokens (10 > 256 - 250)"), std::string::npos)
      << msg;
  r = post("/v1/completions", {{"prompt", std::vector<TokenId>(256, 5)}});
  ASSERT_EQ(r.status, 400);
  EXPECT_NE(body_json(r)["error"]["message"].get<std::string>().find("256 input tokens"),
            std::string::npos);
  // Without max_tokens: 16 tokens (OpenAI's default), capped by what the context leaves.
  ASSERT_EQ(post("/v1/completions", {{"prompt", long_prompt}}).status, 200);
  EXPECT_EQ(engine_->submitted().back().params.max_tokens, 6);
}

TEST_F(ServerTest, CompletionLogprobs) {
  const json j =
      body_json(post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 3}, {"logprobs", 2}}));
  const json& lp = j["choices"][0]["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 3u);
  EXPECT_EQ(lp["tokens"][0], test_tokenizer().token_to_piece(script_[0]));
  EXPECT_FLOAT_EQ(lp["token_logprobs"][0].get<float>(), -0.5f);
  EXPECT_EQ(lp["top_logprobs"][0].size(), 2u);
  EXPECT_EQ(lp["text_offset"][0], 0);
  EXPECT_EQ(lp["text_offset"][1], test_tokenizer().token_to_piece(script_[0]).size());
  EXPECT_EQ(engine_->submitted().back().params.logprobs, 2);
  // capped by --max-logprobs
  ServerConfig cfg = default_config();
  cfg.max_logprobs = 1;
  restart(cfg, default_engine());
  const auto r = post("/v1/completions", {{"prompt", "x"}, {"logprobs", 2}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body_json(r)["error"]["param"], "logprobs");
}

}  // namespace
}  // namespace folio::server::testing
