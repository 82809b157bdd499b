// server/openai_request.h: OpenAI request bodies -> one validated GenerationRequest.
//
// Both /v1/completions and /v1/chat/completions parse into the same struct:
// prompts as token ids (tokenized here, the chat template applied for chat),
// SamplingParams validated by sampling::SamplingParams::validate, and the
// response-shaping options (stream, echo, logprobs ...). Every problem of
// form is an ApiError(400) naming the parameter; `model` was resolved to
// `model` by the caller (ServerContext::resolve, the router). Limits (context length, default
// max_tokens, value ranges) are checked once, by the engine's RequestLimits, when the job admits
// it. A field folio does not implement is an ApiError(400) naming it (never ignored); a null field
// counts as absent.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/attention_window.h"
#include "sampling/sampling_params.h"
#include "server/chat_messages.h"
#include "server/model_context.h"
#include "server/server_config.h"
#include "server/tool_calls.h"

namespace folio::server {

enum class ApiKind { kCompletion, kChat };

// /v1/completions without max_tokens: at most this many tokens (OpenAI's and
// vLLM's default; chat without it runs to the context limit).
inline constexpr std::int32_t kCompletionDefaultMaxTokens = 16;

// A chat request with tools (tool_choice "auto"): its answer is parsed for calls.
struct ToolOutput {
  ToolFormat format = ToolFormat::kGeneric;
  std::vector<std::string> names;  // the request's tools
};

struct GenerationRequest {
  ApiKind kind = ApiKind::kCompletion;
  std::string model;                          // as reported back (the served name)
  std::vector<std::vector<TokenId>> prompts;  // completions may carry several
  std::vector<std::string> prompt_texts;      // decoded prompts, for echo
  sampling::SamplingParams params;            // as sent; the engine's limits check them
  // Used when max_tokens is unset, capped by what the context leaves after
  // each prompt; unset: the engine's default (the rest of the context).
  std::optional<std::int32_t> default_max_tokens;
  std::optional<ToolOutput> tool_output;  // chat with active tools
  std::int32_t n = 1;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool echo = false;           // completions: prepend the prompt text
  bool skip_special_tokens = true;
  bool want_logprobs = false;     // completions: logprobs set; chat: logprobs = true
  std::int32_t top_logprobs = 0;  // alternatives per token
  std::int32_t priority = 0;
  // attention_window / attention_sinks (folio's extra fields); unset: the
  // server's --attention-window.
  std::optional<AttentionWindow> attention_window;
  // Structured output (response_format, structured_outputs, guided_*, or
  // tool_choice required / named): the compiled grammar every sample
  // follows; null: free text.
  std::shared_ptr<const grammar::CompiledGrammar> grammar;
  double tokenize_seconds = 0;  // time spent in the tokenizer / template (metrics)
};

// POST /v1/embeddings (OpenAI's fields, and vLLM's chat form): `input` (a
// string, strings, token ids or lists of them) or `messages` rendered with the
// model's chat template (add_generation_prompt, default false); `encoding_format`
// "float" or "base64"; `dimensions` only as the model's own width; `user`.
struct EmbeddingRequest {
  std::string model;                          // as reported back
  std::vector<std::vector<TokenId>> prompts;  // one embedding each
  bool base64 = false;
  double tokenize_seconds = 0;
};

EmbeddingRequest parse_embedding_request(const nlohmann::json& body, const ModelContext& model,
                                         const ServerConfig& config);

// `ordered`: the same body with key order kept (parse_body_ordered), so a
// JSON schema's properties come out in the client's order; null: sorted.
GenerationRequest parse_completion_request(const nlohmann::json& body, const ModelContext& model,
                                           const ServerConfig& config,
                                           const nlohmann::ordered_json* ordered = nullptr);
GenerationRequest parse_chat_request(const nlohmann::json& body, const ModelContext& model,
                                     const ServerConfig& config,
                                     const nlohmann::ordered_json* ordered = nullptr);

}  // namespace folio::server
