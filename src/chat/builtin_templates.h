// chat/builtin_templates.h: chat templates folio carries for models whose GGUF
// has no tokenizer.chat_template (the Gemma 3 270M file we ship is one).
//
// The template text lives in src/chat/templates/<name>.jinja (written for
// folio) and is compiled into the binary; tools/gen_chat_goldens.py renders
// the same files with jinja2 as the reference.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace folio::chat {

struct BuiltinTemplate {
  std::string_view name;    // "gemma3"
  std::string_view source;  // Jinja2 text
};

// The built-in template for an architecture (general.architecture), or none.
std::optional<BuiltinTemplate> builtin_template(std::string_view arch);

// The template a model is chatted with: its file's own when it has one, else
// the built-in one for its architecture, else none (chat is refused).
std::optional<std::string> model_chat_template(std::optional<std::string_view> file_template,
                                               std::string_view arch);

}  // namespace folio::chat
