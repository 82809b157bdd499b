// server/chat_messages.cpp: validating messages and rendering the template.
#include "server/chat_messages.h"

#include <map>

#include "base/error.h"
#include "server/api_error.h"
#include "server/json_fields.h"
#include "server/tool_prompt.h"

namespace folio::server {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

const json* member(const json& m, const char* key) {
  const auto it = m.find(key);
  return it == m.end() || it->is_null() ? nullptr : &*it;
}

// A string or a list of text parts, joined; `at` names the field.
std::string content_text(const json& c, const std::string& at) {
  if (c.is_string()) return c.get<std::string>();
  if (!c.is_array()) bad_param(at, "a string or a list of text parts");
  std::string text;
  for (std::size_t j = 0; j < c.size(); ++j) {
    const json& part = c[j];
    // Compared as JSON, not read with value("type", ""), which throws on a
    // non-string type (a 500 where the client deserves a 400).
    if (!part.is_object() || !part.contains("type") || part["type"] != "text" ||
        !part.contains("text") || !part["text"].is_string()) {
      throw ApiError(400,
                     "only text content parts ({\"type\": \"text\", \"text\": ...}) are supported",
                     "messages");
    }
    refuse_other_keys(part, at + "[" + std::to_string(j) + "]", {"type", "text"});
    text += part["text"].get<std::string>();
  }
  return text;
}

ordered_json read_tool_calls(const json& calls, const std::string& at,
                             std::map<std::string, std::string>& names_by_id) {
  if (!calls.is_array()) bad_param(at, "a list of tool calls");
  ordered_json out = ordered_json::array();
  for (std::size_t j = 0; j < calls.size(); ++j) {
    const std::string c_at = at + "[" + std::to_string(j) + "]";
    const json& c = calls[j];
    if (!c.is_object()) bad_param(c_at, "an object {\"id\", \"type\": \"function\", \"function\"}");
    // `index` is what a streamed delta numbers its call with; clients that
    // rebuild the message from deltas send it back. The list's order is the
    // calls' order, so an index must agree with the position.
    refuse_other_keys(c, c_at, {"id", "type", "function", "index"});
    if (const json* index = member(c, "index");
        index && !(index->is_number_integer() && *index == j)) {
      bad_param(c_at + ".index", "the call's position in the list (" + std::to_string(j) + ")");
    }
    const json* id = member(c, "id");
    if (!id || !id->is_string()) bad_param(c_at + ".id", "a string");
    if (const json* t = member(c, "type"); t && *t != "function")
      bad_param(c_at + ".type", "\"function\"");
    const json* fn = member(c, "function");
    if (!fn || !fn->is_object())
      bad_param(c_at + ".function", "an object with 'name' and 'arguments'");
    refuse_other_keys(*fn, c_at + ".function", {"name", "arguments"});
    const json* name = member(*fn, "name");
    if (!name || !name->is_string()) bad_param(c_at + ".function.name", "a string");
    const json* args = member(*fn, "arguments");
    if (!args || !args->is_string())
      bad_param(c_at + ".function.arguments", "a string (JSON text)");
    ordered_json a = ordered_json::parse(args->get<std::string>(), nullptr, false);
    if (a.is_discarded() || !a.is_object()) a = *args;
    names_by_id[id->get<std::string>()] = name->get<std::string>();
    out.push_back({{"id", *id},
                   {"type", "function"},
                   {"function", {{"name", *name}, {"arguments", std::move(a)}}}});
  }
  return out;
}

}  // namespace

ordered_json normalize_messages(const json& messages) {
  if (!messages.is_array() || messages.empty())
    bad_param("messages", "a non-empty list of messages");
  if (messages.size() > kMaxMessages) {
    bad_param("messages", "a list of at most " + std::to_string(kMaxMessages) + " messages");
  }
  ordered_json norm = ordered_json::array();
  std::map<std::string, std::string> names_by_id;  // assistant tool calls seen so far
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    const std::string at = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) bad_param("messages", "a list of objects with 'role' and 'content'");
    const auto role = m.find("role");
    if (role == m.end() || !role->is_string())
      bad_param("messages", "objects with a string 'role'");
    const auto& rs = role->get_ref<const std::string&>();
    if (rs != "system" && rs != "user" && rs != "assistant" && rs != "developer" && rs != "tool") {
      throw ApiError(400, "unsupported message role '" + rs + "' (system, user, assistant, tool)",
                     "messages");
    }
    // What each role takes (OpenAI's message objects, as far as folio
    // implements them); anything else is refused by name, never dropped.
    if (rs == "assistant") {
      refuse_other_keys(m, at, {"role", "content", "name", "tool_calls"});
    } else if (rs == "tool") {
      refuse_other_keys(m, at, {"role", "content", "tool_call_id", "name"});
    } else {
      refuse_other_keys(m, at, {"role", "content", "name"});
    }
    const json* content = member(m, "content");
    const json* calls = rs == "assistant" ? member(m, "tool_calls") : nullptr;
    if (!content && rs != "assistant") bad_param("messages", "objects with 'content'");
    ordered_json out = {{"role", rs == "developer" ? "system" : rs},
                        {"content", content ? content_text(*content, at + ".content") : ""}};
    if (calls) out["tool_calls"] = read_tool_calls(*calls, at + ".tool_calls", names_by_id);
    if (rs != "tool") {
      // A participant's name goes to the chat template as the message's
      // `name`, as in vLLM; the template decides whether the prompt shows it.
      if (const json* name = member(m, "name")) {
        if (!name->is_string()) bad_param(at + ".name", "a string");
        out["name"] = *name;
      }
    } else {
      const json* id = member(m, "tool_call_id");
      if (!id || !id->is_string()) bad_param(at + ".tool_call_id", "a string");
      out["tool_call_id"] = *id;
      if (const json* name = member(m, "name")) {
        if (!name->is_string()) bad_param(at + ".name", "a string");
        out["name"] = *name;
      } else if (auto it = names_by_id.find(id->get<std::string>()); it != names_by_id.end()) {
        out["name"] = it->second;
      }
    }
    norm.push_back(std::move(out));
  }
  return norm;
}

ToolFormat tool_format(const ModelContext& model) {
  return model.chat_template && model.chat_template->uses_tools() ? ToolFormat::kHermes
                                                                  : ToolFormat::kGeneric;
}

std::string render_chat(const json& messages, const ModelContext& model, bool add_generation_prompt,
                        const ToolRequest& tools) {
  if (!model.chat_template) {
    throw ApiError(400,
                   "this model has no chat template; pass --chat-template to the server "
                   "or use /v1/completions");
  }
  ordered_json norm = normalize_messages(messages);
  chat::RenderOptions ro;
  ro.add_generation_prompt = add_generation_prompt;
  ro.bos_token = model.bos_token;
  ro.eos_token = model.eos_token;
  const ordered_json shown = tools.active() ? tools.tools : ordered_json::array();
  if (model.chat_template->uses_tools()) {
    if (!shown.empty()) ro.extra["tools"] = shown;
  } else {
    norm = generic_tool_messages(norm, shown, tools.parallel);
  }
  try {
    return model.chat_template->render(norm, ro);
  } catch (const Error& e) {
    // Templates raise on bad conversations ("roles must alternate ..."): the client's fault.
    throw ApiError(400, std::string("chat template: ") + e.what(), "messages");
  }
}

}  // namespace folio::server
