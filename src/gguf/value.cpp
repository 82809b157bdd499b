#include "gguf/value.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "base/error.h"

namespace folio::gguf {

std::string_view value_type_name(ValueType type) {
  switch (type) {
    case ValueType::UINT8:
      return "uint8";
    case ValueType::INT8:
      return "int8";
    case ValueType::UINT16:
      return "uint16";
    case ValueType::INT16:
      return "int16";
    case ValueType::UINT32:
      return "uint32";
    case ValueType::INT32:
      return "int32";
    case ValueType::FLOAT32:
      return "float32";
    case ValueType::BOOL:
      return "bool";
    case ValueType::STRING:
      return "string";
    case ValueType::ARRAY:
      return "array";
    case ValueType::UINT64:
      return "uint64";
    case ValueType::INT64:
      return "int64";
    case ValueType::FLOAT64:
      return "float64";
  }
  return "unknown";
}

namespace {
[[noreturn]] void wrong_type(std::string_view what, ValueType got, std::string_view want) {
  throw Error("GGUF metadata '" + std::string(what) + "' has type " +
              std::string(value_type_name(got)) + ", expected " + std::string(want));
}
}  // namespace

bool Value::is_integer() const {
  return std::holds_alternative<std::uint64_t>(v_) || std::holds_alternative<std::int64_t>(v_);
}

std::int64_t Value::as_int(std::string_view what) const {
  if (const auto* u = std::get_if<std::uint64_t>(&v_)) {
    if (*u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      throw Error("GGUF metadata '" + std::string(what) + "' value " + std::to_string(*u) +
                  " is out of range");
    }
    return static_cast<std::int64_t>(*u);
  }
  if (const auto* i = std::get_if<std::int64_t>(&v_)) return *i;
  wrong_type(what, type_, "an integer");
}

std::uint64_t Value::as_uint(std::string_view what) const {
  if (const auto* u = std::get_if<std::uint64_t>(&v_)) return *u;
  if (const auto* i = std::get_if<std::int64_t>(&v_)) {
    if (*i < 0) {
      throw Error("GGUF metadata '" + std::string(what) + "' is negative (" + std::to_string(*i) +
                  "), expected a non-negative integer");
    }
    return static_cast<std::uint64_t>(*i);
  }
  wrong_type(what, type_, "an unsigned integer");
}

double Value::as_float(std::string_view what) const {
  if (const auto* d = std::get_if<double>(&v_)) return *d;
  if (const auto* u = std::get_if<std::uint64_t>(&v_)) return static_cast<double>(*u);
  if (const auto* i = std::get_if<std::int64_t>(&v_)) return static_cast<double>(*i);
  wrong_type(what, type_, "a number");
}

bool Value::as_bool(std::string_view what) const {
  if (const auto* b = std::get_if<bool>(&v_)) return *b;
  wrong_type(what, type_, "bool");
}

std::string_view Value::as_string(std::string_view what) const {
  if (const auto* s = std::get_if<std::string_view>(&v_)) return *s;
  wrong_type(what, type_, "string");
}

const Value::Array& Value::as_array(std::string_view what) const {
  if (const auto* a = std::get_if<Array>(&v_)) return *a;
  wrong_type(what, type_, "array");
}

std::string Value::to_string(std::size_t max_items) const {
  if (const auto* u = std::get_if<std::uint64_t>(&v_)) return std::to_string(*u);
  if (const auto* i = std::get_if<std::int64_t>(&v_)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v_)) {
    // Shortest text that reads back to the same value, in the stored width
    // (std::to_string's fixed 6 decimals would print 1e-7 as "0.000000").
    char buf[64];
    const auto r = type_ == ValueType::FLOAT32
                       ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(*d))
                       : std::to_chars(buf, buf + sizeof buf, *d);
    return std::string(buf, r.ptr);
  }
  if (const auto* b = std::get_if<bool>(&v_)) return *b ? "true" : "false";
  if (const auto* s = std::get_if<std::string_view>(&v_)) {
    constexpr std::size_t kMax = 60;
    std::string out = "\"";
    for (char c : s->substr(0, kMax)) out += (c == '\n') ? std::string("\\n") : std::string(1, c);
    if (s->size() > kMax) out += "...";
    return out + "\"";
  }
  const auto& a = std::get<Array>(v_);
  std::string out =
      "[" + std::string(value_type_name(elem_type_)) + " x " + std::to_string(a.size()) + "]";
  if (max_items == 0) return out;
  out += " {";
  for (std::size_t k = 0; k < a.size() && k < max_items; ++k) {
    if (k) out += ", ";
    out += a[k].to_string(0);
  }
  if (a.size() > max_items) out += ", ...";
  return out + "}";
}

}  // namespace folio::gguf
