// chat/chat_template.cpp: variables in, text out.
#include "chat/chat_template.h"

#include "base/error.h"
#include "chat/interpreter.h"
#include "chat/lexer.h"
#include "chat/parser.h"

namespace folio::chat {

ChatTemplate::ChatTemplate(std::string source, Limits limits)
    : source_(std::move(source)), limits_(limits) {
  body_ = parse_template(source_);
  uses_tools_ = reads_variable(source_, "tools");
}

bool reads_variable(std::string_view source, std::string_view name) {
  const std::vector<Token> toks = lex(source);
  for (std::size_t i = 0; i < toks.size(); ++i) {
    if (toks[i].type != Tok::kName || toks[i].value != name) continue;
    const bool attribute = i > 0 && toks[i - 1].type == Tok::kOp && toks[i - 1].value == ".";
    if (!attribute) return true;
  }
  return false;
}

std::string ChatTemplate::render(const nlohmann::ordered_json& messages,
                                 const RenderOptions& opts) const {
  if (!messages.is_array()) throw Error("chat template: messages must be a JSON array");
  if (!opts.extra.is_object()) throw Error("chat template: extra variables must be a JSON object");
  // Like apply_chat_template, drop message keys whose value is null: many
  // templates test `'key' in message` and would otherwise render "None".
  nlohmann::ordered_json cleaned = nlohmann::ordered_json::array();
  for (const auto& m : messages) {
    if (!m.is_object()) throw Error("chat template: each message must be a JSON object");
    nlohmann::ordered_json c = nlohmann::ordered_json::object();
    for (auto it = m.begin(); it != m.end(); ++it) {
      if (!it->is_null()) c[it.key()] = *it;
    }
    cleaned.push_back(std::move(c));
  }
  Value::Object globals = {
      {"messages", Value::from_json(cleaned)},
      {"add_generation_prompt", Value::boolean(opts.add_generation_prompt)},
      {"bos_token", Value::string(opts.bos_token)},
      {"eos_token", Value::string(opts.eos_token)},
      {"tools", Value::none()},
      {"documents", Value::none()},
  };
  for (auto it = opts.extra.begin(); it != opts.extra.end(); ++it) {
    bool replaced = false;
    for (auto& [k, v] : globals) {
      if (k == it.key()) {
        v = Value::from_json(*it);
        replaced = true;
      }
    }
    if (!replaced) globals.emplace_back(it.key(), Value::from_json(*it));
  }
  return Interpreter(source_, limits_, std::move(globals)).render(body_);
}

std::string ChatTemplate::render(const std::vector<ChatMessage>& messages,
                                 const RenderOptions& opts) const {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const auto& m : messages) j.push_back({{"role", m.role}, {"content", m.content}});
  return render(j, opts);
}

}  // namespace folio::chat
