// server/tool_prompt.h: folio's generic tool format, for chat templates that
// ignore `tools` (see chat::ChatTemplate::uses_tools).
//
// Such a template would drop the tool definitions silently, and may refuse
// the `tool` role or ignore `tool_calls`. Like llama.cpp's "generic" format,
// the conversation is rewritten into messages any template renders:
//   - a system prompt lists the tools (name, description, parameters schema,
//     one JSON object per line) and asks for one JSON object as the answer:
//     {"tool_calls": [{"name": ..., "arguments": {...}}]} or
//     {"response": "..."}; it is appended to the first system message, or
//     becomes one (only when tools are active);
//   - an assistant message's tool_calls become that same JSON, as its text
//     (after its content, if any);
//   - a `tool` message becomes a user message
//     {"tool_response": {"id": ..., "name": ..., "content": ...}}; results
//     of consecutive tool messages share one user message (templates that
//     require alternating roles accept it).
// The output is then parsed as ToolFormat::kGeneric (server/tool_calls.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace folio::server {

// The system-prompt text for `tools` (validated tool list).
std::string generic_tool_prompt(const nlohmann::ordered_json& tools, bool parallel);

// `messages` (normalized by normalize_messages) rewritten as above;
// `tools` null or empty: only the history is rewritten, no prompt is added.
nlohmann::ordered_json generic_tool_messages(const nlohmann::ordered_json& messages,
                                             const nlohmann::ordered_json& tools, bool parallel);

}  // namespace folio::server
