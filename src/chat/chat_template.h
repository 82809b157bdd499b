// chat/chat_template.h: renders a model's own chat template (public API).
//
// The template is the Jinja2 string from GGUF `tokenizer.chat_template`.
// Rendering matches transformers' apply_chat_template: the same variables
// (messages, add_generation_prompt, bos_token, eos_token, tools=None,
// documents=None, plus any extras) and the same Jinja2 environment settings
// (trim_blocks, lstrip_blocks, raise_exception, tojson without HTML escaping).
//
// Lives in chat/ rather than tokenizer/ (where DESIGN.md lists it) because it
// needs no vocabulary: it maps messages to text, which the tokenizer then
// encodes.
//
// A template using a Jinja2 feature outside the supported subset fails at
// construction (or, for unknown filters/functions, at render) with a
// folio::Error naming the feature and its line and column. Never a fallback.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "chat/ast.h"
#include "chat/builtins.h"

namespace folio::chat {

struct ChatMessage {
  std::string role;
  std::string content;
};

struct RenderOptions {
  bool add_generation_prompt = true;
  std::string bos_token;
  std::string eos_token;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();  // more template variables
};

class ChatTemplate {
 public:
  // Parses `source`; throws folio::Error on syntax errors or unsupported statements.
  explicit ChatTemplate(std::string source, Limits limits = {});

  ChatTemplate(ChatTemplate&&) noexcept = default;
  ChatTemplate& operator=(ChatTemplate&&) noexcept = default;

  // `messages`: a JSON array of message objects ({"role", "content", ...};
  // content may also be a list of parts, as OpenAI allows).
  std::string render(const nlohmann::ordered_json& messages, const RenderOptions& opts) const;
  std::string render(const std::vector<ChatMessage>& messages, const RenderOptions& opts) const;

  const std::string& source() const { return source_; }

  // Whether the template reads the `tools` variable: a name token `tools`
  // in a tag (not text, not a string literal, not an attribute like
  // `message.tools`). Templates that never read it (SmolLM2's, Gemma 3's)
  // would silently drop tool definitions, so the server then uses its own
  // generic tool prompt instead (server/tool_prompt.h).
  bool uses_tools() const { return uses_tools_; }

 private:
  std::string source_;
  Body body_;
  Limits limits_;
  bool uses_tools_ = false;
};

// True when `source` has a `name` token (a variable read) inside a tag.
bool reads_variable(std::string_view source, std::string_view name);

}  // namespace folio::chat
