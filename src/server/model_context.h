// server/model_context.h: what the server knows about the served model.
//
// Built once at start-up (by the CLI) from the loaded model and ServerConfig;
// immutable afterwards and shared by all IO threads: the tokenizer is const
// and thread-safe, the chat template renders without mutation.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_template.h"
#include "grammar/grammar_cache.h"
#include "tokenizer/tokenizer.h"

namespace folio::server {

struct ModelContext {
  const tokenizer::Tokenizer* tokenizer = nullptr;  // not owned; outlives the server
  std::optional<chat::ChatTemplate> chat_template;  // none: chat requests get 400
  std::vector<std::string> names;                   // served model names; names[0] is reported
  std::string root;                                 // model path, reported by /v1/models
  std::int32_t max_model_len = 0;                   // prompt + completion tokens
  std::int32_t vocab_size = 0;
  std::int32_t hidden_size = 0;  // values of a pooled hidden state (/v1/embeddings); 0: unknown
  std::string bos_token;         // template variables
  std::string eos_token;
  double load_seconds = 0;  // model load time, the "model_load" stage of /metrics
  // Compiled output constraints over this vocabulary (thread-safe; shared
  // so equal schemas compile once).
  std::shared_ptr<grammar::GrammarCache> grammars;

  const std::string& name() const { return names.front(); }
  bool serves(std::string_view model) const;
};

// Template source for --chat-template: the contents of the file when `flag`
// names an existing file, else `flag` itself (vLLM accepts both); when `flag`
// is empty, the model's own template (`from_model`, may be absent).
std::optional<std::string> chat_template_source(const std::string& flag,
                                                std::optional<std::string_view> from_model);

// Fills a context for `tok`: names from `served` (else `model_path`), BOS/EOS
// token text from the vocabulary, and the chat template when `template_src`
// is set (throws folio::Error with the template's own message if it does not parse).
ModelContext make_model_context(const tokenizer::Tokenizer& tok, std::vector<std::string> served,
                                const std::string& model_path, std::int32_t max_model_len,
                                std::optional<std::string> template_src);

}  // namespace folio::server
