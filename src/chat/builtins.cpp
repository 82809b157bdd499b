// chat/builtins.cpp: the filter / test / method / function tables.
#include "chat/builtins.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <optional>

#include "base/error.h"
#include "chat/strings.h"

namespace folio::chat {
namespace {

[[noreturn]] void fail(const std::string& msg) {
  throw Error(msg);
}

std::string str_arg(const Args& a, std::size_t i, const char* name, const char* fn,
                    const char* def = nullptr) {
  const Value* v = a.get(i, name);
  if (!v || v->is_undefined()) {
    if (def) return def;
    fail(std::string(fn) + "(): missing argument '" + name + "'");
  }
  if (!v->is_string()) fail(std::string(fn) + "(): argument '" + name + "' must be a string");
  return v->str();
}

std::int64_t int_arg(const Args& a, std::size_t i, const char* name, std::int64_t def) {
  const Value* v = a.get(i, name);
  if (!v || v->is_undefined() || v->is_none()) return def;
  if (!v->is_number()) fail(std::string("argument '") + name + "' must be a number");
  return v->as_int();
}

bool bool_arg(const Args& a, std::size_t i, const char* name, bool def) {
  const Value* v = a.get(i, name);
  return v && !v->is_undefined() ? v->truthy() : def;
}

Value attr_of(const Value& v, const std::string& path) {
  Value cur = v;
  std::size_t start = 0;
  for (;;) {  // "a.b" walks nested dicts, as Jinja's attribute= does
    const std::size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? dot : dot - start);
    const Value* f = cur.find(key);
    cur = f ? *f : Value();
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

std::string joined(const Value& v, const std::string& sep, const Value* attribute,
                   const Limits& lim) {
  std::string out;
  bool first = true;
  for (const Value& x : iterate(v)) {
    if (!first) out += sep;
    first = false;
    out += (attribute ? attr_of(x, attribute->str()) : x).to_str(lim.max_output_bytes);
    if (out.size() > lim.max_output_bytes) fail("join(): result too large");
  }
  return out;
}

Value select_items(const Value& v, const Args& a, bool by_attr, bool keep) {
  // selectattr(attr, test, args...) / select(test, args...) and the reject forms.
  const std::size_t test_at = by_attr ? 1 : 0;
  std::string attr;
  if (by_attr) attr = str_arg(a, 0, "attribute", "selectattr");
  const Value* test = a.get(test_at, "test");
  Args targs;
  for (std::size_t i = test_at + 1; i < a.pos.size(); ++i) targs.pos.push_back(a.pos[i]);
  Value::Array out;
  for (const Value& x : iterate(v)) {
    const Value subject = by_attr ? attr_of(x, attr) : x;
    const bool pass = test ? apply_test(test->str(), subject, targs) : subject.truthy();
    if (pass == keep) out.push_back(x);
  }
  return Value::array(std::move(out));
}

Value do_map(const Value& v, const Args& a, const Limits& lim) {
  Value::Array out;
  if (const Value* attr = a.get(99, "attribute")) {
    const Value* def = a.get(99, "default");
    for (const Value& x : iterate(v)) {
      Value y = attr_of(x, attr->str());
      out.push_back(y.is_undefined() && def ? *def : y);
    }
    return Value::array(std::move(out));
  }
  const std::string filter = str_arg(a, 0, "filter", "map");
  Args fargs;
  for (std::size_t i = 1; i < a.pos.size(); ++i) fargs.pos.push_back(a.pos[i]);
  for (const Value& x : iterate(v)) out.push_back(apply_filter(filter, x, fargs, lim));
  return Value::array(std::move(out));
}

Value do_sort(const Value& v, const Args& a) {
  std::vector<Value> items = iterate(v);
  const bool reverse = bool_arg(a, 0, "reverse", false);
  const Value* attr = a.get(2, "attribute");
  auto key = [&](const Value& x) { return attr ? attr_of(x, attr->str()) : x; };
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    return reverse ? less(key(y), key(x)) : less(key(x), key(y));
  });
  return Value::array(std::move(items));
}

Value to_int(const Value& v, std::int64_t def) {
  if (v.is_number()) return Value::integer(v.as_int());
  if (v.is_string()) {
    try {
      std::size_t used = 0;
      const std::string s = py_strip(v.str(), true, true);
      const long long n = std::stoll(s, &used);
      if (used == s.size()) return Value::integer(n);
      return Value::integer(static_cast<std::int64_t>(std::stod(s)));
    } catch (const std::exception&) {
      return Value::integer(def);
    }
  }
  return Value::integer(def);
}

}  // namespace

const Value* Args::get(std::size_t i, const char* name) const {
  if (i < pos.size()) return &pos[i];
  for (const auto& [k, v] : kw) {
    if (k == name) return &v;
  }
  return nullptr;
}

std::vector<Value> iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kArray:
      return v.items();
    case Value::Kind::kObject: {
      std::vector<Value> keys;
      for (const auto& [k, x] : v.entries()) keys.push_back(Value::string(k));
      return keys;
    }
    case Value::Kind::kString: {
      std::vector<Value> chars;
      const auto offs = code_point_offsets(v.str());
      for (std::size_t k = 0; k + 1 < offs.size(); ++k) {
        chars.push_back(Value::string(v.str().substr(offs[k], offs[k + 1] - offs[k])));
      }
      return chars;
    }
    case Value::Kind::kUndefined:
      return {};  // Jinja's Undefined iterates as empty
    default:
      fail(std::string("'") + v.type_name() + "' object is not iterable");
  }
}

Value subscript(const Value& obj, const Value& key) {
  if (obj.is_undefined()) fail("cannot index an undefined value");
  if (obj.is_object()) {
    if (!key.is_string()) return Value();
    const Value* f = obj.find(key.str());
    return f ? *f : Value();
  }
  if (obj.is_array() || obj.is_string()) {
    if (!key.is_int() && !key.is_bool()) return Value();
    const bool is_str = obj.is_string();
    const std::vector<std::size_t> offs =
        is_str ? code_point_offsets(obj.str()) : std::vector<std::size_t>{};
    const auto n = static_cast<std::int64_t>(is_str ? offs.size() - 1 : obj.items().size());
    std::int64_t i = key.as_int();
    if (i < 0) i += n;
    if (i < 0 || i >= n) return Value();  // Jinja: out of range is undefined, not an error
    const auto u = static_cast<std::size_t>(i);
    if (!is_str) return obj.items()[u];
    return Value::string(obj.str().substr(offs[u], offs[u + 1] - offs[u]));
  }
  return Value();
}

Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
  const bool is_str = obj.is_string();
  if (!is_str && !obj.is_array()) fail(std::string("cannot slice a ") + obj.type_name());
  const std::vector<std::size_t> offs =
      is_str ? code_point_offsets(obj.str()) : std::vector<std::size_t>{};
  const auto n = static_cast<std::int64_t>(is_str ? offs.size() - 1 : obj.items().size());
  auto num = [](const Value& v, std::int64_t def) {
    if (v.is_undefined() || v.is_none()) return def;
    if (!v.is_number()) fail("slice indices must be integers");
    return v.as_int();
  };
  const std::int64_t st = num(step, 1);
  if (st == 0) fail("slice step cannot be zero");
  auto clamp = [&](std::int64_t i, std::int64_t def) {
    if (i == def) return i;
    if (i < 0) i += n;
    if (st > 0) return std::clamp<std::int64_t>(i, 0, n);
    return std::clamp<std::int64_t>(i, -1, n - 1);
  };
  const std::int64_t b = clamp(num(start, st > 0 ? 0 : n - 1), st > 0 ? 0 : n - 1);
  const std::int64_t e = clamp(num(stop, st > 0 ? n : -1), st > 0 ? n : -1);
  std::string s;
  Value::Array a;
  for (std::int64_t i = b; st > 0 ? i < e : i > e; i += st) {
    const auto u = static_cast<std::size_t>(i);
    if (is_str)
      s += obj.str().substr(offs[u], offs[u + 1] - offs[u]);
    else
      a.push_back(obj.items()[u]);
  }
  return is_str ? Value::string(std::move(s)) : Value::array(std::move(a));
}

// Filters over strings and scalars; nullopt when `name` is not one of them.
static std::optional<Value> scalar_filter(const std::string& name, const Value& v, const Args& a,
                                          const Limits& lim) {
  if (name == "trim" || name == "strip") {
    const Value* chars = a.get(0, "chars");
    return Value::string(py_strip(v.to_str(lim.max_output_bytes), true, true,
                                  chars && chars->is_string()
                                      ? std::optional<std::string_view>(chars->str())
                                      : std::nullopt));
  }
  if (name == "length" || name == "count") {
    if (!v.is_undefined() && !v.is_string() && !v.is_array() && !v.is_object()) {
      fail(std::string("object of type '") + v.type_name() + "' has no length");
    }
    return Value::integer(static_cast<std::int64_t>(v.size()));
  }
  if (name == "upper") return Value::string(py_upper(v.to_str(lim.max_output_bytes)));
  if (name == "lower") return Value::string(py_lower(v.to_str(lim.max_output_bytes)));
  if (name == "title") return Value::string(py_title(v.to_str(lim.max_output_bytes)));
  if (name == "capitalize") return Value::string(py_capitalize(v.to_str(lim.max_output_bytes)));
  if (name == "string") return Value::string(v.to_str(lim.max_output_bytes));
  if (name == "safe") return v;  // no autoescaping in chat templates: a no-op
  if (name == "tojson") {
    const Value* indent = a.get(0, "indent");
    // Clamped to an int: a wider indent fails as too large once a line break is written.
    const std::int64_t width =
        indent && indent->is_number()
            ? std::min<std::int64_t>(indent->as_int(), std::numeric_limits<int>::max())
            : -1;
    return Value::string(to_json(v, static_cast<int>(width), bool_arg(a, 99, "sort_keys", false),
                                 lim.max_output_bytes));
  }
  if (name == "default" || name == "d") {
    const Value* def = a.get(0, "default_value");
    const bool boolean = bool_arg(a, 1, "boolean", false);
    const bool use_default = v.is_undefined() || (boolean && !v.truthy());
    return use_default ? (def ? *def : Value::string("")) : v;
  }
  if (name == "join") {
    return Value::string(joined(v, str_arg(a, 0, "d", "join", ""), a.get(1, "attribute"), lim));
  }
  if (name == "replace") {
    return Value::string(py_replace(v.to_str(lim.max_output_bytes), str_arg(a, 0, "old", "replace"),
                                    str_arg(a, 1, "new", "replace"), int_arg(a, 2, "count", -1),
                                    lim.max_output_bytes));
  }
  if (name == "int") return to_int(v, int_arg(a, 0, "default", 0));
  if (name == "float") {
    if (v.is_number()) return Value::number(v.as_double());
    try {
      return Value::number(std::stod(v.to_str(lim.max_output_bytes)));
    } catch (const std::exception&) {
      return Value::number(0.0);
    }
  }
  if (name == "abs") {
    if (v.is_float()) return Value::number(std::fabs(v.as_double()));
    if (v.is_number()) return Value::integer(std::llabs(v.as_int()));
    fail("abs(): value is not a number");
  }
  if (name == "round") {
    const std::int64_t prec = int_arg(a, 0, "precision", 0);
    const double scale = std::pow(10.0, static_cast<double>(prec));
    return Value::number(std::nearbyint(v.as_double() * scale) / scale);
  }
  if (name == "indent") {
    const std::int64_t width = int_arg(a, 0, "width", 4);
    const bool first = bool_arg(a, 1, "first", false);
    const bool blank = bool_arg(a, 2, "blank", false);
    const std::string pad(static_cast<std::size_t>(std::clamp<std::int64_t>(width, 0, 256)), ' ');
    const auto lines = py_split(v.to_str(lim.max_output_bytes), std::string_view("\n"), -1);
    std::string out;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (i) out += '\n';
      const bool indent_it = (i > 0 || first) && (blank || !lines[i].empty());
      out += (indent_it ? pad : "") + lines[i];
      if (out.size() > lim.max_output_bytes) fail("indent(): result too large");
    }
    return Value::string(std::move(out));
  }
  return std::nullopt;
}

Value apply_filter(const std::string& name, const Value& v, const Args& a, const Limits& lim) {
  if (auto r = scalar_filter(name, v, a, lim)) return *r;
  if (name == "first" || name == "last") {
    const auto items = iterate(v);
    if (items.empty()) return Value();
    return name == "first" ? items.front() : items.back();
  }
  if (name == "list") return Value::array(iterate(v));
  if (name == "reverse") {
    if (v.is_string()) {
      std::string s;
      const auto items = iterate(v);
      for (auto it = items.rbegin(); it != items.rend(); ++it) s += it->str();
      return Value::string(std::move(s));
    }
    auto items = iterate(v);
    std::reverse(items.begin(), items.end());
    return Value::array(std::move(items));
  }
  if (name == "items") {
    if (v.is_undefined()) return Value::array();
    if (!v.is_object()) fail("items(): value is not a dict");
    Value::Array out;
    for (const auto& [k, x] : v.entries()) out.push_back(Value::tuple({Value::string(k), x}));
    return Value::array(std::move(out));
  }
  if (name == "selectattr" || name == "rejectattr")
    return select_items(v, a, true, name == "selectattr");
  if (name == "select" || name == "reject") return select_items(v, a, false, name == "select");
  if (name == "map") return do_map(v, a, lim);
  if (name == "sort") return do_sort(v, a);
  if (name == "unique") {
    // Quadratic (values have no hash): the comparisons count against the loop limit.
    std::size_t comparisons = 0;
    Value::Array out;
    for (const Value& x : iterate(v)) {
      comparisons += out.size();
      if (comparisons > lim.max_loop_iterations) fail("unique(): too many items");
      if (std::none_of(out.begin(), out.end(), [&](const Value& y) { return equals(x, y); }))
        out.push_back(x);
    }
    return Value::array(std::move(out));
  }
  fail("unsupported filter '" + name + "'");
}

bool apply_test(const std::string& name, const Value& v, const Args& a) {
  const Value* arg = a.get(0, "other");
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "string") return v.is_string();
  if (name == "number") return v.is_int() || v.is_float();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "mapping") return v.is_object();
  if (name == "sequence") return v.is_array() || v.is_string() || v.is_object();
  if (name == "iterable") return v.is_array() || v.is_string() || v.is_object() || v.is_undefined();
  if (name == "callable") return false;
  if (name == "lower") return v.is_string() && py_lower(v.str()) == v.str();
  if (name == "upper") return v.is_string() && py_upper(v.str()) == v.str();
  if (name == "odd" || name == "even") {
    if (!v.is_number()) fail(name + " test: value is not a number");
    return (v.as_int() % 2 != 0) == (name == "odd");
  }
  if (!arg) fail("test '" + name + "' needs an argument");
  if (name == "equalto" || name == "eq" || name == "==" || name == "sameas") return equals(v, *arg);
  if (name == "ne" || name == "!=") return !equals(v, *arg);
  if (name == "lt" || name == "lessthan" || name == "<") return less(v, *arg);
  if (name == "gt" || name == "greaterthan" || name == ">") return less(*arg, v);
  if (name == "le" || name == "<=") return !less(*arg, v);
  if (name == "ge" || name == ">=") return !less(v, *arg);
  if (name == "divisibleby") {
    if (!v.is_number() || !arg->is_number() || arg->as_int() == 0)
      fail("divisibleby: bad operands");
    return v.as_int() % arg->as_int() == 0;
  }
  if (name == "in") {
    for (const Value& x : iterate(*arg)) {
      if (equals(x, v)) return true;
    }
    return false;
  }
  fail("unsupported test '" + name + "'");
}

Value call_method(const Value& obj, const std::string& name, const Args& a, const Limits& lim) {
  if (obj.is_string()) {
    const std::string& s = obj.str();
    if (name == "startswith" || name == "endswith") {
      const Value* p = a.get(0, "prefix");
      if (!p) fail(name + "(): missing argument");
      auto test = [&](const std::string& x) {
        return name == "startswith" ? s.starts_with(x) : s.ends_with(x);
      };
      if (p->is_array()) {
        return Value::boolean(
            std::any_of(p->items().begin(), p->items().end(),
                        [&](const Value& x) { return x.is_string() && test(x.str()); }));
      }
      if (!p->is_string()) fail(name + "(): argument must be a string or tuple");
      return Value::boolean(test(p->str()));
    }
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
      const Value* c = a.get(0, "chars");
      const auto chars =
          c && c->is_string() ? std::optional<std::string_view>(c->str()) : std::nullopt;
      return Value::string(py_strip(s, name != "rstrip", name != "lstrip", chars));
    }
    if (name == "split" || name == "rsplit") {
      if (name == "rsplit" && int_arg(a, 1, "maxsplit", -1) >= 0)
        fail("unsupported method 'rsplit' with maxsplit");
      const Value* sep = a.get(0, "sep");
      const auto sv =
          sep && sep->is_string() ? std::optional<std::string_view>(sep->str()) : std::nullopt;
      Value::Array out;
      for (auto& p : py_split(s, sv, int_arg(a, 1, "maxsplit", -1)))
        out.push_back(Value::string(std::move(p)));
      return Value::array(std::move(out));
    }
    if (name == "upper") return Value::string(py_upper(s));
    if (name == "lower") return Value::string(py_lower(s));
    if (name == "title") return Value::string(py_title(s));
    if (name == "capitalize") return Value::string(py_capitalize(s));
    if (name == "replace") {
      return Value::string(py_replace(s, str_arg(a, 0, "old", "replace"),
                                      str_arg(a, 1, "new", "replace"), int_arg(a, 2, "count", -1),
                                      lim.max_output_bytes));
    }
    if (name == "find") {
      const std::size_t at = s.find(str_arg(a, 0, "sub", "find"));
      return Value::integer(
          at == std::string::npos ? -1 : static_cast<std::int64_t>(utf8_length(s.substr(0, at))));
    }
    if (name == "count") {
      const std::string sub = str_arg(a, 0, "sub", "count");
      if (sub.empty()) return Value::integer(static_cast<std::int64_t>(obj.size() + 1));
      std::int64_t n = 0;
      for (std::size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size()))
        ++n;
      return Value::integer(n);
    }
    if (name == "join")
      return Value::string(joined(a.pos.empty() ? Value() : a.pos[0], s, nullptr, lim));
  }
  if (obj.is_object()) {
    if (name == "items") return apply_filter("items", obj, {}, lim);
    if (name == "keys") return Value::array(iterate(obj));
    if (name == "values") {
      Value::Array out;
      for (const auto& [k, x] : obj.entries()) out.push_back(x);
      return Value::array(std::move(out));
    }
    if (name == "get") {
      const Value* key = a.get(0, "key");
      const Value* f = key && key->is_string() ? obj.find(key->str()) : nullptr;
      if (f) return *f;
      const Value* def = a.get(1, "default");
      return def ? *def : Value::none();
    }
  }
  fail(std::string("unsupported method '") + name + "' on " + obj.type_name());
}

bool is_known_filter(const std::string& name) {
  static const char* const kFilters[] = {
      "trim",       "strip",      "length",  "count",   "upper", "lower", "title",   "capitalize",
      "string",     "safe",       "tojson",  "default", "d",     "join",  "replace", "first",
      "last",       "list",       "reverse", "items",   "int",   "float", "abs",     "round",
      "selectattr", "rejectattr", "select",  "reject",  "map",   "sort",  "unique",  "indent"};
  return std::find(std::begin(kFilters), std::end(kFilters), name) != std::end(kFilters);
}

bool is_known_test(const std::string& name) {
  static const char* const kTests[] = {
      "defined",  "undefined", "none",    "boolean", "true",        "false",
      "string",   "number",    "integer", "float",   "mapping",     "sequence",
      "iterable", "callable",  "lower",   "upper",   "odd",         "even",
      "equalto",  "eq",        "==",      "sameas",  "ne",          "!=",
      "lt",       "lessthan",  "<",       "gt",      "greaterthan", ">",
      "le",       "<=",        "ge",      ">=",      "divisibleby", "in"};
  return std::find(std::begin(kTests), std::end(kTests), name) != std::end(kTests);
}

bool is_global_function(const std::string& name) {
  return name == "raise_exception" || name == "range" || name == "namespace" || name == "dict" ||
         name == "strftime_now";
}

Value call_global(const std::string& name, const Args& a, const Limits& lim) {
  if (name == "raise_exception") {
    const Value* m = a.get(0, "message");
    fail("raise_exception: " + (m ? m->to_str(lim.max_output_bytes) : std::string()));
  }
  if (name == "range") {
    std::int64_t start = 0, stop = 0, step = 1;
    if (a.pos.size() == 1) {
      stop = int_arg(a, 0, "stop", 0);
    } else {
      start = int_arg(a, 0, "start", 0);
      stop = int_arg(a, 1, "stop", 0);
      step = int_arg(a, 2, "step", 1);
    }
    if (step == 0) fail("range(): step must not be zero");
    Value::Array out;
    for (std::int64_t i = start; step > 0 ? i < stop : i > stop;) {
      if (out.size() >= lim.max_loop_iterations) fail("range(): too many items");
      out.push_back(Value::integer(i));
      if (__builtin_add_overflow(i, step, &i)) break;  // past stop near INT64_MAX / MIN
    }
    return Value::array(std::move(out));
  }
  if (name == "namespace" || name == "dict") {
    Value o = Value::object();
    if (!a.pos.empty()) fail(name + "(): only keyword arguments are supported");
    for (const auto& [k, v] : a.kw) o.set(k, v);
    return o;
  }
  if (name == "strftime_now") {
    const std::string fmt = str_arg(a, 0, "format", "strftime_now");
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[256];
    // The format comes from the template (transformers passes it to Python's
    // strftime the same way); the output buffer bounds the result.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    const std::size_t n = std::strftime(buf, sizeof buf, fmt.c_str(), &tm);
#pragma GCC diagnostic pop
    return Value::string(std::string(buf, n));
  }
  fail("unknown function '" + name + "'");
}

}  // namespace folio::chat
