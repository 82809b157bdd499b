// server/tool_prompt.cpp: rewriting a conversation into the generic tool format.
#include "server/tool_prompt.h"

namespace folio::server {
namespace {

using nlohmann::ordered_json;

// JSON text as the model is asked to write it (tool_calls arguments are
// objects once normalized; a non-object string stays a string).
std::string calls_text(const ordered_json& tool_calls) {
  ordered_json calls = ordered_json::array();
  for (const auto& tc : tool_calls) {
    const ordered_json& fn = tc["function"];
    ordered_json c = {{"name", fn["name"]}, {"arguments", fn["arguments"]}};
    if (tc.contains("id")) c["id"] = tc["id"];
    calls.push_back(std::move(c));
  }
  return ordered_json{{"tool_calls", std::move(calls)}}.dump();
}

std::string response_text(const ordered_json& m) {
  ordered_json r = ordered_json::object();
  if (m.contains("tool_call_id")) r["id"] = m["tool_call_id"];
  if (m.contains("name")) r["name"] = m["name"];
  r["content"] = m.value("content", "");
  return ordered_json{{"tool_response", std::move(r)}}.dump();
}

}  // namespace

std::string generic_tool_prompt(const ordered_json& tools, bool parallel) {
  std::string s =
      "You can call these tools (each line: a tool's name, description and the JSON Schema of "
      "its arguments):\n";
  for (const auto& t : tools) {
    const ordered_json& fn = t["function"];
    ordered_json line = {{"name", fn["name"]}};
    if (fn.contains("description")) line["description"] = fn["description"];
    line["parameters"] =
        fn.contains("parameters") ? fn["parameters"] : ordered_json{{"type", "object"}};
    s += line.dump() + "\n";
  }
  s += "\nAnswer with one JSON object and nothing else. To call tools:\n"
       "{\"tool_calls\": [{\"name\": \"<tool name>\", \"arguments\": {<arguments matching its "
       "schema>}}]}\n";
  s +=
      parallel ? "(list several calls to run them together)\n" : "(exactly one call in the list)\n";
  s += "To answer the user directly:\n"
       "{\"response\": \"<your answer>\"}\n"
       "Tool results come back as {\"tool_response\": {...}} messages.";
  return s;
}

ordered_json generic_tool_messages(const ordered_json& messages, const ordered_json& tools,
                                   bool parallel) {
  ordered_json out = ordered_json::array();
  bool last_was_result = false;
  for (const auto& m : messages) {
    const std::string role = m["role"].get<std::string>();
    if (role == "tool") {
      const std::string text = response_text(m);
      if (last_was_result) {
        out.back()["content"] = out.back()["content"].get<std::string>() + "\n" + text;
      } else {
        out.push_back({{"role", "user"}, {"content", text}});
      }
      last_was_result = true;
      continue;
    }
    last_was_result = false;
    if (role == "assistant" && m.contains("tool_calls")) {
      std::string text = m.value("content", "");
      text += (text.empty() ? "" : "\n") + calls_text(m["tool_calls"]);
      out.push_back({{"role", "assistant"}, {"content", text}});
      continue;
    }
    out.push_back(m);
  }
  if (tools.is_array() && !tools.empty()) {
    const std::string prompt = generic_tool_prompt(tools, parallel);
    if (!out.empty() && out[0]["role"] == "system") {
      out[0]["content"] = out[0]["content"].get<std::string>() + "\n\n" + prompt;
    } else {
      out.insert(out.begin(), ordered_json{{"role", "system"}, {"content", prompt}});
    }
  }
  return out;
}

}  // namespace folio::server
