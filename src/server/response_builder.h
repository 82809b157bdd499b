// server/response_builder.h: OpenAI response and stream-chunk JSON shapes.
//
// The exact shapes of OpenAI's API (as vLLM emits them): text_completion and
// chat.completion bodies, their streaming chunks (the first chat chunk
// carries the role; the last carries finish_reason; with
// stream_options.include_usage every chunk has "usage": null and a final
// chunk with empty choices carries the usage), usage with
// prompt_tokens_details.cached_tokens, and logprobs in each API's format.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/output_processor.h"
#include "server/openai_request.h"
#include "server/tool_calls.h"

namespace folio::server {

using engine::TextDelta;

struct ResponseMeta {
  ApiKind kind = ApiKind::kCompletion;
  std::string id;  // "cmpl-..." or "chatcmpl-..."
  std::int64_t created = 0;
  std::string model;
  bool include_usage = false;  // stream_options.include_usage
};

struct Usage {
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::int64_t cached_tokens = 0;
};

// One choice of a finished non-streaming response.
struct FinalChoice {
  std::int32_t index = 0;
  std::string text;
  std::vector<TextDelta> pieces;  // for logprobs (tokens + logprobs + offsets)
  FinishReason finish = FinishReason::kNone;
  // Chat with tools: the calls parsed from the output (`text` is then the
  // rest: "" gives content null) and finish_reason "tool_calls".
  std::vector<ToolCall> tool_calls;
};

nlohmann::json usage_json(const Usage& u);

// The logprobs object for `pieces` in the API's format, or null when not wanted.
nlohmann::json logprobs_json(ApiKind kind, const std::vector<const TextDelta*>& pieces,
                             bool wanted);

std::string final_body(const ResponseMeta& m, const std::vector<FinalChoice>& choices,
                       const Usage& usage, bool logprobs);

// Chunk JSON texts (no SSE framing).
std::string chat_role_chunk(const ResponseMeta& m, std::int32_t index);
// A choice's delta; `d.finish` set makes it the choice's closing chunk.
std::string delta_chunk(const ResponseMeta& m, std::int32_t index, const TextDelta& d,
                        bool logprobs);
// One chunk with a choice's whole tool calls (OpenAI's delta.tool_calls:
// index, id, type, function {name, arguments}), sent when the output ends.
std::string tool_calls_chunk(const ResponseMeta& m, std::int32_t index,
                             const std::vector<ToolCall>& calls);
// A choice's closing chunk: empty delta, `finish_reason` as given.
std::string finish_chunk(const ResponseMeta& m, std::int32_t index, const char* finish_reason);
std::string usage_chunk(const ResponseMeta& m, const Usage& usage);

// Never throws on invalid UTF-8 (token pieces may split characters): replaces it.
std::string dump(const nlohmann::json& j);

}  // namespace folio::server
