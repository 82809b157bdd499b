// chat/value.h: the dynamic value type of the template interpreter.
//
// Mirrors the Python objects a Jinja2 chat template sees: undefined, None,
// bool, int, float, str, list and dict. Lists and dicts are shared by
// reference (copying a Value copies a pointer), as in Python, which is what
// makes `namespace()` objects mutable across scopes. Dicts keep insertion
// order, like Python's, because tojson output depends on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace folio::chat {

class Value {
 public:
  enum class Kind : std::uint8_t {
    kUndefined,
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kArray,
    kObject
  };
  using Array = std::vector<Value>;
  using Object = std::vector<std::pair<std::string, Value>>;

  Value() = default;  // undefined
  Value(const Value&) = default;
  Value(Value&&) noexcept = default;
  Value& operator=(const Value&) = default;
  Value& operator=(Value&&) noexcept = default;
  // The last owner of a list or dict takes the lists and dicts inside it
  // apart iteratively: a loop can nest a list a million levels deep
  // (`{% set ns.l = [ns.l] %}`), which a recursive destructor would
  // overflow the stack on.
  ~Value();
  static Value none() { return Value(Kind::kNone); }
  static Value boolean(bool b);
  static Value integer(std::int64_t i);
  static Value number(double f);
  static Value string(std::string s);
  static Value array(Array a = {});
  static Value tuple(Array a);  // a list that prints as (a, b), like dict.items() pairs
  static Value object(Object o = {});
  static Value from_json(const nlohmann::ordered_json& j);  // keeps key order

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_number() const { return is_int() || is_float() || is_bool(); }  // Python: bool is an int
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_array() const { return kind_ == Kind::kArray; }
  bool is_object() const { return kind_ == Kind::kObject; }
  bool is_tuple() const { return tuple_; }

  bool as_bool() const { return b_; }
  std::int64_t as_int() const { return is_float() ? static_cast<std::int64_t>(f_) : i_; }
  double as_double() const { return is_float() ? f_ : static_cast<double>(i_); }
  const std::string& str() const { return s_; }
  const Array& items() const { return *a_; }
  const Object& entries() const { return *o_; }

  const Value* find(std::string_view key) const;  // dict lookup; nullptr when absent
  // The same list or dict object (Python's `is`, for lists and dicts).
  bool same_object(const Value& o) const { return (a_ && a_ == o.a_) || (o_ && o_ == o.o_); }
  void set(const std::string& key, Value v);  // dict insert or overwrite

  bool truthy() const;
  std::size_t size() const;  // len(): code points for strings

  // Python str() (what {{ }} prints) and repr() (used inside lists/dicts).
  // Lists and dicts are shared, so a few levels of [a, a, ...] print
  // exponentially many items and a namespace may hold itself: printing
  // throws folio::Error once the text passes `max_bytes` or the nesting
  // passes kMaxNesting, instead of exhausting memory or the stack.
  std::string to_str(std::size_t max_bytes) const;
  std::string repr(std::size_t max_bytes) const;

  const char* type_name() const;

 private:
  explicit Value(Kind k) : kind_(k) {}
  Kind kind_ = Kind::kUndefined;
  bool b_ = false;
  bool tuple_ = false;
  std::int64_t i_ = 0;  // also holds bools as 0/1 so arithmetic on them works
  double f_ = 0.0;
  std::string s_;
  std::shared_ptr<Array> a_;
  std::shared_ptr<Object> o_;
};

// Deepest nesting of lists and dicts that printing, comparing and tojson
// follow (a namespace can be made to hold itself; deeper is an error).
inline constexpr int kMaxNesting = 200;

// The element comparisons equals() and less() may still make on this thread,
// while one is alive: one per render (Interpreter::render), so that no
// template, however it nests shared lists or loops over comparisons, compares
// for longer than `steps` element steps. Beyond, they throw folio::Error.
// Without one (a direct call), only the nesting is bounded.
class ComparisonBudget {
 public:
  explicit ComparisonBudget(std::size_t steps);
  ~ComparisonBudget();
  ComparisonBudget(const ComparisonBudget&) = delete;
  ComparisonBudget& operator=(const ComparisonBudget&) = delete;

  void spend();  // one step; throws once the budget is spent

 private:
  std::size_t limit_;
  std::size_t left_;
  ComparisonBudget* outer_;
};

// Python ==, and ordering (<) for numbers, strings and lists; ordering other
// types throws folio::Error (the caller adds the template position), as does
// nesting deeper than kMaxNesting and a spent ComparisonBudget. A list or
// dict equals itself without a look inside (as Python's list compare does).
bool equals(const Value& a, const Value& b);
bool less(const Value& a, const Value& b);

// Python repr() of a float ("1.0", "0.1", "1e+16").
std::string float_repr(double f);

// json.dumps(v, ensure_ascii=False, indent=indent, sort_keys=sort_keys), as
// transformers' tojson filter does. indent < 0: single line. Throws
// folio::Error once the text passes `max_bytes` (checked while writing).
std::string to_json(const Value& v, int indent, bool sort_keys, std::size_t max_bytes);

// Number of UTF-8 code points (Python len() of str).
std::size_t utf8_length(std::string_view s);

}  // namespace folio::chat
