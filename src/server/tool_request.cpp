// server/tool_request.cpp: validating tools and tool_choice.
#include "server/tool_request.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "server/api_error.h"

namespace folio::server {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// OpenAI's rule for function names: a-z, A-Z, 0-9, underscores and dashes, at most 64.
bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (unsigned char c : s) {
    if (!(std::isalnum(c) || c == '_' || c == '-')) return false;
  }
  return true;
}

ordered_json read_function(const json& fn, const std::string& at) {
  if (!fn.is_object()) bad_param(at, "an object with 'name'");
  ordered_json out = ordered_json::object();
  const auto name = fn.find("name");
  if (name == fn.end() || !name->is_string() || !valid_name(name->get<std::string>())) {
    bad_param(at + ".name", "a string of 1 to 64 letters, digits, '_' or '-'");
  }
  out["name"] = *name;
  for (const auto& [key, val] : fn.items()) {
    if (key == "name" || val.is_null()) continue;
    if (key == "description") {
      if (!val.is_string()) bad_param(at + ".description", "a string");
    } else if (key == "parameters") {
      if (!val.is_object()) bad_param(at + ".parameters", "a JSON Schema object");
    } else if (key == "strict") {
      if (!val.is_boolean()) bad_param(at + ".strict", "a boolean");
    } else {
      throw ApiError(400, "unsupported field '" + at + "." + key + "'", at + "." + key);
    }
    out[key] = ordered_json::parse(val.dump());  // keep the schema's key order for the prompt
  }
  return out;
}

ordered_json read_tools(const json& tools) {
  if (!tools.is_array())
    bad_param("tools", "a list of {\"type\": \"function\", \"function\": {...}}");
  if (tools.size() > kMaxTools)
    bad_param("tools", "at most " + std::to_string(kMaxTools) + " tools");
  ordered_json out = ordered_json::array();
  std::set<std::string> seen;
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const std::string at = "tools[" + std::to_string(i) + "]";
    const json& t = tools[i];
    if (!t.is_object()) bad_param(at, "an object {\"type\": \"function\", \"function\": {...}}");
    refuse_other_keys(t, at, {"type", "function"});
    const auto type = t.find("type");
    if (type == t.end() || *type != "function") bad_param(at + ".type", "\"function\"");
    const auto fn = t.find("function");
    if (fn == t.end()) bad_param(at + ".function", "an object with 'name'");
    ordered_json f = read_function(*fn, at + ".function");
    if (!seen.insert(f["name"].get<std::string>()).second)
      bad_param(at + ".function.name",
                "unique among tools ('" + f["name"].get<std::string>() + "')");
    out.push_back({{"type", "function"}, {"function", std::move(f)}});
  }
  return out;
}

void read_choice(const json* c, ToolRequest& r) {
  r.choice = r.tools.empty() ? ToolChoice::kNone : ToolChoice::kAuto;
  if (!c) return;
  if (c->is_string()) {
    const auto& s = c->get_ref<const std::string&>();
    if (s == "none") {
      r.choice = ToolChoice::kNone;
      return;
    }
    if (s == "auto") {
      r.choice = ToolChoice::kAuto;
    } else if (s == "required") {
      r.choice = ToolChoice::kRequired;
    } else {
      bad_param("tool_choice", "\"none\", \"auto\", \"required\" or {\"type\": \"function\", ...}");
    }
  } else if (c->is_object()) {
    const auto type = c->find("type");
    const auto fn = c->find("function");
    if (type == c->end() || *type != "function") bad_param("tool_choice.type", "\"function\"");
    if (fn == c->end() || !fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string()) {
      bad_param("tool_choice.function.name", "a string");
    }
    refuse_other_keys(*c, "tool_choice", {"type", "function"});
    refuse_other_keys(*fn, "tool_choice.function", {"name"});
    r.choice = ToolChoice::kNamed;
    r.forced_name = (*fn)["name"].get<std::string>();
  } else {
    bad_param("tool_choice", "\"none\", \"auto\", \"required\" or {\"type\": \"function\", ...}");
  }
  if (r.tools.empty()) {
    throw ApiError(400, "'tool_choice' other than \"none\" needs 'tools'", "tool_choice");
  }
  if (r.choice == ToolChoice::kNamed) {
    const auto names = r.names();
    if (std::find(names.begin(), names.end(), r.forced_name) == names.end()) {
      throw ApiError(400, "'tool_choice.function.name' names no tool: '" + r.forced_name + "'",
                     "tool_choice.function.name");
    }
  }
}

}  // namespace

std::vector<std::string> ToolRequest::names() const {
  std::vector<std::string> out;
  for (const auto& t : tools) out.push_back(t["function"]["name"].get<std::string>());
  return out;
}

ToolRequest read_tool_request(Fields& f) {
  for (const char* old : {"functions", "function_call"}) {
    if (f.get(old)) {
      throw ApiError(400,
                     std::string("'") + old + "' (deprecated by OpenAI) is not supported; use " +
                         (old[8] == 's' ? "'tools'" : "'tool_choice'"),
                     old);
    }
  }
  ToolRequest r;
  if (const json* t = f.get("tools")) r.tools = read_tools(*t);
  read_choice(f.get("tool_choice"), r);
  if (auto p = f.boolean("parallel_tool_calls")) r.parallel = *p;
  return r;
}

}  // namespace folio::server
