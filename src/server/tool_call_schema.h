// server/tool_call_schema.h: the JSON Schema an output must match when
// tool_choice forces a call ("required" or a named function).
//
// The schema describes folio's generic tool-call form (server/tool_prompt.h):
//   {"tool_calls": [{"name": <const>, "arguments": <the function's
//   parameters schema>}, ...]}
// with at least one call, and at most one unless parallel_tool_calls. With
// "required" each call may name any tool (anyOf over the tools); a named
// tool_choice allows only that one. Constrained decoding turns it into a
// grammar (grammar::ConstraintSpec{ConstraintKind::kJsonSchema, schema}).
#pragma once

#include <nlohmann/json.hpp>

#include "server/tool_request.h"

namespace folio::server {

// `tools`: validated as by read_tool_request. `choice` must be kRequired or
// kNamed (`forced_name` then names one of `tools`).
nlohmann::ordered_json tool_call_schema(const nlohmann::ordered_json& tools, ToolChoice choice,
                                        const std::string& forced_name, bool parallel);

}  // namespace folio::server
