// server/openai_request.h: OpenAI request bodies -> one validated GenerationRequest.
//
// Both /v1/completions and /v1/chat/completions parse into the same struct:
// prompts as token ids (tokenized here, the chat template applied for chat),
// SamplingParams validated by sampling::SamplingParams::validate, and the
// response-shaping options (stream, echo, logprobs ...). Every problem of
// form is an ApiError(400) naming the parameter; an unknown `model` is
// ApiError(404). Limits (context length, default max_tokens, value ranges)
// are checked once, by the engine's RequestLimits, when the job admits it.
// A field folio does not implement is an ApiError(400) naming it (never
// ignored); a null field counts as absent.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/attention_window.h"
#include "sampling/sampling_params.h"
#include "server/model_context.h"
#include "server/server_config.h"

namespace folio::server {

enum class ApiKind { kCompletion, kChat };

struct GenerationRequest {
  ApiKind kind = ApiKind::kCompletion;
  std::string model;                          // as reported back (the served name)
  std::vector<std::vector<TokenId>> prompts;  // completions may carry several
  std::vector<std::string> prompt_texts;      // decoded prompts, for echo
  sampling::SamplingParams params;            // as sent; the engine's limits check them
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
  double tokenize_seconds = 0;  // time spent in the tokenizer / template (metrics)
};

GenerationRequest parse_completion_request(const nlohmann::json& body, const ModelContext& model,
                                           const ServerConfig& config);
GenerationRequest parse_chat_request(const nlohmann::json& body, const ModelContext& model,
                                     const ServerConfig& config);

// The chat template applied to `messages` (validated as OpenAI chat messages);
// shared with /tokenize. Throws ApiError(400).
std::string render_chat(const nlohmann::json& messages, const ModelContext& model,
                        bool add_generation_prompt);

}  // namespace folio::server
