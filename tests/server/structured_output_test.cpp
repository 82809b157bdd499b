// tests/server/structured_output_test.cpp: response_format, vLLM's
// structured_outputs and guided_* over HTTP against the fake engine: which
// grammar reaches the engine, and every refusal names its field.
#include "server_fixture.h"

namespace folio::server::testing {
namespace {

using nlohmann::json;

const json kUser = json::array({{{"role", "user"}, {"content", "Hi"}}});

class StructuredOutputTest : public ServerTest {
 protected:
  // The grammar the engine got for a chat request with `extra` fields.
  std::shared_ptr<const grammar::CompiledGrammar> chat_grammar(const json& extra) {
    json body = {{"messages", kUser}, {"max_tokens", 2}};
    body.update(extra);
    const auto r = post("/v1/chat/completions", body);
    EXPECT_EQ(r.status, 200) << r.body;
    return engine_->submitted().back().grammar;
  }
  void expect_error(const json& extra, const std::string& param, const std::string& words,
                    const char* path = "/v1/chat/completions") {
    json body = {{"max_tokens", 2}};
    if (std::string(path) == "/v1/completions") {
      body["prompt"] = "Hi";
    } else {
      body["messages"] = kUser;
    }
    body.update(extra);
    const auto r = post(path, body);
    EXPECT_EQ(r.status, 400) << r.body;
    const json e = body_json(r)["error"];
    EXPECT_EQ(e["param"], param) << r.body;
    EXPECT_NE(e["message"].get<std::string>().find(words), std::string::npos) << r.body;
  }
};

TEST_F(StructuredOutputTest, EachFormReachesTheEngine) {
  EXPECT_EQ(chat_grammar({{"response_format", {{"type", "text"}}}}), nullptr);
  EXPECT_NE(chat_grammar({{"response_format", {{"type", "json_object"}}}}), nullptr);
  const json schema = {{"type", "object"}, {"properties", {{"a", {{"type", "integer"}}}}}};
  EXPECT_NE(
      chat_grammar({{"response_format",
                     {{"type", "json_schema"},
                      {"json_schema", {{"name", "x"}, {"schema", schema}, {"strict", true}}}}}}),
      nullptr);
  EXPECT_NE(chat_grammar({{"guided_json", schema}}), nullptr);
  EXPECT_NE(chat_grammar({{"guided_json", schema.dump()}}), nullptr);
  EXPECT_NE(chat_grammar({{"guided_regex", "[a-z]+"}}), nullptr);
  EXPECT_NE(chat_grammar({{"guided_choice", {"yes", "no"}}}), nullptr);
  EXPECT_NE(chat_grammar({{"guided_grammar", "root ::= \"a\"+"}}), nullptr);
  EXPECT_NE(chat_grammar({{"guided_regex", "[0-9]"}, {"guided_decoding_backend", "auto"}}),
            nullptr);
  EXPECT_NE(chat_grammar({{"structured_outputs", {{"choice", {"red", "blue"}}}}}), nullptr);
  EXPECT_NE(chat_grammar({{"structured_outputs", {{"json_object", true}}}}), nullptr);
  // Completions take them too.
  const auto r =
      post("/v1/completions", {{"prompt", "Hi"}, {"max_tokens", 2}, {"guided_choice", {"a", "b"}}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(engine_->submitted().back().grammar, nullptr);
}

TEST_F(StructuredOutputTest, EqualSchemasShareOneCompiledGrammar) {
  const auto a = chat_grammar({{"guided_regex", "(ab)+c"}});
  const auto b = chat_grammar({{"structured_outputs", {{"regex", "(ab)+c"}}}});
  EXPECT_EQ(a, b);
}

TEST_F(StructuredOutputTest, PropertiesKeepTheClientsOrder) {
  // Sent with "zeta" before "alpha"; nlohmann's json would sort them.
  const std::string body =
      R"({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2,
          "response_format": {"type": "json_schema", "json_schema": {"name": "o", "schema":
          {"type": "object", "properties": {"zeta": {"type": "integer"},
          "alpha": {"type": "string"}}, "required": ["zeta", "alpha"]}}}})";
  const auto r = client()->request("POST", "/v1/chat/completions", body, {});
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string g = engine_->submitted().back().grammar->grammar().dump();
  const std::string root = g.substr(0, g.find('\n'));
  ASSERT_NE(root.find("z"), std::string::npos) << g;
  EXPECT_LT(root.find("[z]"), root.find("[a]")) << root;
}

TEST_F(StructuredOutputTest, RefusalsNameTheField) {
  expect_error({{"response_format", {{"type", "xml"}}}}, "response_format.type", "not supported");
  expect_error({{"response_format", "json"}}, "response_format", "an object");
  expect_error({{"response_format", {{"type", "json_object"}, {"schema", json::object()}}}},
               "response_format.schema", "unsupported field");
  expect_error({{"response_format", {{"type", "json_schema"}}}}, "response_format.json_schema",
               "\"name\"");
  expect_error(
      {{"response_format",
        {{"type", "json_schema"},
         {"json_schema", {{"name", "x"}, {"schema", {{"type", "object"}, {"not", {}}}}}}}}},
      "response_format", "/not");
  expect_error({{"guided_json", "{not json"}}, "guided_json", "not valid JSON");
  expect_error({{"guided_regex", "(a"}}, "guided_regex", "invalid guided_regex");
  expect_error({{"guided_grammar", "root ::= undefined-rule"}}, "guided_grammar", "undefined rule");
  expect_error({{"guided_choice", json::array()}}, "guided_choice", "non-empty list");
  expect_error({{"guided_regex", "a"}, {"guided_choice", {"a"}}}, "guided_choice",
               "cannot be combined with 'guided_regex'");
  expect_error({{"response_format", {{"type", "json_object"}}}, {"guided_regex", "a"}},
               "guided_regex", "cannot be combined with 'response_format'");
  expect_error({{"guided_decoding_backend", "outlines"}}, "guided_decoding_backend",
               "not available");
  expect_error({{"structured_outputs", {{"whitespace_pattern", " "}}}},
               "structured_outputs.whitespace_pattern", "unsupported field");
  expect_error({{"guided_whitespace_pattern", " "}}, "guided_whitespace_pattern", "unsupported");
  expect_error({{"response_format", {{"type", "xml"}}}}, "response_format.type", "not supported",
               "/v1/completions");
}

}  // namespace
}  // namespace folio::server::testing
