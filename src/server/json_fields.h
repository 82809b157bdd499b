// server/json_fields.h: bounded JSON parsing and typed field access.
//
// Request bodies are untrusted: parse_body() rejects invalid JSON, invalid
// UTF-8 (the JSON grammar requires UTF-8; we answer 400 rather than guess a
// replacement) and nesting deeper than kMaxJsonDepth. Fields are read through
// Fields, which checks type and range and throws ApiError(400) naming the
// parameter, so a handler reads like a list of declarations.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace folio::server {

inline constexpr int kMaxJsonDepth = 64;

// Parses a request body that must be a JSON object; throws ApiError(400).
nlohmann::json parse_body(std::string_view body);
// The same, keeping the order of object keys (JSON schemas' properties);
// call after parse_body has accepted the body.
nlohmann::ordered_json parse_body_ordered(std::string_view body);

class Fields {
 public:
  explicit Fields(const nlohmann::json& obj) : obj_(obj) {}

  const nlohmann::json* get(const char* name);  // nullptr when absent or null
  std::optional<std::int64_t> integer(const char* name, std::int64_t lo, std::int64_t hi);
  std::optional<double> number(const char* name, double lo, double hi);
  std::optional<bool> boolean(const char* name);
  std::optional<std::string> string(const char* name);
  // A string or a list of strings (OpenAI `stop`).
  std::vector<std::string> strings(const char* name, std::size_t max_items);
  std::vector<std::int32_t> int_list(const char* name, std::int32_t lo, std::int32_t hi,
                                     std::size_t max_items);

  // Names present (not null) in the object but never asked for: fields the
  // caller does not implement, which it refuses.
  std::vector<std::string> unread() const;
  // Throws ApiError(400) naming the unread fields, if any: a field folio
  // does not implement is refused, never ignored.
  void refuse_unread() const;

 private:
  const nlohmann::json& obj_;
  std::set<std::string, std::less<>> read_;
};

// Throws ApiError(400) naming `at`.key for the first key of the object `obj`
// that is not null and not in `known`: a nested object (a message, a content
// part, a tool call) refuses what folio does not implement, as Fields does
// for the request's top level.
void refuse_other_keys(const nlohmann::json& obj, const std::string& at,
                       std::initializer_list<std::string_view> known);

// Throws ApiError(400) "`name` must be <what>".
[[noreturn]] void bad_param(const std::string& name, const std::string& what);

// Reads an integer token id list element-wise from `j` (no bounds besides type/range).
std::vector<std::int32_t> token_ids(const nlohmann::json& j, const char* name, std::int32_t vocab);

}  // namespace folio::server
