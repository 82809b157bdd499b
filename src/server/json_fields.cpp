// server/json_fields.cpp: bounded parsing and typed access for request bodies.
#include "server/json_fields.h"

#include <algorithm>
#include <cmath>

#include "server/api_error.h"

namespace folio::server {

nlohmann::json parse_body(std::string_view body) {
  // The callback sees the depth of every value; refusing deep nesting here
  // bounds the parser's stack and the DOM before they grow.
  const auto depth_guard = [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > kMaxJsonDepth) {
      throw ApiError(400, "JSON nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    return true;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(body.begin(), body.end(), depth_guard);
  } catch (const nlohmann::json::exception& e) {
    throw ApiError(400, std::string("invalid JSON in request body: ") + e.what());
  }
  if (!j.is_object()) throw ApiError(400, "request body must be a JSON object");
  return j;
}

nlohmann::ordered_json parse_body_ordered(std::string_view body) {
  const auto depth_guard = [](int depth, nlohmann::ordered_json::parse_event_t,
                              nlohmann::ordered_json&) {
    if (depth > kMaxJsonDepth) {
      throw ApiError(400, "JSON nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    return true;
  };
  try {
    return nlohmann::ordered_json::parse(body.begin(), body.end(), depth_guard);
  } catch (const nlohmann::json::exception& e) {
    throw ApiError(400, std::string("invalid JSON in request body: ") + e.what());
  }
}

void bad_param(const std::string& name, const std::string& what) {
  throw ApiError(400, std::string("'") + name + "' must be " + what, name);
}

void refuse_other_keys(const nlohmann::json& obj, const std::string& at,
                       std::initializer_list<std::string_view> known) {
  for (const auto& [key, val] : obj.items()) {
    if (val.is_null() || std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string allowed;
    for (std::string_view k : known) allowed += (allowed.empty() ? "" : ", ") + std::string(k);
    throw ApiError(400,
                   "unsupported field '" + at + "." + key + "': folio does not implement it (" +
                       at + " takes " + allowed + ")",
                   at + "." + key);
  }
}

const nlohmann::json* Fields::get(const char* name) {
  read_.insert(name);
  const auto it = obj_.find(name);
  if (it == obj_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<std::int64_t> Fields::integer(const char* name, std::int64_t lo, std::int64_t hi) {
  const nlohmann::json* v = get(name);
  if (!v) return std::nullopt;
  const std::string range =
      "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  // JSON has one number type: accept 3.0 but not 3.5 (as pydantic does).
  std::int64_t x = 0;
  if (v->is_number_unsigned()) {
    const auto u = v->get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(hi)) bad_param(name, range);
    x = static_cast<std::int64_t>(u);
  } else if (v->is_number_integer()) {
    x = v->get<std::int64_t>();
  } else if (v->is_number_float()) {
    // An integer literal past int64 parses as a double that may round onto
    // the bound (-9223372036854775809 -> -2^63), and 2^63 itself does not
    // convert: no double of that magnitude is taken (found by schemathesis).
    const double d = v->get<double>();
    constexpr double kTwo63 = 9223372036854775808.0;
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) >= kTwo63 ||
        d < static_cast<double>(lo) || d > static_cast<double>(hi)) {
      bad_param(name, range);
    }
    x = static_cast<std::int64_t>(d);
  } else {
    bad_param(name, range);
  }
  if (x < lo || x > hi) bad_param(name, range);
  return x;
}

std::optional<double> Fields::number(const char* name, double lo, double hi) {
  const nlohmann::json* v = get(name);
  if (!v) return std::nullopt;
  if (!v->is_number()) bad_param(name, "a number");
  const double d = v->get<double>();
  if (!std::isfinite(d) || d < lo || d > hi) {
    bad_param(name,
              "a number in [" + nlohmann::json(lo).dump() + ", " + nlohmann::json(hi).dump() + "]");
  }
  return d;
}

std::optional<bool> Fields::boolean(const char* name) {
  const nlohmann::json* v = get(name);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) bad_param(name, "a boolean");
  return v->get<bool>();
}

std::optional<std::string> Fields::string(const char* name) {
  const nlohmann::json* v = get(name);
  if (!v) return std::nullopt;
  if (!v->is_string()) bad_param(name, "a string");
  return v->get<std::string>();
}

std::vector<std::string> Fields::strings(const char* name, std::size_t max_items) {
  const nlohmann::json* v = get(name);
  std::vector<std::string> out;
  if (!v) return out;
  if (v->is_string()) {
    out.push_back(v->get<std::string>());
    return out;
  }
  if (!v->is_array()) bad_param(name, "a string or a list of strings");
  if (v->size() > max_items)
    bad_param(name, "a list of at most " + std::to_string(max_items) + " strings");
  for (const auto& s : *v) {
    if (!s.is_string()) bad_param(name, "a string or a list of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

std::vector<std::int32_t> Fields::int_list(const char* name, std::int32_t lo, std::int32_t hi,
                                           std::size_t max_items) {
  const nlohmann::json* v = get(name);
  std::vector<std::int32_t> out;
  if (!v) return out;
  if (!v->is_array() || v->size() > max_items) {
    bad_param(name, "a list of at most " + std::to_string(max_items) + " integers");
  }
  for (const auto& x : *v) {
    if (!x.is_number_integer() || x.get<std::int64_t>() < lo || x.get<std::int64_t>() > hi) {
      bad_param(name,
                "a list of integers in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    out.push_back(static_cast<std::int32_t>(x.get<std::int64_t>()));
  }
  return out;
}

void Fields::refuse_unread() const {
  const std::vector<std::string> unknown = unread();
  if (unknown.empty()) return;
  std::string names;
  for (const std::string& n : unknown) names += (names.empty() ? "'" : ", '") + n + "'";
  throw ApiError(400,
                 "unsupported request field" + std::string(unknown.size() > 1 ? "s " : " ") +
                     names + ": folio does not implement " + (unknown.size() > 1 ? "them" : "it"),
                 unknown.front());
}

std::vector<std::string> Fields::unread() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : obj_.items()) {
    if (!read_.contains(k) && !v.is_null()) out.push_back(k);
  }
  return out;
}

std::vector<std::int32_t> token_ids(const nlohmann::json& j, const char* name, std::int32_t vocab) {
  std::vector<std::int32_t> out;
  out.reserve(j.size());
  for (const auto& x : j) {
    if (!x.is_number_integer()) bad_param(name, "a list of token ids (integers)");
    const auto id = x.get<std::int64_t>();
    if (x.is_number_unsigned() && x.get<std::uint64_t>() > static_cast<std::uint64_t>(vocab)) {
      bad_param(name, "token ids in [0, " + std::to_string(vocab) + ")");
    }
    if (id < 0 || id >= vocab) {
      bad_param(name, "token ids in [0, " + std::to_string(vocab) + "), got " + std::to_string(id));
    }
    out.push_back(static_cast<std::int32_t>(id));
  }
  return out;
}

}  // namespace folio::server
