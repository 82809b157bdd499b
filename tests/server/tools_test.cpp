// tests/server/tools_test.cpp: tools, tool_choice and tool-call answers over
// HTTP against the fake engine (scripted outputs), and the max_tokens defaults.
#include "server/chat_messages.h"
#include "server_fixture.h"

namespace folio::server::testing {
namespace {

using nlohmann::json;

const json kTools = json::array({{{"type", "function"},
                                  {"function",
                                   {{"name", "get_weather"},
                                    {"description", "Current weather of a city"},
                                    {"parameters",
                                     {{"type", "object"},
                                      {"properties", {{"city", {{"type", "string"}}}}},
                                      {"required", {"city"}}}}}}}});

const json kUser = json::array({{{"role", "user"}, {"content", "Weather in Paris?"}}});

// A conversation after one tool call and its result.
json history() {
  return json::array(
      {{{"role", "user"}, {"content", "Weather in Paris?"}},
       {{"role", "assistant"},
        {"content", nullptr},
        {"tool_calls",
         {{{"id", "call_1"},
           {"type", "function"},
           {"function", {{"name", "get_weather"}, {"arguments", "{\"city\": \"Paris\"}"}}}}}}},
       {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "sunny"}}});
}

// A Qwen2.5-style template: reads `tools`, writes tool calls as Hermes tags.
constexpr const char* kNativeTemplate =
    "{% if tools %}TOOLS{% for t in tools %}\n{{ t | tojson }}{% endfor %}\n{% endif %}"
    "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}"
    "{% for tc in m.tool_calls %}<tool_call>{\"name\": \"{{ tc.function.name }}\", "
    "\"arguments\": {{ tc.function.arguments | tojson }}}</tool_call>{% endfor %}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}";

class ToolsTest : public ServerTest {
 protected:
  // Restarts the fake engine so that every sample says `text`.
  std::size_t answer_with(const std::string& text) {
    script_ = test_tokenizer().encode(text);
    restart(default_config(), default_engine());
    return script_.size();
  }
  std::string last_prompt() const {
    return test_tokenizer().decode(engine_->submitted().back().prompt);
  }
  std::vector<json> events(const HttpResponse& r) {
    EXPECT_EQ(r.status, 200) << r.body;
    std::vector<json> out;
    const auto ps = sse_payloads(r.body);
    for (std::size_t i = 0; i + 1 < ps.size(); ++i) out.push_back(json::parse(ps[i]));
    return out;
  }
};

void expect_error(const HttpResponse& r, const std::string& param, const std::string& words) {
  EXPECT_EQ(r.status, 400) << r.body;
  const json e = body_json(r)["error"];
  EXPECT_EQ(e["param"], param) << r.body;
  EXPECT_NE(e["message"].get<std::string>().find(words), std::string::npos) << r.body;
}

TEST_F(ToolsTest, FallbackTemplateGetsToolPrompt) {
  ASSERT_EQ(
      post("/v1/chat/completions", {{"messages", kUser}, {"tools", kTools}, {"max_tokens", 1}})
          .status,
      200);
  const std::string p = last_prompt();
  EXPECT_EQ(p.rfind("<|system|>You can call these tools", 0), 0u) << p;
  // Request bodies are parsed into std::map-ordered JSON: schema keys come out sorted.
  EXPECT_NE(p.find(R"({"name":"get_weather","description":"Current weather of a city",)"
                   R"("parameters":{"properties":{"city":{"type":"string"}},"required":["city"],)"
                   R"("type":"object"}})"),
            std::string::npos)
      << p;
  EXPECT_NE(p.find(R"({"tool_calls": [{"name": "<tool name>")"), std::string::npos) << p;
  EXPECT_NE(p.find("<|user|>Weather in Paris?\n<|assistant|>"), std::string::npos) << p;
}

TEST_F(ToolsTest, FallbackRendersToolHistoryAsText) {
  ASSERT_EQ(
      post("/v1/chat/completions", {{"messages", history()}, {"tools", kTools}, {"max_tokens", 1}})
          .status,
      200);
  const std::string p = last_prompt();
  EXPECT_NE(p.find("<|assistant|>{\"tool_calls\":[{\"name\":\"get_weather\",\"arguments\":{"
                   "\"city\":\"Paris\"},\"id\":\"call_1\"}]}\n"),
            std::string::npos)
      << p;
  EXPECT_NE(p.find("<|user|>{\"tool_response\":{\"id\":\"call_1\",\"name\":\"get_weather\","
                   "\"content\":\"sunny\"}}\n<|assistant|>"),
            std::string::npos)
      << p;
}

TEST_F(ToolsTest, ToolCallAnswer) {
  const std::size_t n =
      answer_with(R"({"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]})");
  const auto r =
      post("/v1/chat/completions", {{"messages", kUser}, {"tools", kTools}, {"max_tokens", n}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json c = body_json(r)["choices"][0];
  EXPECT_EQ(c["finish_reason"], "tool_calls");
  EXPECT_TRUE(c["message"]["content"].is_null());
  ASSERT_EQ(c["message"]["tool_calls"].size(), 1u);
  const json call = c["message"]["tool_calls"][0];
  EXPECT_EQ(call["type"], "function");
  EXPECT_EQ(call["id"].get<std::string>().size(), 29u);
  EXPECT_EQ(call["function"]["name"], "get_weather");
  EXPECT_EQ(json::parse(call["function"]["arguments"].get<std::string>()),
            json({{"city", "Paris"}}));
}

TEST_F(ToolsTest, ToolCallAnswerStreamed) {
  const std::size_t n =
      answer_with(R"({"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]})");
  const auto evs =
      events(post("/v1/chat/completions",
                  {{"messages", kUser}, {"tools", kTools}, {"max_tokens", n}, {"stream", true}}));
  ASSERT_EQ(evs.size(), 3u);  // role, the call, the closing chunk
  EXPECT_EQ(evs[0]["choices"][0]["delta"]["role"], "assistant");
  const json d = evs[1]["choices"][0]["delta"];
  EXPECT_FALSE(d.contains("content"));
  ASSERT_EQ(d["tool_calls"].size(), 1u);
  EXPECT_EQ(d["tool_calls"][0]["index"], 0);
  EXPECT_EQ(d["tool_calls"][0]["type"], "function");
  EXPECT_EQ(d["tool_calls"][0]["id"].get<std::string>().rfind("call_", 0), 0u);
  EXPECT_EQ(d["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(json::parse(d["tool_calls"][0]["function"]["arguments"].get<std::string>()),
            json({{"city", "Paris"}}));
  EXPECT_EQ(evs[2]["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(evs[2]["choices"][0]["delta"], json::object());
}

TEST_F(ToolsTest, PlainAnswerWithToolsIsContent) {
  // The default script is plain text: content, streamed as it comes, finish "length".
  const json body = {{"messages", kUser}, {"tools", kTools}, {"max_tokens", 4}};
  const json j = body_json(post("/v1/chat/completions", body));
  EXPECT_EQ(j["choices"][0]["message"]["content"], script_text(4));
  EXPECT_FALSE(j["choices"][0]["message"].contains("tool_calls"));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  json sbody = body;
  sbody["stream"] = true;
  const auto evs = events(post("/v1/chat/completions", sbody));
  std::string text;
  for (const json& e : evs) {
    const json& d = e["choices"][0]["delta"];
    if (d.contains("content")) text += d["content"].get<std::string>();
  }
  EXPECT_EQ(text, script_text(4));
  EXPECT_GE(evs.size(), 5u);  // role, 4 pieces (the first after one token), close
  EXPECT_EQ(evs.back()["choices"][0]["finish_reason"], "length");
}

TEST_F(ToolsTest, GenericResponseObjectIsContent) {
  const std::size_t n = answer_with(R"({"response": "It is sunny."})");
  const json j = body_json(
      post("/v1/chat/completions", {{"messages", kUser}, {"tools", kTools}, {"max_tokens", n}}));
  EXPECT_EQ(j["choices"][0]["message"]["content"], "It is sunny.");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
}

TEST_F(ToolsTest, NativeTemplateGetsToolsAndHermesCallsAreParsed) {
  const std::size_t n = answer_with(
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Oslo\"}}\n</tool_call>");
  model_->chat_template.emplace(kNativeTemplate);
  ASSERT_TRUE(model_->chat_template->uses_tools());
  const auto r =
      post("/v1/chat/completions", {{"messages", history()}, {"tools", kTools}, {"max_tokens", n}});
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string p = last_prompt();
  // (trim_blocks drops the newline after each block tag, as Jinja2 does.)
  EXPECT_EQ(p.rfind(R"(TOOLS{"type": "function", "function": {"name": "get_weather")", 0), 0u) << p;
  // arguments reach the template as a mapping: tojson writes an object, not a string.
  EXPECT_NE(p.find(R"(<|assistant|><tool_call>{"name": "get_weather", "arguments": )"
                   R"({"city": "Paris"}}</tool_call><|tool|>sunny<|assistant|>)"),
            std::string::npos)
      << p;
  const json c = body_json(r)["choices"][0];
  EXPECT_EQ(c["finish_reason"], "tool_calls");
  ASSERT_EQ(c["message"]["tool_calls"].size(), 1u);
  EXPECT_EQ(json::parse(c["message"]["tool_calls"][0]["function"]["arguments"].get<std::string>()),
            json({{"city", "Oslo"}}));
}

TEST_F(ToolsTest, ToolChoiceNoneShowsNoToolsAndParsesNothing) {
  const std::string call = R"({"tool_calls": [{"name": "get_weather", "arguments": {}}]})";
  const std::size_t n = answer_with(call);
  const auto r =
      post("/v1/chat/completions",
           {{"messages", kUser}, {"tools", kTools}, {"tool_choice", "none"}, {"max_tokens", n}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(last_prompt(), "<|user|>Weather in Paris?\n<|assistant|>");
  const json c = body_json(r)["choices"][0];
  EXPECT_EQ(c["message"]["content"], call);
  EXPECT_EQ(c["finish_reason"], "length");
}

TEST_F(ToolsTest, ForcedToolChoiceConstrainsTheOutputToACall) {
  const std::size_t n =
      answer_with(R"({"tool_calls": [{"name": "get_weather", "arguments": {"city": "Rome"}}]})");
  for (const json& choice :
       {json("required"), json({{"type", "function"}, {"function", {{"name", "get_weather"}}}})}) {
    const auto r =
        post("/v1/chat/completions",
             {{"messages", kUser}, {"tools", kTools}, {"tool_choice", choice}, {"max_tokens", n}});
    ASSERT_EQ(r.status, 200) << r.body;
    const auto g = engine_->submitted().back().grammar;  // submitted() returns a copy
    ASSERT_NE(g, nullptr);  // the engine constrains the output to the call schema
    EXPECT_NE(g->grammar().dump().find("[g] [e] [t] [_] [w]"), std::string::npos);  // the name
    const json c = body_json(r)["choices"][0];
    EXPECT_EQ(c["finish_reason"], "tool_calls");
    ASSERT_EQ(c["message"]["tool_calls"].size(), 1u);
    EXPECT_EQ(c["message"]["tool_calls"][0]["function"]["name"], "get_weather");
  }
  expect_error(post("/v1/chat/completions", {{"messages", kUser},
                                             {"tools", kTools},
                                             {"tool_choice", "required"},
                                             {"response_format", {{"type", "json_object"}}}}),
               "tool_choice", "cannot be combined");
}

TEST_F(ToolsTest, ValidationErrorsNameTheField) {
  json tools = kTools;
  tools.push_back({{"type", "function"}, {"function", {{"name", ""}}}});
  expect_error(post("/v1/chat/completions", {{"messages", kUser}, {"tools", tools}}),
               "tools[1].function.name", "tools[1].function.name");
  json msgs = history();
  msgs[2].erase("tool_call_id");
  expect_error(post("/v1/chat/completions", {{"messages", msgs}, {"tools", kTools}}),
               "messages[2].tool_call_id", "must be a string");
  msgs = history();
  msgs[1]["tool_calls"][0]["function"]["arguments"] = json::object();
  expect_error(post("/v1/chat/completions", {{"messages", msgs}}),
               "messages[1].tool_calls[0].function.arguments", "JSON text");
  expect_error(post("/v1/chat/completions", {{"messages", kUser}, {"functions", kTools}}),
               "functions", "deprecated");
  expect_error(post("/v1/chat/completions", {{"messages", kUser}, {"tool_choice", "auto"}}),
               "tool_choice", "needs 'tools'");
}

TEST_F(ToolsTest, ToolHistoryWithoutToolsIsAccepted) {
  // A follow-up request may omit tools; the history still renders (as text here).
  ASSERT_EQ(post("/v1/chat/completions", {{"messages", history()}, {"max_tokens", 1}}).status, 200);
  EXPECT_EQ(last_prompt().find("You can call"), std::string::npos);
  EXPECT_NE(last_prompt().find("tool_response"), std::string::npos);
}

// Qwen2.5-Instruct's template (tool part verbatim); the expected text is what
// transformers' apply_chat_template renders for the same conversation, with
// tool_calls[].function.arguments as a dict (as HF's examples pass it).
constexpr const char* kQwen25Template = R"JINJA({%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- message.content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %})JINJA";
constexpr const char* kQwen25Expected = R"TEXT(<|im_start|>system
You are Qwen, created by Alibaba Cloud. You are a helpful assistant.

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{"type": "function", "function": {"name": "get_weather", "description": "Weather of a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
<|im_start|>user
Weather in Paris?<|im_end|>
<|im_start|>assistant
<tool_call>
{"name": "get_weather", "arguments": {"city": "Paris"}}
</tool_call><|im_end|>
<|im_start|>user
<tool_response>
sunny
</tool_response><|im_end|>
<|im_start|>assistant
)TEXT";

TEST_F(ToolsTest, Qwen25TemplateMatchesTransformers) {
  model_->chat_template.emplace(kQwen25Template);
  ToolRequest tools;
  tools.tools =
      nlohmann::ordered_json::array({{{"type", "function"},
                                      {"function",
                                       {{"name", "get_weather"},
                                        {"description", "Weather of a city"},
                                        {"parameters",
                                         {{"type", "object"},
                                          {"properties", {{"city", {{"type", "string"}}}}},
                                          {"required", {"city"}}}}}}}});
  tools.choice = ToolChoice::kAuto;
  json msgs = history();
  msgs[2]["name"] = "get_weather";
  EXPECT_EQ(render_chat(msgs, *model_, true, tools), kQwen25Expected);
  EXPECT_EQ(tool_format(*model_), ToolFormat::kHermes);
}

TEST_F(ToolsTest, MaxTokensDefaults) {
  // Completions: 16 (OpenAI's default), or what the context leaves when less.
  json j = body_json(post("/v1/completions", {{"prompt", "x"}}));
  EXPECT_EQ(j["usage"]["completion_tokens"], 16);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  j = body_json(post("/v1/completions", {{"prompt", std::vector<TokenId>(250, 5)}}));
  EXPECT_EQ(j["usage"]["completion_tokens"], 6);
  // Chat: the rest of the context (max_model_len 256).
  j = body_json(post("/v1/chat/completions", {{"messages", kUser}}));
  EXPECT_EQ(j["usage"]["completion_tokens"].get<int>() + j["usage"]["prompt_tokens"].get<int>(),
            256);
}

}  // namespace
}  // namespace folio::server::testing
