// server/chat_messages.h: OpenAI chat messages -> the chat template's input.
//
// normalize_messages validates OpenAI's message shapes and turns them into
// what transformers' apply_chat_template receives:
//   {"role", "content": text} (text parts joined; "developer" -> "system";
//   assistant content null -> ""), plus
//   - assistant "tool_calls": [{"id", "type": "function", "function":
//     {"name", "arguments"}}] where `arguments`, a JSON string in OpenAI's
//     API, is passed as a mapping when it holds a JSON object (templates
//     such as Qwen2.5's and Hermes' write `tool_call.arguments | tojson`,
//     which expects a dict), else as the string sent;
//   - "tool" messages with "tool_call_id" and "name" (given, or the name of
//     the assistant call with that id);
//   - "name" on the other roles as given (the participant's name; whether the
//     prompt shows it is the template's choice, as in vLLM).
// Any other key of a message, a content part, a tool call or its function is
// refused, never dropped (`index` on a tool call must equal its position).
// Errors are ApiError(400) naming the field ("messages[2].tool_call_id").
//
// render_chat applies the model's template: one that reads `tools` gets the
// messages as above and `tools` as the list of tool dicts; one that does not
// gets the generic tool format (server/tool_prompt.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "server/model_context.h"
#include "server/tool_calls.h"
#include "server/tool_request.h"

namespace folio::server {

// Most messages one conversation may hold (beyond: 400 naming `messages`);
// the prompt's token count (--max-model-len) is the real bound, this one
// keeps validation and template rendering cheap before tokenizing.
inline constexpr std::size_t kMaxMessages = 4096;

nlohmann::ordered_json normalize_messages(const nlohmann::json& messages);

// The chat template applied to `messages`; `tools` active (ToolRequest::active)
// shows the model the tools. Shared with /tokenize. Throws ApiError(400).
std::string render_chat(const nlohmann::json& messages, const ModelContext& model,
                        bool add_generation_prompt, const ToolRequest& tools = {});

// How a model's answer with tools is written: kHermes when its template reads
// `tools`, else folio's generic format.
ToolFormat tool_format(const ModelContext& model);

}  // namespace folio::server
