// tests/server/chat_messages_test.cpp: normalize_messages keeps what each role
// takes and refuses, by name, every key it does not implement: in a message,
// a content part, a tool call or its function.
#include "server/chat_messages.h"

#include <gtest/gtest.h>

#include "server/api_error.h"

namespace folio::server {
namespace {

using nlohmann::json;

// The param of the 400 normalize_messages throws, or "(accepted)".
std::string refused(const json& messages) {
  try {
    normalize_messages(messages);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_NE(std::string(e.what()).find(e.param().value_or("?")), std::string::npos) << e.what();
    return e.param().value_or("");
  }
  return "(accepted)";
}

json call(int index = -1) {
  json c = {{"id", "call_1"},
            {"type", "function"},
            {"function", {{"name", "f"}, {"arguments", "{\"a\": 1}"}}}};
  if (index >= 0) c["index"] = index;
  return c;
}

json conversation() {
  return json::array({{{"role", "system"}, {"content", "Be brief."}},
                      {{"role", "user"}, {"content", "Hi"}},
                      {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", {call()}}},
                      {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "42"}}});
}

TEST(ChatMessages, NameReachesTheTemplateForEveryRole) {
  json m = conversation();
  m[0]["name"] = "ops";
  m[1]["name"] = "alice";
  m[2]["name"] = "bot";
  const auto norm = normalize_messages(m);
  EXPECT_EQ(norm[0]["name"], "ops");
  EXPECT_EQ(norm[1]["name"], "alice");
  EXPECT_EQ(norm[2]["name"], "bot");
  EXPECT_EQ(norm[3]["name"], "f");  // a tool result: the name of the call it answers
  m[1]["name"] = 7;
  EXPECT_EQ(refused(m), "messages[1].name");
}

TEST(ChatMessages, UnknownMessageKeysAreRefusedByName) {
  json m = conversation();
  EXPECT_EQ(refused(m), "(accepted)");
  m[1]["cache_control"] = {{"type", "ephemeral"}};
  EXPECT_EQ(refused(m), "messages[1].cache_control");
  m = conversation();
  m[2]["reasoning_content"] = "thinking";
  EXPECT_EQ(refused(m), "messages[2].reasoning_content");
  m = conversation();
  m[2]["refusal"] = "no";
  EXPECT_EQ(refused(m), "messages[2].refusal");
  m[2]["refusal"] = nullptr;  // null is absent, as everywhere
  EXPECT_EQ(refused(m), "(accepted)");
  m = conversation();
  m[1]["tool_calls"] = json::array({call()});  // only an assistant calls tools
  EXPECT_EQ(refused(m), "messages[1].tool_calls");
  m = conversation();
  m[0]["tool_call_id"] = "call_1";
  EXPECT_EQ(refused(m), "messages[0].tool_call_id");
}

TEST(ChatMessages, ContentPartsTakeTypeAndTextOnly) {
  json m = conversation();
  m[1]["content"] =
      json::array({{{"type", "text"}, {"text", "Hi "}}, {{"type", "text"}, {"text", "there"}}});
  EXPECT_EQ(normalize_messages(m)[1]["content"], "Hi there");
  m[1]["content"][1]["cache_control"] = {{"type", "ephemeral"}};
  EXPECT_EQ(refused(m), "messages[1].content[1].cache_control");
}

TEST(ChatMessages, ToolCallsTakeTheirIndexAndNothingElse) {
  json m = conversation();
  m[2]["tool_calls"] = json::array({call(0)});
  EXPECT_EQ(refused(m), "(accepted)");
  EXPECT_FALSE(normalize_messages(m)[2]["tool_calls"][0].contains("index"));
  m[2]["tool_calls"] = json::array({call(1)});
  EXPECT_EQ(refused(m), "messages[2].tool_calls[0].index");
  m[2]["tool_calls"] = json::array({call()});
  m[2]["tool_calls"][0]["frob"] = true;
  EXPECT_EQ(refused(m), "messages[2].tool_calls[0].frob");
  m[2]["tool_calls"] = json::array({call()});
  m[2]["tool_calls"][0]["function"]["strict"] = true;
  EXPECT_EQ(refused(m), "messages[2].tool_calls[0].function.strict");
}

}  // namespace
}  // namespace folio::server
