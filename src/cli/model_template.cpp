// cli/model_template.cpp: see model_template.h.
#include "cli/model_template.h"

#include "chat/builtin_templates.h"

namespace folio::cli {

std::optional<std::string> model_chat_template(const gguf::GgufFile& file) {
  return chat::model_chat_template(file.get_string("tokenizer.chat_template"),
                                   file.get_string("general.architecture").value_or(""));
}

std::string model_chat_template_origin(const gguf::GgufFile& file) {
  if (file.get_string("tokenizer.chat_template")) return "the model's";
  if (const auto b = chat::builtin_template(file.get_string("general.architecture").value_or(""))) {
    return "built-in " + std::string(b->name);
  }
  return "none";
}

}  // namespace folio::cli
