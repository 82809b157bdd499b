// chat/value.cpp: construction, destruction, Python str/repr, equality, JSON output.
#include "chat/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace folio::chat {

Value Value::boolean(bool b) {
  Value v(Kind::kBool);
  v.b_ = b;
  v.i_ = b ? 1 : 0;
  return v;
}
Value Value::integer(std::int64_t i) {
  Value v(Kind::kInt);
  v.i_ = i;
  return v;
}
Value Value::number(double f) {
  Value v(Kind::kFloat);
  v.f_ = f;
  return v;
}
Value Value::string(std::string s) {
  Value v(Kind::kString);
  v.s_ = std::move(s);
  return v;
}

Value::~Value() {
  const auto owns_nested = [](const Value& v) {
    return (v.a_ && v.a_.use_count() == 1 && !v.a_->empty()) ||
           (v.o_ && v.o_.use_count() == 1 && !v.o_->empty());
  };
  if (!owns_nested(*this)) return;
  std::vector<Value> pending;  // containers whose last owner is being destroyed
  const auto take_apart = [&pending](Value& v) {
    if (v.a_ && v.a_.use_count() == 1) {
      for (Value& x : *v.a_) {
        if (x.a_ || x.o_) pending.push_back(std::move(x));
      }
      v.a_->clear();
    }
    if (v.o_ && v.o_.use_count() == 1) {
      for (auto& [k, x] : *v.o_) {
        if (x.a_ || x.o_) pending.push_back(std::move(x));
      }
      v.o_->clear();
    }
  };
  take_apart(*this);
  while (!pending.empty()) {
    Value v = std::move(pending.back());
    pending.pop_back();
    take_apart(v);  // v is destroyed empty: no recursion
  }
}

Value Value::array(Array a) {
  Value v(Kind::kArray);
  v.a_ = std::make_shared<Array>(std::move(a));
  return v;
}
Value Value::tuple(Array a) {
  Value v = array(std::move(a));
  v.tuple_ = true;
  return v;
}

Value Value::object(Object o) {
  Value v(Kind::kObject);
  v.o_ = std::make_shared<Object>(std::move(o));
  return v;
}

Value Value::from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return none();
    case nlohmann::ordered_json::value_t::boolean:
      return boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return integer(j.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned:
      return integer(static_cast<std::int64_t>(j.get<std::uint64_t>()));
    case nlohmann::ordered_json::value_t::number_float:
      return number(j.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return string(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      Array a;
      for (const auto& x : j) a.push_back(from_json(x));
      return array(std::move(a));
    }
    case nlohmann::ordered_json::value_t::object: {
      Object o;
      for (auto it = j.begin(); it != j.end(); ++it) o.emplace_back(it.key(), from_json(*it));
      return object(std::move(o));
    }
    default:
      return Value();
  }
}

const Value* Value::find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& [k, v] : *o_) {
    if (k == key) return &v;
  }
  return nullptr;
}

void Value::set(const std::string& key, Value v) {
  FOLIO_CHECK(is_object(), "set on a non-dict value");
  for (auto& [k, old] : *o_) {
    if (k == key) {
      old = std::move(v);
      return;
    }
  }
  o_->emplace_back(key, std::move(v));
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return b_;
    case Kind::kInt:
      return i_ != 0;
    case Kind::kFloat:
      return f_ != 0.0;
    case Kind::kString:
      return !s_.empty();
    case Kind::kArray:
      return !a_->empty();
    case Kind::kObject:
      return !o_->empty();
  }
  return false;
}

std::size_t utf8_length(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::size_t Value::size() const {
  switch (kind_) {
    case Kind::kString:
      return utf8_length(s_);
    case Kind::kArray:
      return a_->size();
    case Kind::kObject:
      return o_->size();
    default:
      return 0;
  }
}

std::string float_repr(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  // Shortest round-trip digits, then Python's layout: fixed notation for
  // decimal exponents in [-4, 16), scientific otherwise.
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  const auto e_at = sci.find('e');
  const int exp = std::stoi(sci.substr(e_at + 1));
  std::string mant = sci.substr(0, e_at);
  const bool neg = mant[0] == '-';
  if (neg) mant.erase(0, 1);
  std::string digits;
  for (char c : mant) {
    if (c != '.') digits += c;
  }
  std::string out;
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      if (digits.size() <= static_cast<std::size_t>(exp) + 1) {
        out = digits + std::string(static_cast<std::size_t>(exp) + 1 - digits.size(), '0') + ".0";
      } else {
        out = digits.substr(0, static_cast<std::size_t>(exp) + 1) + "." +
              digits.substr(static_cast<std::size_t>(exp) + 1);
      }
    } else {
      out = "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += eb;
  }
  return neg ? "-" + out : out;
}

namespace {

std::string py_quote(const std::string& s) {
  const bool dq = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char q = dq ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == static_cast<unsigned char>(q))
      out += std::string("\\") + static_cast<char>(q);
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + static_cast<char>(q);
}

}  // namespace

namespace {

// Appends repr(v); `depth` is v's nesting below the value being printed.
void repr_into(const Value& v, std::size_t max_bytes, int depth, std::string& out) {
  if (depth > kMaxNesting) throw Error("value nested too deeply to print");
  // Every list or dict adds at least two bytes, so this also bounds the work.
  if (out.size() > max_bytes) throw Error("value too large to print");
  switch (v.kind()) {
    case Value::Kind::kString:
      out += py_quote(v.str());
      return;
    case Value::Kind::kArray: {
      out += v.is_tuple() ? "(" : "[";
      for (std::size_t i = 0; i < v.items().size(); ++i) {
        if (i > 0) out += ", ";
        repr_into(v.items()[i], max_bytes, depth + 1, out);
      }
      if (v.is_tuple() && v.items().size() == 1) out += ",";
      out += v.is_tuple() ? ")" : "]";
      return;
    }
    case Value::Kind::kObject: {
      out += "{";
      bool first = true;
      for (const auto& [k, x] : v.entries()) {
        out += (first ? "" : ", ") + py_quote(k) + ": ";
        repr_into(x, max_bytes, depth + 1, out);
        first = false;
      }
      out += "}";
      return;
    }
    default:
      out += v.to_str(max_bytes);
  }
}

}  // namespace

std::string Value::repr(std::size_t max_bytes) const {
  std::string out;
  repr_into(*this, max_bytes, 0, out);
  if (out.size() > max_bytes) throw Error("value too large to print");
  return out;
}

std::string Value::to_str(std::size_t max_bytes) const {
  switch (kind_) {
    case Kind::kUndefined:
      return "";
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return b_ ? "True" : "False";
    case Kind::kInt:
      return std::to_string(i_);
    case Kind::kFloat:
      return float_repr(f_);
    case Kind::kString:
      return s_;
    default:
      return repr(max_bytes);
  }
}

const char* Value::type_name() const {
  switch (kind_) {
    case Kind::kUndefined:
      return "undefined";
    case Kind::kNone:
      return "none";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "string";
    case Kind::kArray:
      return "list";
    case Kind::kObject:
      return "dict";
  }
  return "?";
}

namespace {

// The budget of the render running on this thread; nullptr when none.
thread_local ComparisonBudget* active_budget = nullptr;

void spend_step() {
  if (active_budget) active_budget->spend();
}

bool equals_at(const Value& a, const Value& b, int depth) {
  spend_step();
  if (a.same_object(b)) return true;
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  if (depth > kMaxNesting) throw Error("values nested too deeply to compare");
  switch (a.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone:
      return true;
    case Value::Kind::kString:
      return a.str() == b.str();
    case Value::Kind::kArray:
      if (a.is_tuple() != b.is_tuple()) return false;  // Python: (1,) != [1]
      return std::equal(a.items().begin(), a.items().end(), b.items().begin(), b.items().end(),
                        [&](const Value& x, const Value& y) { return equals_at(x, y, depth + 1); });
    case Value::Kind::kObject: {
      if (a.entries().size() != b.entries().size()) return false;
      for (const auto& [k, v] : a.entries()) {
        const Value* o = b.find(k);
        if (!o || !equals_at(v, *o, depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

bool less_at(const Value& a, const Value& b, int depth) {
  spend_step();
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) return a.str() < b.str();  // bytewise = code point order
  if (a.is_array() && b.is_array()) {
    if (depth > kMaxNesting) throw Error("values nested too deeply to compare");
    return std::lexicographical_compare(
        a.items().begin(), a.items().end(), b.items().begin(), b.items().end(),
        [&](const Value& x, const Value& y) { return less_at(x, y, depth + 1); });
  }
  throw Error(std::string("cannot order ") + a.type_name() + " and " + b.type_name());
}

}  // namespace

ComparisonBudget::ComparisonBudget(std::size_t steps)
    : limit_(steps), left_(steps), outer_(active_budget) {
  active_budget = this;
}

ComparisonBudget::~ComparisonBudget() {
  active_budget = outer_;
}

void ComparisonBudget::spend() {
  if (left_ == 0) {
    throw Error("comparisons exceed the limit of " + std::to_string(limit_) +
                " element steps in one render");
  }
  --left_;
}

bool equals(const Value& a, const Value& b) {
  return equals_at(a, b, 0);
}

bool less(const Value& a, const Value& b) {
  return less_at(a, b, 0);
}

namespace {

void json_string(const std::string& s, std::string& out) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          out += b;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

struct JsonStyle {
  int indent;  // < 0: one line
  bool sort_keys;
  std::size_t max_bytes;
};

// A newline and `level` indents (nothing on one line), refused before it is
// built when it alone would pass max_bytes (tojson(indent=10**9)).
std::string json_break(const JsonStyle& st, int level) {
  if (st.indent < 0) return "";
  const std::size_t spaces = static_cast<std::size_t>(st.indent) * static_cast<std::size_t>(level);
  if (spaces > st.max_bytes) throw Error("tojson: result too large");
  return "\n" + std::string(spaces, ' ');
}

void json_write(const Value& v, const JsonStyle& st, int depth, std::string& out) {
  if (depth > kMaxNesting) throw Error("tojson: value nested too deeply");
  // Every value adds at least one byte, so this also bounds the work on
  // shared lists ([a, a, ...] nested a few levels).
  if (out.size() > st.max_bytes) throw Error("tojson: result too large");
  const char* sep = st.indent >= 0 ? "," : ", ";
  switch (v.kind()) {
    case Value::Kind::kNone:
      out += "null";
      return;
    case Value::Kind::kBool:
      out += v.as_bool() ? "true" : "false";
      return;
    case Value::Kind::kInt:
      out += std::to_string(v.as_int());
      return;
    case Value::Kind::kFloat: {
      const double f = v.as_double();
      out += std::isnan(f)   ? "NaN"
             : std::isinf(f) ? (f > 0 ? "Infinity" : "-Infinity")
                             : float_repr(f);
      return;
    }
    case Value::Kind::kString:
      json_string(v.str(), out);
      return;
    case Value::Kind::kArray: {
      if (v.items().empty()) {
        out += "[]";
        return;
      }
      const std::string nl = json_break(st, depth + 1);
      out += "[";
      for (std::size_t i = 0; i < v.items().size(); ++i) {
        out += i ? sep + nl : nl;
        json_write(v.items()[i], st, depth + 1, out);
      }
      out += json_break(st, depth) + "]";
      return;
    }
    case Value::Kind::kObject: {
      if (v.entries().empty()) {
        out += "{}";
        return;
      }
      std::vector<const std::pair<std::string, Value>*> es;
      for (const auto& e : v.entries()) es.push_back(&e);
      if (st.sort_keys) {
        std::stable_sort(es.begin(), es.end(),
                         [](auto* a, auto* b) { return a->first < b->first; });
      }
      const std::string nl = json_break(st, depth + 1);
      out += "{";
      for (std::size_t i = 0; i < es.size(); ++i) {
        out += i ? sep + nl : nl;
        json_string(es[i]->first, out);
        out += ": ";
        json_write(es[i]->second, st, depth + 1, out);
      }
      out += json_break(st, depth) + "}";
      return;
    }
    case Value::Kind::kUndefined:
      throw Error("tojson: value is undefined");
  }
}

}  // namespace

std::string to_json(const Value& v, int indent, bool sort_keys, std::size_t max_bytes) {
  std::string out;
  json_write(v, JsonStyle{indent, sort_keys, max_bytes}, 0, out);
  if (out.size() > max_bytes) throw Error("tojson: result too large");
  return out;
}

}  // namespace folio::chat
