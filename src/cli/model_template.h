// cli/model_template.h: the chat template a loaded model is used with.
#pragma once

#include <optional>
#include <string>

#include "gguf/gguf_file.h"

namespace folio::cli {

// tokenizer.chat_template when the file has one, else folio's built-in
// template for its architecture (chat/builtin_templates.h), else none.
std::optional<std::string> model_chat_template(const gguf::GgufFile& file);

// Where model_chat_template() found it: "the model's", "built-in gemma3", or "none".
std::string model_chat_template_origin(const gguf::GgufFile& file);

}  // namespace folio::cli
