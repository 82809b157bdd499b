// server/tool_request.h: a chat request's `tools`, `tool_choice` and
// `parallel_tool_calls`, validated.
//
// OpenAI's shapes: tools = [{"type": "function", "function": {"name",
// "description"?, "parameters"? (a JSON Schema object), "strict"?}}];
// tool_choice = "none" | "auto" | "required" | {"type": "function",
// "function": {"name"}}; parallel_tool_calls = bool (default true). Every
// problem is an ApiError(400) naming the field, e.g. "tools[1].function.name".
// The deprecated `functions` / `function_call` are refused by name.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/json_fields.h"

namespace folio::server {

inline constexpr std::size_t kMaxTools = 128;  // OpenAI's limit

enum class ToolChoice {
  kNone,      // tools are not shown to the model and nothing is parsed
  kAuto,      // the model may answer or call tools (default with tools)
  kRequired,  // the model must call at least one tool
  kNamed,     // the model must call `ToolRequest::forced_name`
};

struct ToolRequest {
  nlohmann::ordered_json tools = nlohmann::ordered_json::array();  // as sent, validated
  ToolChoice choice = ToolChoice::kNone;
  std::string forced_name;  // kNamed
  bool parallel = true;     // parallel_tool_calls

  // Tools reach the template and the output is parsed for calls.
  bool active() const { return choice != ToolChoice::kNone && !tools.empty(); }
  // The output must be a tool call: needs constrained decoding.
  bool forced() const { return choice == ToolChoice::kRequired || choice == ToolChoice::kNamed; }
  std::vector<std::string> names() const;
};

// Reads tools / tool_choice / parallel_tool_calls (and refuses functions /
// function_call) from a chat body. Throws ApiError(400).
ToolRequest read_tool_request(Fields& f);

}  // namespace folio::server
