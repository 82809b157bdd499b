// tests/server/chat_test.cpp: /v1/chat/completions against the fake engine.
#include "server_fixture.h"

namespace folio::server::testing {
namespace {

using nlohmann::json;

TEST_F(ServerTest, ChatRendersTemplateAndAnswers) {
  const json messages = {
      {{"role", "system"}, {"content", "Be brief."}},
      {{"role", "user"},
       {"content", {{{"type", "text"}, {"text", "Hi "}}, {{"type", "text"}, {"text", "there"}}}}},
      {{"role", "assistant"}, {"content", nullptr}}};
  const auto r =
      post("/v1/chat/completions", {{"messages", messages}, {"max_completion_tokens", 4}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = body_json(r);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  ASSERT_EQ(j["choices"].size(), 1u);
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], script_text(4));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  const std::string rendered =
      "<|system|>Be brief.\n<|user|>Hi there\n<|assistant|>\n<|assistant|>";
  const auto expected =
      test_tokenizer().encode(rendered, {.add_special = false, .parse_special = true});
  EXPECT_EQ(engine_->submitted().back().prompt, expected);
  EXPECT_EQ(j["usage"]["prompt_tokens"], expected.size());
  EXPECT_EQ(j["usage"]["completion_tokens"], 4);
}

TEST_F(ServerTest, ChatTemplateOverrideAndMissingTemplate) {
  // A model without a template (and no --chat-template) refuses chat clearly.
  model_->chat_template.reset();
  const auto r =
      post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "x"}}}}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(body_json(r)["error"]["message"].get<std::string>().find("--chat-template"),
            std::string::npos);
  // --chat-template given as text replaces the model's.
  const auto src =
      chat_template_source("{{ messages[0]['content'] }}!", std::string_view("ignored"));
  ASSERT_TRUE(src);
  model_->chat_template.emplace(*src);
  ASSERT_EQ(post("/v1/chat/completions",
                 {{"messages", {{{"role", "user"}, {"content", "yo"}}}}, {"max_tokens", 1}})
                .status,
            200);
  EXPECT_EQ(engine_->submitted().back().prompt, test_tokenizer().encode("yo!"));
}

TEST_F(ServerTest, ChatLogprobsShape) {
  const json j =
      body_json(post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "x"}}}},
                                              {"max_tokens", 2},
                                              {"logprobs", true},
                                              {"top_logprobs", 3}}));
  const json& content = j["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), 2u);
  const std::string piece = test_tokenizer().token_to_piece(script_[0]);
  EXPECT_EQ(content[0]["token"], piece);
  EXPECT_FLOAT_EQ(content[0]["logprob"].get<float>(), -0.5f);
  EXPECT_EQ(content[0]["bytes"].size(), piece.size());
  ASSERT_EQ(content[0]["top_logprobs"].size(), 3u);
  EXPECT_TRUE(content[0]["top_logprobs"][1].contains("bytes"));
}

TEST_F(ServerTest, ChatTemplateErrorsAre400) {
  model_->chat_template.emplace("{{ raise_exception('roles must alternate') }}");
  const auto r =
      post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "x"}}}}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(body_json(r)["error"]["message"].get<std::string>().find("roles must alternate"),
            std::string::npos);
}

// A content part whose "type" is not a string is the client's error (found by
// schemathesis against /openapi.json: it was a 500).
TEST_F(ServerTest, ContentPartOfWrongTypeIs400) {
  for (const json& type : {json::object(), json(5), json(nullptr), json::array()}) {
    const json messages = {{{"role", "user"}, {"content", {{{"type", type}, {"text", "hi"}}}}}};
    for (const char* path : {"/v1/chat/completions", "/tokenize"}) {
      const auto r = post(path, {{"messages", messages}});
      EXPECT_EQ(r.status, 400) << path << " " << type.dump() << ": " << r.body;
      EXPECT_EQ(body_json(r)["error"]["param"], "messages") << r.body;
    }
  }
}

}  // namespace
}  // namespace folio::server::testing
