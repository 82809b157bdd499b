// gguf/value.h: one GGUF metadata value (scalar, string or nested array).
//
// Strings are views into the mapped file, so a Value must not outlive the
// GgufFile it came from. Arrays hold their elements; the reader bounds their
// count by the bytes left in the file, so no array is larger than the file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace folio::gguf {

enum class ValueType : std::uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};

std::string_view value_type_name(ValueType type);

class Value {
 public:
  using Array = std::vector<Value>;

  Value() = default;
  static Value of_uint(ValueType t, std::uint64_t v) { return Value(t, v); }
  static Value of_int(ValueType t, std::int64_t v) { return Value(t, v); }
  static Value of_float(ValueType t, double v) { return Value(t, v); }
  static Value of_bool(bool v) { return Value(ValueType::BOOL, v); }
  static Value of_string(std::string_view v) { return Value(ValueType::STRING, v); }
  static Value of_array(ValueType elem_type, Array v) {
    Value out(ValueType::ARRAY, std::move(v));
    out.elem_type_ = elem_type;
    return out;
  }

  ValueType type() const { return type_; }
  ValueType elem_type() const { return elem_type_; }  // arrays only
  bool is_integer() const;
  bool is_float() const { return type_ == ValueType::FLOAT32 || type_ == ValueType::FLOAT64; }

  // Typed access. `what` names the value in the error (e.g. the metadata key).
  // Integers convert between widths only when the value fits.
  std::int64_t as_int(std::string_view what) const;
  std::uint64_t as_uint(std::string_view what) const;
  double as_float(std::string_view what) const;  // floats, and integers exactly representable
  bool as_bool(std::string_view what) const;
  std::string_view as_string(std::string_view what) const;
  const Array& as_array(std::string_view what) const;

  // Human-readable rendering, arrays abbreviated after `max_items`.
  std::string to_string(std::size_t max_items = 8) const;

 private:
  template <typename T>
  Value(ValueType t, T v) : type_(t), v_(std::move(v)) {}

  ValueType type_ = ValueType::UINT8;
  ValueType elem_type_ = ValueType::UINT8;
  std::variant<std::uint64_t, std::int64_t, double, bool, std::string_view, Array> v_;
};

}  // namespace folio::gguf
