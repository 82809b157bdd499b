// server/tool_calls.cpp: parsing the generic and Hermes tool-call forms.
#include "server/tool_calls.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

namespace folio::server {
namespace {

using nlohmann::json;

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";

std::string_view trim(std::string_view s) {
  const auto ws = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (!s.empty() && ws(s.front())) s.remove_prefix(1);
  while (!s.empty() && ws(s.back())) s.remove_suffix(1);
  return s;
}

std::optional<json> parse_json(std::string_view s) {
  json j = json::parse(s.begin(), s.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

// {"name": <a tool>, "arguments": <object or a string holding one>} -> a call.
// ("parameters" is accepted for "arguments": Llama-style models write it.)
std::optional<ToolCall> read_call(const json& c, const std::vector<std::string>& names) {
  if (!c.is_object()) return std::nullopt;
  const auto name = c.find("name");
  if (name == c.end() || !name->is_string()) return std::nullopt;
  const std::string n = name->get<std::string>();
  if (std::find(names.begin(), names.end(), n) == names.end()) return std::nullopt;
  auto args = c.find("arguments");
  if (args == c.end()) args = c.find("parameters");
  if (args == c.end()) return std::nullopt;
  json obj = *args;
  if (obj.is_string()) {
    auto inner = parse_json(obj.get<std::string>());
    if (!inner) return std::nullopt;
    obj = std::move(*inner);
  }
  if (!obj.is_object()) return std::nullopt;
  return ToolCall{.id = {}, .name = n, .arguments = obj.dump()};
}

ParsedOutput plain(std::string_view text) {
  return ParsedOutput{std::string(text), {}};
}

ParsedOutput parse_generic(std::string_view text, const std::vector<std::string>& names) {
  const auto j = parse_json(trim(text));
  if (!j || !j->is_object()) return plain(text);
  if (const auto calls = j->find("tool_calls"); calls != j->end()) {
    if (!calls->is_array() || calls->empty()) return plain(text);
    ParsedOutput out;
    for (const json& c : *calls) {
      auto call = read_call(c, names);
      if (!call) return plain(text);
      out.calls.push_back(std::move(*call));
    }
    return out;
  }
  if (const auto call = j->find("tool_call"); call != j->end()) {
    auto one = read_call(*call, names);
    if (!one) return plain(text);
    return ParsedOutput{{}, {std::move(*one)}};
  }
  if (const auto r = j->find("response"); r != j->end() && r->is_string() && j->size() == 1) {
    return plain(r->get<std::string>());
  }
  return plain(text);
}

ParsedOutput parse_hermes(std::string_view text, const std::vector<std::string>& names) {
  ParsedOutput out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t open = text.find(kOpen, pos);
    if (open == std::string_view::npos) {
      out.content += text.substr(pos);
      break;
    }
    out.content += text.substr(pos, open - pos);
    const std::size_t body = open + kOpen.size();
    const std::size_t close = text.find(kClose, body);
    const std::string_view inner =
        text.substr(body, close == std::string_view::npos ? std::string_view::npos : close - body);
    const auto j = parse_json(trim(inner));
    auto call = j ? read_call(*j, names) : std::nullopt;
    if (!call) return plain(text);
    out.calls.push_back(std::move(*call));
    if (close == std::string_view::npos) break;
    pos = close + kClose.size();
  }
  if (out.calls.empty()) return plain(text);
  out.content = std::string(trim(out.content));
  return out;
}

}  // namespace

ParsedOutput parse_tool_calls(std::string_view text, ToolFormat format,
                              const std::vector<std::string>& names) {
  return format == ToolFormat::kGeneric ? parse_generic(text, names) : parse_hermes(text, names);
}

std::string new_tool_call_id(std::mt19937_64& rng) {
  static constexpr std::string_view kChars =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::uniform_int_distribution<std::size_t> pick(0, kChars.size() - 1);
  std::string id = "call_";
  for (int i = 0; i < 24; ++i) id += kChars[pick(rng)];
  return id;
}

}  // namespace folio::server
