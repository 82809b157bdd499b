// server/tool_calls.h: model output text -> OpenAI tool calls (pure).
//
// Two output forms, chosen by how the tools reached the model:
//   kGeneric  folio's own prompt (server/tool_prompt.h), for templates that
//             ignore `tools`: the whole output is one JSON object,
//             {"tool_calls": [{"name": "...", "arguments": {...}}, ...]} or
//             {"response": "..."} (also accepted: {"tool_call": {...}}, one
//             call, as llama.cpp's generic format allows).
//   kHermes   templates that render `tools` natively (Qwen2.5, Hermes,
//             SmolLM3): calls are <tool_call>\n{"name": ..., "arguments":
//             {...}}\n</tool_call> blocks, content is the text outside
//             them; a last block the output ended inside is accepted when its
//             JSON is complete (as vLLM's hermes parser does).
// All or nothing: when any call names no tool of the request, has arguments
// that are not a JSON object (a string holding a JSON object is accepted),
// or is not valid JSON, the whole output is plain content with no calls: a
// half-understood call must not be executed. parallel_tool_calls = false is
// asked of the model (prompt, schema) but not enforced here: every call the
// model made is returned.
#pragma once

#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace folio::server {

enum class ToolFormat { kGeneric, kHermes };

struct ToolCall {
  std::string id;         // "call_" + 24 random characters (set by the caller)
  std::string name;       // one of the request's tools
  std::string arguments;  // JSON text of an object, as OpenAI sends it
};

struct ParsedOutput {
  std::string content;          // text for message.content ("" with calls: null)
  std::vector<ToolCall> calls;  // ids empty
};

ParsedOutput parse_tool_calls(std::string_view text, ToolFormat format,
                              const std::vector<std::string>& names);

// "call_" + 24 characters from [A-Za-z0-9], OpenAI's shape.
std::string new_tool_call_id(std::mt19937_64& rng);

}  // namespace folio::server
