// fuzz/chat_template_fuzz.cpp: libFuzzer target for the chat template engine
// (src/chat/): the input is a Jinja template, parsed and rendered over a
// small fixed conversation (system, user, assistant with a tool call, tool,
// user) with tools, BOS / EOS and add_generation_prompt. A template that
// does not parse or fails to render throws folio::Error; anything else
// escaping, a crash, a hang or an allocation beyond -rss_limit_mb is a
// finding: Limits must bound time and memory for every template.
//
// The limits are the unit tests' small ones (64 KiB of output or string,
// 10,000 loop iterations), not the server's defaults (16 MiB, 1,000,000):
// what they bound is the same, and small limits keep each input fast.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "chat/chat_template.h"

namespace {

const nlohmann::ordered_json& messages() {
  static const auto m = nlohmann::ordered_json::parse(R"([
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Weather in Paris? \u00e9\u4e2d"},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
      "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}}]},
    {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "{\"t\": 21}"},
    {"role": "user", "content": [{"type": "text", "text": "And tomorrow?"}]}
  ])");
  return m;
}

const folio::chat::RenderOptions& options() {
  static const auto o = [] {
    folio::chat::RenderOptions r;
    r.add_generation_prompt = true;
    r.bos_token = "<s>";
    r.eos_token = "</s>";
    r.extra["tools"] = nlohmann::ordered_json::parse(R"([{"type": "function", "function": {
      "name": "get_weather", "description": "Weather by city",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"},
        "days": {"type": "integer"}}, "required": ["city"]}}}])");
    r.extra["date_string"] = "26 Jul 2024";
    return r;
  }();
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  folio::chat::Limits limits;
  limits.max_output_bytes = std::size_t{1} << 16;
  limits.max_loop_iterations = 10'000;
  try {
    const folio::chat::ChatTemplate t(std::string(reinterpret_cast<const char*>(data), size),
                                      limits);
    const std::string out = t.render(messages(), options());
    if (out.size() > limits.max_output_bytes) __builtin_trap();  // the limit must hold
  } catch (const folio::Error&) {
  }
  return 0;
}
