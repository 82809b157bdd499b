// tests/server/tool_calls_test.cpp: the tool-call output parser, the
// streaming hold-back, the forced-call schema and tools validation (pure).
#include "server/tool_calls.h"

#include <gtest/gtest.h>

#include "server/api_error.h"
#include "server/tool_call_schema.h"
#include "server/tool_request.h"
#include "server/tool_stream.h"

namespace folio::server {
namespace {

using nlohmann::json;

const std::vector<std::string> kNames = {"get_weather", "add"};

TEST(ToolCallParser, GenericCalls) {
  const auto p = parse_tool_calls(
      R"( {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                           {"name": "add", "arguments": "{\"a\": 1}"}]} )",
      ToolFormat::kGeneric, kNames);
  EXPECT_EQ(p.content, "");
  ASSERT_EQ(p.calls.size(), 2u);
  EXPECT_EQ(p.calls[0].name, "get_weather");
  EXPECT_EQ(json::parse(p.calls[0].arguments), json({{"city", "Paris"}}));
  EXPECT_EQ(p.calls[1].name, "add");  // arguments given as a JSON string holding an object
  EXPECT_EQ(json::parse(p.calls[1].arguments), json({{"a", 1}}));
  EXPECT_TRUE(p.calls[0].id.empty());
}

TEST(ToolCallParser, GenericResponseAndSingleCall) {
  auto p = parse_tool_calls(R"({"response": "It is sunny."})", ToolFormat::kGeneric, kNames);
  EXPECT_EQ(p.content, "It is sunny.");
  EXPECT_TRUE(p.calls.empty());
  p = parse_tool_calls(R"({"tool_call": {"name": "add", "arguments": {}}})", ToolFormat::kGeneric,
                       kNames);
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_EQ(p.calls[0].arguments, "{}");
}

TEST(ToolCallParser, GenericMalformedIsPlainContent) {
  for (const std::string& text : {
           std::string("Just words."),
           std::string(R"({"tool_calls": [{"name": "get_weather", "arguments": {"city": )"),
           std::string(R"({"tool_calls": [{"name": "rm_rf", "arguments": {}}]})"),  // unknown
           std::string(R"({"tool_calls": [{"name": "add", "arguments": [1, 2]}]})"),
           std::string(R"({"tool_calls": [{"name": "add", "arguments": "not json"}]})"),
           std::string(R"({"tool_calls": [{"name": "add"}]})"),
           std::string(R"({"tool_calls": []})"),
           std::string(R"({"tool_calls": [{"name": "add", "arguments": {}}, {"name": "x",
                           "arguments": {}}]})"),  // all or nothing
           std::string(R"([1, 2])"),
           std::string(R"({"other": 1})"),
       }) {
    const auto p = parse_tool_calls(text, ToolFormat::kGeneric, kNames);
    EXPECT_TRUE(p.calls.empty()) << text;
    EXPECT_EQ(p.content, text);
  }
}

TEST(ToolCallParser, Hermes) {
  const std::string text =
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Oslo\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 2}}\n"
      "</tool_call>";
  const auto p = parse_tool_calls(text, ToolFormat::kHermes, kNames);
  EXPECT_EQ(p.content, "Let me check.");
  ASSERT_EQ(p.calls.size(), 2u);
  EXPECT_EQ(p.calls[0].name, "get_weather");
  EXPECT_EQ(json::parse(p.calls[0].arguments), json({{"city", "Oslo"}}));
  EXPECT_EQ(p.calls[1].name, "add");
  // Only calls: content is empty. An unclosed last block with complete JSON counts.
  const auto q = parse_tool_calls("<tool_call>\n{\"name\": \"add\", \"arguments\": {}}\n",
                                  ToolFormat::kHermes, kNames);
  EXPECT_EQ(q.content, "");
  ASSERT_EQ(q.calls.size(), 1u);
}

TEST(ToolCallParser, HermesMalformedIsPlainContent) {
  for (const std::string& text : {
           std::string("no calls here"),
           std::string("<tool_call>\n{\"name\": \"add\", \"argum"),
           std::string("<tool_call>{\"name\": \"nope\", \"arguments\": {}}</tool_call>"),
           std::string("<tool_call>{\"name\": \"add\", \"arguments\": 3}</tool_call>"),
           std::string("<tool_call>{\"name\": \"add\", \"arguments\": {}}</tool_call>"
                       "<tool_call>oops</tool_call>"),
       }) {
    const auto p = parse_tool_calls(text, ToolFormat::kHermes, kNames);
    EXPECT_TRUE(p.calls.empty()) << text;
    EXPECT_EQ(p.content, text);
  }
}

TEST(ToolCallParser, IdsHaveOpenAiShape) {
  std::mt19937_64 rng(7);
  const std::string a = new_tool_call_id(rng), b = new_tool_call_id(rng);
  EXPECT_EQ(a.size(), 5u + 24u);
  EXPECT_EQ(a.rfind("call_", 0), 0u);
  for (char c : a.substr(5)) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c))) << a;
  EXPECT_NE(a, b);
}

// Streams `pieces` and returns (content sent, final parse).
std::pair<std::string, ParsedOutput> stream(ToolFormat f, const std::vector<std::string>& pieces) {
  ToolCallStream s(f);
  std::string sent;
  for (const auto& p : pieces) sent += s.feed(p);
  ParsedOutput end = s.finish(kNames);
  return {sent, end};
}

TEST(ToolCallStream, GenericHoldsJsonReleasesText) {
  auto [sent, end] = stream(ToolFormat::kGeneric, {" ", "{\"tool_calls\": [{\"name\": \"add\", ",
                                                   "\"arguments\": {}}]}"});
  EXPECT_EQ(sent, "");
  ASSERT_EQ(end.calls.size(), 1u);
  std::tie(sent, end) = stream(ToolFormat::kGeneric, {"\n", "Hel", "lo {x}"});
  EXPECT_EQ(sent, "\nHello {x}");
  EXPECT_EQ(end.content, "");
  EXPECT_TRUE(end.calls.empty());
}

TEST(ToolCallStream, HermesStreamsUntilTag) {
  ToolCallStream s(ToolFormat::kHermes);
  EXPECT_EQ(s.feed("Sure <to"), "Sure ");  // "<to" may start the tag: held
  EXPECT_EQ(s.feed("ol_call>{\"name\": \"add\", "), "");
  EXPECT_EQ(s.feed("\"arguments\": {\"a\": 1}}</tool_call>"), "");
  const auto end = s.finish(kNames);
  ASSERT_EQ(end.calls.size(), 1u);
  EXPECT_EQ(end.content, "");
  // A false start is released.
  ToolCallStream t(ToolFormat::kHermes);
  EXPECT_EQ(t.feed("a <"), "a ");
  EXPECT_EQ(t.feed("b> c"), "<b> c");
  EXPECT_EQ(t.finish(kNames).content, "");
}

TEST(ToolCallStream, AgreesWithWholeParse) {
  const std::string text =
      "Hi.<tool_call>{\"name\": \"add\", \"arguments\": {}}</tool_call>bye <tool";
  for (std::size_t cut = 1; cut < text.size(); cut += 3) {
    ToolCallStream s(ToolFormat::kHermes);
    std::string sent = s.feed(text.substr(0, cut));
    sent += s.feed(text.substr(cut));
    const auto end = s.finish(kNames);
    const auto whole = parse_tool_calls(text, ToolFormat::kHermes, kNames);
    EXPECT_EQ(sent + end.content, whole.content) << cut;
    EXPECT_EQ(end.calls.size(), whole.calls.size());
  }
}

const json kTools = json::array({{{"type", "function"},
                                  {"function",
                                   {{"name", "get_weather"},
                                    {"description", "Weather of a city"},
                                    {"parameters",
                                     {{"type", "object"},
                                      {"properties", {{"city", {{"type", "string"}}}}},
                                      {"required", {"city"}}}}}}},
                                 {{"type", "function"}, {"function", {{"name", "add"}}}}});

ToolRequest read(const json& body) {
  Fields f(body);
  return read_tool_request(f);
}

std::string error_param(const json& body) {
  try {
    read(body);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    return e.param().value_or("");
  }
  return "(accepted)";
}

TEST(ToolRequest, ValidAndDefaults) {
  ToolRequest r = read({{"tools", kTools}});
  EXPECT_EQ(r.choice, ToolChoice::kAuto);
  EXPECT_TRUE(r.active());
  EXPECT_TRUE(r.parallel);
  EXPECT_EQ(r.names(), (std::vector<std::string>{"get_weather", "add"}));
  r = read({{"tools", kTools}, {"tool_choice", "none"}, {"parallel_tool_calls", false}});
  EXPECT_FALSE(r.active());
  EXPECT_FALSE(r.parallel);
  r = read({{"tools", kTools},
            {"tool_choice", {{"type", "function"}, {"function", {{"name", "add"}}}}}});
  EXPECT_EQ(r.choice, ToolChoice::kNamed);
  EXPECT_TRUE(r.forced());
  EXPECT_FALSE(read(json::object()).active());
  EXPECT_FALSE(read({{"tool_choice", "none"}}).active());
}

TEST(ToolRequest, ErrorsNameTheField) {
  json t = kTools;
  t[1]["function"]["name"] = "bad name!";
  EXPECT_EQ(error_param({{"tools", t}}), "tools[1].function.name");
  t = kTools;
  t[1]["function"].erase("name");
  EXPECT_EQ(error_param({{"tools", t}}), "tools[1].function.name");
  t = kTools;
  t[0]["type"] = "retrieval";
  EXPECT_EQ(error_param({{"tools", t}}), "tools[0].type");
  t = kTools;
  t[0]["function"]["parameters"] = "x";
  EXPECT_EQ(error_param({{"tools", t}}), "tools[0].function.parameters");
  t = kTools;
  t[0]["function"]["description"] = 3;
  EXPECT_EQ(error_param({{"tools", t}}), "tools[0].function.description");
  t = kTools;
  t[0]["function"]["frob"] = 3;
  EXPECT_EQ(error_param({{"tools", t}}), "tools[0].function.frob");
  t = kTools;
  t[1]["function"]["name"] = "get_weather";
  EXPECT_EQ(error_param({{"tools", t}}), "tools[1].function.name");  // duplicate
  EXPECT_EQ(error_param({{"tools", "x"}}), "tools");
  EXPECT_EQ(error_param({{"tools", kTools}, {"tool_choice", "always"}}), "tool_choice");
  EXPECT_EQ(error_param({{"tool_choice", "auto"}}), "tool_choice");  // no tools
  EXPECT_EQ(error_param({{"tools", kTools},
                         {"tool_choice", {{"type", "function"}, {"function", {{"name", "x"}}}}}}),
            "tool_choice.function.name");
  const json named = {{"type", "function"}, {"function", {{"name", "get_weather"}}}};
  json c = named;
  c["frob"] = 1;
  EXPECT_EQ(error_param({{"tools", kTools}, {"tool_choice", c}}), "tool_choice.frob");
  c = named;
  c["function"]["strict"] = true;
  EXPECT_EQ(error_param({{"tools", kTools}, {"tool_choice", c}}), "tool_choice.function.strict");
  c = named;
  c["function"]["frob"] = nullptr;  // null is absent, as everywhere
  EXPECT_EQ(error_param({{"tools", kTools}, {"tool_choice", c}}), "(accepted)");
  EXPECT_EQ(error_param({{"tools", kTools}, {"parallel_tool_calls", "yes"}}),
            "parallel_tool_calls");
  EXPECT_EQ(error_param({{"functions", json::array()}}), "functions");
  EXPECT_EQ(error_param({{"function_call", "auto"}}), "function_call");
}

TEST(ToolCallSchema, RequiredAndNamed) {
  const ToolRequest r = read({{"tools", kTools}});
  const json s =
      json::parse(tool_call_schema(r.tools, ToolChoice::kRequired, "", /*parallel=*/true).dump());
  EXPECT_EQ(s["type"], "object");
  EXPECT_EQ(s["required"], json({"tool_calls"}));
  const json& calls = s["properties"]["tool_calls"];
  EXPECT_EQ(calls["type"], "array");
  EXPECT_EQ(calls["minItems"], 1);
  EXPECT_FALSE(calls.contains("maxItems"));
  ASSERT_EQ(calls["items"]["anyOf"].size(), 2u);
  const json& first = calls["items"]["anyOf"][0];
  EXPECT_EQ(first["properties"]["name"], json({{"const", "get_weather"}}));
  EXPECT_EQ(first["properties"]["arguments"], kTools[0]["function"]["parameters"]);
  EXPECT_EQ(first["required"], json({"name", "arguments"}));
  EXPECT_EQ(calls["items"]["anyOf"][1]["properties"]["arguments"], json({{"type", "object"}}));

  const json n =
      json::parse(tool_call_schema(r.tools, ToolChoice::kNamed, "add", /*parallel=*/false).dump());
  const json& ncalls = n["properties"]["tool_calls"];
  EXPECT_EQ(ncalls["maxItems"], 1);
  EXPECT_EQ(ncalls["items"]["properties"]["name"], json({{"const", "add"}}));
  // Named: exactly one call even when parallel calls are allowed (vLLM's behaviour).
  const json np =
      json::parse(tool_call_schema(r.tools, ToolChoice::kNamed, "add", /*parallel=*/true).dump());
  EXPECT_EQ(np["properties"]["tool_calls"]["maxItems"], 1);
  EXPECT_EQ(np["properties"]["tool_calls"]["minItems"], 1);
}

}  // namespace
}  // namespace folio::server
