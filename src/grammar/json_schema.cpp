// grammar/json_schema.cpp: a schema is walked once, depth first; each node
// becomes a GBNF expression, named rules are made for properties, items and
// $ref targets, and the shared JSON rules (ws, string, number, ...) are
// appended at the end, only those used. Rule names come from schema paths
// (root-address-street, defs-Node), so the text is stable for a given schema.
#include "grammar/json_schema.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "grammar/grammar_error.h"
#include "grammar/regex_gbnf.h"

namespace folio::grammar {

namespace {

using Json = nlohmann::ordered_json;

// Annotations (title, description, default, $defs, ...) and unknown keywords
// constrain nothing and are skipped; the lists below are all that constrains.

// Keywords that constrain values and that folio does not translate.
const std::map<std::string, std::string>& refused_keywords() {
  static const std::map<std::string, std::string> k = {
      {"not", "`not` is not supported"},
      {"if", "if/then/else is not supported"},
      {"then", "if/then/else is not supported"},
      {"else", "if/then/else is not supported"},
      {"patternProperties", "patternProperties is not supported"},
      {"propertyNames", "propertyNames is not supported"},
      {"dependentSchemas", "dependentSchemas is not supported"},
      {"dependentRequired", "dependentRequired is not supported"},
      {"dependencies", "dependencies is not supported"},
      {"minProperties", "minProperties is not supported"},
      {"maxProperties", "maxProperties is not supported"},
      {"contains", "contains is not supported"},
      {"minContains", "minContains is not supported"},
      {"maxContains", "maxContains is not supported"},
      {"multipleOf", "multipleOf is not supported"},
      {"unevaluatedItems", "unevaluatedItems is not supported"},
      {"$dynamicRef", "$dynamicRef is not supported"},
      {"$recursiveRef", "$recursiveRef is not supported"},
  };
  return k;
}

const std::set<std::string>& handled_keywords() {
  static const std::set<std::string> k = {"type",
                                          "properties",
                                          "required",
                                          "additionalProperties",
                                          "items",
                                          "prefixItems",
                                          "additionalItems",
                                          "minItems",
                                          "maxItems",
                                          "uniqueItems",
                                          "minLength",
                                          "maxLength",
                                          "pattern",
                                          "format",
                                          "minimum",
                                          "maximum",
                                          "exclusiveMinimum",
                                          "exclusiveMaximum",
                                          "enum",
                                          "const",
                                          "anyOf",
                                          "oneOf",
                                          "allOf",
                                          "$ref",
                                          "unevaluatedProperties",
                                          "nullable"};
  return k;
}

bool constrains(const std::string& key) {
  return handled_keywords().count(key) > 0 || refused_keywords().count(key) > 0;
}

std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// A rule-name fragment: [a-zA-Z0-9-] only, no leading / doubled dashes.
std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (ok) {
      out += c;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

std::string alternatives(const std::vector<std::string>& alts) {
  return alts.size() == 1 ? alts[0] : "( " + join(alts, " | ") + " )";
}

// The shared rules, in output order; a rule's dependencies follow it.
struct Primitive {
  const char* name;
  std::string body;
  std::vector<const char*> deps;
};

const std::vector<Primitive>& primitives() {
  static const std::vector<Primitive> k = {
      {"value",
       "object | array | string | number | boolean | null",
       {"object", "array", "string", "number", "boolean", "null"}},
      {"object", R"("{" ws ( member ( ws "," ws member )* ws )? "}")", {"ws", "member"}},
      {"member", R"(string ws ":" ws value)", {"string", "ws", "value"}},
      {"array", R"("[" ws ( value ( ws "," ws value )* ws )? "]")", {"ws", "value"}},
      {"string", R"("\"" char* "\"")", {"char"}},
      {"char", R"([^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ))", {}},
      {"number", R"("-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?)", {}},
      {"integer", R"("-"? ( "0" | [1-9] [0-9]* ))", {}},
      {"boolean", R"("true" | "false")", {}},
      {"null", R"("null")", {}},
      {"date",
       R"([0-9]{4} "-" ( "0" [1-9] | "1" [0-2] ) "-" ( "0" [1-9] | [12] [0-9] | "3" [01] ))",
       {}},
      {"time",
       R"(( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ":" ( [0-5] [0-9] | "60" ) ( "." [0-9]+ )? )"
       R"(( [Zz] | [+-] ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ))",
       {}},
      {"date-time", R"(date [Tt] time)", {"date", "time"}},
      {"uuid",
       R"([0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12})",
       {}},
      {"ipv4", R"(ipv4-octet ( "." ipv4-octet ){3})", {"ipv4-octet"}},
      {"ipv4-octet", R"("25" [0-5] | "2" [0-4] [0-9] | "1" [0-9] [0-9] | [1-9]? [0-9])", {}},
      {"email",
       R"(email-atom ( "." email-atom )* "@" email-label ( "." email-label )+)",
       {"email-atom", "email-label"}},
      {"email-atom", R"([a-zA-Z0-9!#$%&'*+/=?^_`{|}~\-]+)", {}},
      {"email-label", R"([a-zA-Z0-9] ( [a-zA-Z0-9\-]{0,61} [a-zA-Z0-9] )?)", {}},
      {"ws", "[ \\t\\n\\r]{0," + std::to_string(kMaxJsonWhitespace) + "}", {}},
  };
  return k;
}

bool is_primitive_rule(const std::string& name) {
  for (const auto& p : primitives()) {
    if (name == p.name) return true;
  }
  return false;
}

// The used primitives and everything they reference, in table order.
std::string primitive_rules(std::set<std::string> used) {
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& p : primitives()) {
      if (used.count(p.name) == 0) continue;
      for (const char* d : p.deps) grew = used.insert(d).second || grew;
    }
  }
  std::string out;
  for (const auto& p : primitives()) {
    if (used.count(p.name) > 0) out += std::string(p.name) + " ::= " + p.body + "\n";
  }
  return out;
}

// ---- numeric ranges: exact digit grammars ---------------------------------

std::string digit_class(int a, int b) {
  return a == b ? "\"" + std::to_string(a) + "\""
                : "[" + std::to_string(a) + "-" + std::to_string(b) + "]";
}

// Numerals x..y (same length, no sign), written after the literal `prefix`.
void same_length_range(const std::string& x, const std::string& y, const std::string& prefix,
                       std::vector<std::string>& out) {
  auto with_prefix = [&](const std::string& rest) {
    if (prefix.empty()) return rest.empty() ? std::string("\"\"") : rest;
    return "\"" + prefix + "\"" + (rest.empty() ? "" : " " + rest);
  };
  if (x == y) {
    out.push_back("\"" + prefix + x + "\"");
    return;
  }
  if (x[0] == y[0]) {
    same_length_range(x.substr(1), y.substr(1), prefix + x[0], out);
    return;
  }
  const std::size_t rest = x.size() - 1;
  const std::string xs = x.substr(1), ys = y.substr(1);
  const bool all0 = xs.find_first_not_of('0') == std::string::npos;
  const bool all9 = ys.find_first_not_of('9') == std::string::npos;
  const int lo_digit = (x[0] - '0') + (all0 ? 0 : 1);
  const int hi_digit = (y[0] - '0') - (all9 ? 0 : 1);
  if (!all0) same_length_range(xs, std::string(rest, '9'), prefix + x[0], out);
  if (lo_digit <= hi_digit) {
    std::string e = digit_class(lo_digit, hi_digit);
    if (rest > 0) e += " [0-9]" + (rest == 1 ? std::string() : "{" + std::to_string(rest) + "}");
    out.push_back(with_prefix(e));
  }
  if (!all9) same_length_range(std::string(rest, '0'), ys, prefix + y[0], out);
}

// Non-negative integers a..b (b absent: no upper bound), no leading zeros.
std::vector<std::string> natural_range(std::uint64_t a, std::optional<std::uint64_t> b) {
  std::vector<std::string> out;
  const std::string as = std::to_string(a);
  const std::size_t last_len = b ? std::to_string(*b).size() : as.size();
  std::uint64_t low = a;
  for (std::size_t len = as.size(); len <= last_len; ++len) {
    std::uint64_t top = 9;
    for (std::size_t k = 1; k < len; ++k) top = top * 10 + 9;
    const std::uint64_t high = (b && len == last_len) ? *b : top;
    same_length_range(std::to_string(low), std::to_string(high), "", out);
    low = top + 1;
  }
  if (!b) out.push_back("[1-9] [0-9]{" + std::to_string(as.size()) + ",}");
  return out;
}

// Integers lo..hi (absent: unbounded on that side).
std::string integer_range(std::optional<std::int64_t> lo, std::optional<std::int64_t> hi) {
  std::vector<std::string> alts;
  if (!hi || *hi >= 0) {
    const auto a = static_cast<std::uint64_t>(lo ? std::max<std::int64_t>(*lo, 0) : 0);
    std::optional<std::uint64_t> b;
    if (hi) b = static_cast<std::uint64_t>(*hi);
    for (auto& e : natural_range(a, b)) alts.push_back(std::move(e));
  }
  if (!lo || *lo < 0) {  // "-" then magnitudes
    const auto a = static_cast<std::uint64_t>((!hi || *hi >= 0) ? 1 : -*hi);
    std::optional<std::uint64_t> b;
    if (lo) b = static_cast<std::uint64_t>(-*lo);
    alts.push_back("\"-\" " + alternatives(natural_range(a, b)));
  }
  return alternatives(alts);
}

// Non-negative decimals m (no exponent) with low <= m (low < m when
// low_strict) and m <= high (m < high when high_strict; no high: unbounded).
void magnitude_range(std::int64_t low, bool low_strict, std::optional<std::int64_t> high,
                     bool high_strict, const std::string& sign, std::vector<std::string>& out) {
  const std::string frac = R"(( "." [0-9]+ )?)";
  std::optional<std::uint64_t> top;
  if (high) top = static_cast<std::uint64_t>(*high - 1);
  const std::int64_t first = low + (low_strict ? 1 : 0);
  if (!high || *high - 1 >= first) {  // integer part in first..high-1: any fraction
    out.push_back(sign + alternatives(natural_range(static_cast<std::uint64_t>(first), top)) + " " +
                  frac);
  }
  if (low_strict && (!high || low < *high)) {  // integer part low, fraction not zero
    out.push_back(sign + "\"" + std::to_string(low) + R"(." [0-9]* [1-9] [0-9]*)");
  }
  if (high && !high_strict && (*high > low || (*high == low && !low_strict))) {  // exactly high
    out.push_back(sign + "\"" + std::to_string(*high) + R"(" ( "." "0"+ )?)");
  }
}

[[noreturn]] void fail_at(const std::string& where, const std::string& what) {
  throw GrammarError(where, what);
}

struct Bound {
  std::int64_t value = 0;
  bool strict = false;
};

class SchemaConverter {
 public:
  explicit SchemaConverter(const Json& root) : root_(root) {
    used_names_.insert("root");
    refs_[""] = "root";
  }

  std::string convert() {
    const std::size_t slot = reserve("root");
    rules_[slot].second = visit(root_, "", "root");
    std::string out;
    for (const auto& [name, body] : rules_) out += name + " ::= " + body + "\n";
    for (const auto& text : extra_rules_) out += text;
    return out + primitive_rules(primitives_);
  }

 private:
  [[noreturn]] static void fail(const std::string& where, const std::string& what) {
    throw GrammarError(where, what);
  }

  std::string use(const char* primitive) {
    primitives_.insert(primitive);
    return primitive;
  }

  std::string unique_name(const std::string& base) {
    std::string name = base;
    for (int k = 2; used_names_.count(name) > 0 || is_primitive_rule(name); ++k) {
      name = base + "-" + std::to_string(k);
    }
    used_names_.insert(name);
    return name;
  }

  std::size_t reserve(const std::string& name) {
    rules_.emplace_back(name, "");
    return rules_.size() - 1;
  }

  // `expr` itself when it is one token, else a new rule named after `base`.
  std::string as_rule(const std::string& base, const std::string& expr) {
    if (expr.find(' ') == std::string::npos) return expr;
    std::string name = unique_name(base);
    rules_.emplace_back(name, expr);
    return name;
  }

  static std::int64_t count_keyword(const Json& s, const std::string& key, const std::string& where,
                                    std::int64_t limit) {
    const Json& v = s[key];
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
      fail(where, key + " must be a non-negative integer");
    if (v.get<std::int64_t>() > limit) {
      fail(where, key + " " + v.dump() + " is over folio's limit of " + std::to_string(limit));
    }
    return v.get<std::int64_t>();
  }

  static std::string repeat_suffix(std::int64_t lo, std::optional<std::int64_t> hi) {
    if (!hi) return lo == 0 ? "*" : lo == 1 ? "+" : "{" + std::to_string(lo) + ",}";
    if (lo == 0 && *hi == 1) return "?";
    if (lo == *hi) return lo == 1 ? "" : "{" + std::to_string(lo) + "}";
    return "{" + std::to_string(lo) + "," + std::to_string(*hi) + "}";
  }

  std::string visit(const Json& s, const std::string& ptr, const std::string& name);
  std::string visit_typed(const Json& s, const std::string& ptr, const std::string& name);
  std::string visit_type(const std::string& type, const Json& s, const std::string& ptr,
                         const std::string& name);
  std::string ref(const Json& s, const std::string& ptr);
  std::string enum_values(const Json& s, const std::string& ptr);
  Json merge_all_of(const Json& s, const std::string& ptr);
  std::string object(const Json& s, const std::string& ptr, const std::string& name);
  std::string object_body(const std::vector<std::pair<std::string, bool>>& kvs,
                          const std::string& extra, const std::string& name);
  std::string other_key(const Json& props, const std::string& name);
  std::string array(const Json& s, const std::string& ptr, const std::string& name);
  std::string string(const Json& s, const std::string& ptr, const std::string& name);
  std::string number(const Json& s, const std::string& ptr, bool integer);

  const Json& root_;
  std::vector<std::pair<std::string, std::string>> rules_;  // in order of creation
  std::vector<std::string> extra_rules_;                    // regex rule blocks
  std::set<std::string> used_names_;
  std::map<std::string, std::string> refs_;  // JSON pointer -> rule name
  std::set<std::string> primitives_;
};

std::string SchemaConverter::visit(const Json& s, const std::string& ptr, const std::string& name) {
  if (s.is_boolean()) {
    if (s.get<bool>()) return use("value");
    fail(ptr, "the schema `false` matches nothing");
  }
  if (!s.is_object()) fail(ptr, "a schema must be an object or a boolean");
  for (const auto& [key, v] : s.items()) {
    const auto refused = refused_keywords().find(key);
    if (refused != refused_keywords().end()) fail(ptr + "/" + pointer_token(key), refused->second);
    if (key == "uniqueItems" && v != Json(false))
      fail(ptr + "/uniqueItems", "uniqueItems: true is not supported");
    if (key == "unevaluatedProperties" && v != Json(false)) {
      fail(ptr + "/unevaluatedProperties",
           "unevaluatedProperties other than false is not supported");
    }
  }
  // Keywords that replace the whole schema must stand alone (annotations aside).
  for (const char* k : {"$ref", "anyOf", "oneOf", "enum", "const"}) {
    if (!s.contains(k)) continue;
    for (const auto& [key, v] : s.items()) {
      const bool ok = key == k || !constrains(key) ||
                      ((key == "type" || key == "nullable") &&
                       (std::string(k) == "enum" || std::string(k) == "const"));
      if (!ok)
        fail(ptr + "/" + pointer_token(key), "`" + key + "` next to `" + k + "` is not supported");
    }
  }
  if (s.contains("$ref")) return ref(s, ptr);
  if (s.contains("allOf")) return visit(merge_all_of(s, ptr), ptr, name);
  for (const char* k : {"anyOf", "oneOf"}) {  // oneOf is read as anyOf
    if (!s.contains(k)) continue;
    const Json& list = s[k];
    if (!list.is_array() || list.empty())
      fail(ptr + "/" + k, std::string(k) + " must be a non-empty array");
    std::vector<std::string> alts;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string sub = ptr + "/" + k + "/" + std::to_string(i);
      alts.push_back(visit(list[i], sub, name + "-" + std::to_string(i)));
    }
    return alternatives(alts);
  }
  std::string expr =
      (s.contains("enum") || s.contains("const")) ? enum_values(s, ptr) : visit_typed(s, ptr, name);
  if (s.contains("nullable") && s["nullable"] == Json(true))
    expr = "( " + expr + " | " + use("null") + " )";
  return expr;
}

std::string SchemaConverter::visit_typed(const Json& s, const std::string& ptr,
                                         const std::string& name) {
  std::vector<std::string> types;
  if (s.contains("type")) {
    const Json& t = s["type"];
    if (t.is_string()) {
      types.push_back(t.get<std::string>());
    } else if (t.is_array() && !t.empty()) {
      for (const auto& x : t) {
        if (!x.is_string()) fail(ptr + "/type", "type must be a string or an array of strings");
        types.push_back(x.get<std::string>());
      }
    } else {
      fail(ptr + "/type", "type must be a string or a non-empty array of strings");
    }
  } else {
    // No type: the keywords present say which kinds of value are meant.
    auto any_of = [&](std::initializer_list<const char*> keys) {
      for (const char* k : keys) {
        if (s.contains(k)) return true;
      }
      return false;
    };
    if (any_of({"properties", "additionalProperties", "required", "unevaluatedProperties"}))
      types.emplace_back("object");
    if (any_of({"items", "prefixItems", "minItems", "maxItems", "additionalItems"}))
      types.emplace_back("array");
    if (any_of({"pattern", "format", "minLength", "maxLength"})) types.emplace_back("string");
    if (any_of({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}))
      types.emplace_back("number");
    if (types.empty()) return use("value");
  }
  std::vector<std::string> alts;
  for (const auto& t : types) {
    const std::string sub = types.size() == 1 ? name : name + "-" + sanitize(t);
    alts.push_back(visit_type(t, s, ptr, sub));
  }
  return alternatives(alts);
}

std::string SchemaConverter::visit_type(const std::string& type, const Json& s,
                                        const std::string& ptr, const std::string& name) {
  if (type == "object") return object(s, ptr, name);
  if (type == "array") return array(s, ptr, name);
  if (type == "string") return string(s, ptr, name);
  if (type == "number") return number(s, ptr, false);
  if (type == "integer") return number(s, ptr, true);
  if (type == "boolean") return use("boolean");
  if (type == "null") return use("null");
  fail(ptr + "/type", "unknown type \"" + type + "\"");
}

std::string SchemaConverter::ref(const Json& s, const std::string& ptr) {
  const Json& r = s["$ref"];
  if (!r.is_string()) fail(ptr + "/$ref", "$ref must be a string");
  const std::string target = r.get<std::string>();
  if (target.empty() || target[0] != '#') {
    fail(ptr + "/$ref",
         "only local references (\"#/$defs/...\") are supported, not \"" + target + "\"");
  }
  const std::string pointer = target.substr(1);
  if (const auto it = refs_.find(pointer); it != refs_.end()) return it->second;
  const Json* node = nullptr;
  try {
    node = &root_.at(Json::json_pointer(pointer));
  } catch (const std::exception&) {
    fail(ptr + "/$ref", "\"" + target + "\" does not name a part of this schema");
  }
  // A chain of bare references that loops back would be a rule defined as itself.
  std::set<std::string> chain = {pointer};
  for (const Json* n = node; n->is_object() && n->contains("$ref") && (*n)["$ref"].is_string();) {
    const std::string next = (*n)["$ref"].get<std::string>();
    if (next.empty() || next[0] != '#' || !chain.insert(next.substr(1)).second) {
      if (next.size() && next[0] == '#')
        fail(ptr + "/$ref", "\"" + target + "\" is a cycle of references");
      break;
    }
    if (!root_.contains(Json::json_pointer(next.substr(1)))) break;
    n = &root_.at(Json::json_pointer(next.substr(1)));
  }
  std::string name = unique_name(sanitize(pointer).empty() ? "ref" : sanitize(pointer));
  refs_[pointer] = name;
  const std::size_t slot = reserve(name);
  rules_[slot].second = visit(*node, pointer, name);
  return name;
}

bool json_has_type(const Json& v, const std::string& t) {
  if (t == "string") return v.is_string();
  if (t == "number") return v.is_number();
  if (t == "integer")
    return v.is_number_integer() ||
           (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  return false;
}

std::string SchemaConverter::enum_values(const Json& s, const std::string& ptr) {
  if (s.contains("enum") && s.contains("const"))
    fail(ptr + "/const", "`const` next to `enum` is not supported");
  Json values = Json::array();
  if (s.contains("const")) {
    values.push_back(s["const"]);
  } else if (!s["enum"].is_array()) {
    fail(ptr + "/enum", "enum must be an array");
  } else {
    values = s["enum"];
  }
  std::vector<std::string> alts;
  std::set<std::string> seen;
  for (const auto& v : values) {
    bool typed = !s.contains("type");
    if (!typed && s["type"].is_string()) typed = json_has_type(v, s["type"].get<std::string>());
    if (!typed && s["type"].is_array()) {
      for (const auto& t : s["type"])
        typed = typed || (t.is_string() && json_has_type(v, t.get<std::string>()));
    }
    if (s.contains("nullable") && s["nullable"] == Json(true) && v.is_null()) typed = true;
    const std::string text = v.dump();
    if (typed && seen.insert(text).second) alts.push_back(gbnf_literal(text, ptr));
  }
  const std::string key = s.contains("const") ? "/const" : "/enum";
  if (alts.empty()) fail(ptr + key, "no value of the enum matches the schema's type");
  return alternatives(alts);
}

Json SchemaConverter::merge_all_of(const Json& s, const std::string& ptr) {
  const Json& list = s["allOf"];
  if (!list.is_array() || list.empty()) fail(ptr + "/allOf", "allOf must be a non-empty array");
  Json merged = s;
  merged.erase("allOf");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string sub = ptr + "/allOf/" + std::to_string(i);
    const Json* part = &list[i];
    std::set<std::string> seen;
    while (part->is_object() && part->contains("$ref") && (*part)["$ref"].is_string()) {
      const std::string target = (*part)["$ref"].get<std::string>();
      if (target.empty() || target[0] != '#' || !seen.insert(target).second ||
          !root_.contains(Json::json_pointer(target.substr(1)))) {
        fail(sub + "/$ref", "allOf members must be objects or local references to them");
      }
      part = &root_.at(Json::json_pointer(target.substr(1)));
    }
    if (!part->is_object()) fail(sub, "allOf members must be object schemas");
    for (const auto& [key, v] : part->items()) {
      const std::string where = sub + "/" + pointer_token(key);
      if (key == "properties" && v.is_object()) {
        for (const auto& [pname, pschema] : v.items()) {
          if (merged["properties"].contains(pname) && merged["properties"][pname] != pschema) {
            fail(where + "/" + pointer_token(pname),
                 "allOf members define property \"" + pname + "\" differently");
          }
          merged["properties"][pname] = pschema;
        }
      } else if (key == "required" && v.is_array()) {
        for (const auto& r : v) {
          if (!merged.contains("required") ||
              std::find(merged["required"].begin(), merged["required"].end(), r) ==
                  merged["required"].end()) {
            merged["required"].push_back(r);
          }
        }
      } else if (key == "type") {
        if (v != Json("object") || (merged.contains("type") && merged["type"] != v)) {
          fail(where, "allOf is supported for object schemas only");
        }
        merged["type"] = v;
      } else if (constrains(key)) {
        fail(where,
             "`" + key + "` inside allOf is not supported (allOf merges properties and required)");
      }
    }
  }
  if (!merged.contains("type")) merged["type"] = "object";
  return merged;
}

std::string SchemaConverter::object(const Json& s, const std::string& ptr,
                                    const std::string& name) {
  const bool has_props = s.contains("properties");
  const bool has_addl = s.contains("additionalProperties");
  if (has_props && !s["properties"].is_object())
    fail(ptr + "/properties", "properties must be an object");
  Json required = s.contains("required") ? s["required"] : Json::array();
  if (!required.is_array()) fail(ptr + "/required", "required must be an array of strings");
  for (const auto& r : required) {
    if (!r.is_string()) fail(ptr + "/required", "required must be an array of strings");
  }
  const bool any_extra = has_addl && s["additionalProperties"] == Json(true);
  if (!has_props && required.empty() && (!has_addl || any_extra)) return use("object");

  const Json props = has_props ? s["properties"] : Json::object();
  std::vector<std::pair<std::string, bool>> kvs;  // (expression, required)
  auto is_required = [&](const std::string& k) {
    return std::find(required.begin(), required.end(), Json(k)) != required.end();
  };
  for (const auto& [key, sub] : props.items()) {
    const std::string sub_name = name + "-" + (sanitize(key).empty() ? "prop" : sanitize(key));
    const std::string value =
        as_rule(sub_name, visit(sub, ptr + "/properties/" + pointer_token(key), sub_name));
    kvs.emplace_back(gbnf_literal(Json(key).dump(), ptr) + " " + use("ws") + " \":\" ws " + value,
                     is_required(key));
  }
  Json all_keys = props;
  for (const auto& r : required) {  // required but undeclared: any value
    if (props.contains(r.get<std::string>())) continue;
    all_keys[r.get<std::string>()] = true;
    kvs.emplace_back(gbnf_literal(r.dump(), ptr) + " " + use("ws") + " \":\" ws " + use("value"),
                     true);
  }
  std::string extra;
  if (has_addl && s["additionalProperties"] != Json(false)) {
    const Json& addl = s["additionalProperties"];
    const std::string value = as_rule(
        name + "-additional", visit(addl, ptr + "/additionalProperties", name + "-additional"));
    extra = as_rule(name + "-additional-kv",
                    other_key(all_keys, name) + " " + use("ws") + " \":\" ws " + value);
  }
  return object_body(kvs, extra, name);
}

// Members in order; optional ones may be skipped, so the first member
// written decides where the commas go:
//   first(i) = kv_i tail(i+1)             (kv_i required)
//            | kv_i tail(i+1) | first(i+1) (kv_i optional)
//   tail(i)  = [ws "," ws kv_i]... [ws "," ws extra]*
std::string SchemaConverter::object_body(const std::vector<std::pair<std::string, bool>>& kvs,
                                         const std::string& extra, const std::string& name) {
  use("ws");
  const std::size_t n = kvs.size();
  std::vector<std::string> tail(n + 1);
  tail[n] = extra.empty() ? "" : "( ws \",\" ws " + extra + " )*";
  const bool named_tails = n > 8;  // keeps the text linear in the number of properties
  for (std::size_t i = n; i-- > 0;) {
    std::string piece = "ws \",\" ws " + kvs[i].first;
    if (!kvs[i].second) piece = "( " + piece + " )?";
    tail[i] = tail[i + 1].empty() ? piece : piece + " " + tail[i + 1];
    if (named_tails && i > 0) tail[i] = as_rule(name + "-tail-" + std::to_string(i), tail[i]);
  }
  std::string first = extra.empty() ? "" : extra + " ( ws \",\" ws " + extra + " )*";
  bool can_be_empty = true;
  for (std::size_t i = n; i-- > 0;) {
    std::string here = kvs[i].first + (tail[i + 1].empty() ? "" : " " + tail[i + 1]);
    if (kvs[i].second) {
      first = here;
      can_be_empty = false;
    } else {
      first = first.empty() ? here : "( " + here + " | " + first + " )";
    }
  }
  if (first.empty()) return "\"{\" ws \"}\"";
  if (can_be_empty) return "\"{\" ws ( " + first + " ws )? \"}\"";
  return "\"{\" ws " + first + " ws \"}\"";
}

// A key string other than the declared names: a trie over their characters
// where every node may also leave the trie (any other character, then any
// text) or, unless a declared name ends there, close the string. Keys spelled
// with \u escapes of a declared name are not excluded (a documented gap).
std::string SchemaConverter::other_key(const Json& props, const std::string& name) {
  if (props.empty()) return use("string");
  struct Node {
    std::map<std::uint32_t, std::size_t> kids;
    bool terminal = false;
  };
  std::vector<Node> trie(1);
  for (const auto& [key, v] : props.items()) {
    const std::string enc = Json(key).dump();  // JSON-escaped, quoted
    std::size_t at = 0;
    for (std::uint32_t cp : utf8_codepoints(enc.substr(1, enc.size() - 2), "")) {
      auto it = trie[at].kids.find(cp);
      if (it == trie[at].kids.end()) {
        trie.emplace_back();
        it = trie[at].kids.emplace(cp, trie.size() - 1).first;
      }
      at = it->second;
    }
    trie[at].terminal = true;
  }
  use("char");
  const std::string base = unique_name(name + "-other-key");
  std::vector<std::string> names(trie.size());
  for (std::size_t i = 0; i < trie.size(); ++i)
    names[i] = i == 0 ? base : base + "-" + std::to_string(i);
  for (std::size_t i = 0; i < trie.size(); ++i) {
    // Raw characters other than the children (and other than " \ controls).
    CodepointRanges other;
    std::uint32_t next = 0x20;
    std::vector<std::uint32_t> skip = {'"', '\\'};
    for (const auto& [cp, k] : trie[i].kids) skip.push_back(cp);
    std::sort(skip.begin(), skip.end());
    for (std::uint32_t cp : skip) {
      if (cp >= next) {
        if (cp > next) other.emplace_back(next, cp - 1);
        next = cp + 1;
      }
    }
    other.emplace_back(next, 0x10FFFF);
    std::vector<std::string> alts;
    for (const auto& [cp, k] : trie[i].kids) {
      alts.push_back(gbnf_class({{cp, cp}}) + " " + names[k]);
    }
    alts.push_back("( " + gbnf_class(other) +
                   R"( | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) ) char*)");
    std::string body = join(alts, " | ");
    if (!trie[i].terminal) body = "( " + body + " )?";
    used_names_.insert(names[i]);
    rules_.emplace_back(names[i], body);
  }
  return R"("\"" )" + base + R"( "\"")";
}

std::string SchemaConverter::array(const Json& s, const std::string& ptr, const std::string& name) {
  Json prefix = Json::array();
  std::optional<Json> rest;  // schema of the items after the prefix; none: no more items
  std::string rest_ptr = ptr + "/items";
  if (s.contains("prefixItems")) {
    if (!s["prefixItems"].is_array()) fail(ptr + "/prefixItems", "prefixItems must be an array");
    prefix = s["prefixItems"];
    if (s.contains("items")) rest = s["items"];
  } else if (s.contains("items") && s["items"].is_array()) {  // draft-07 tuple form
    prefix = s["items"];
    rest_ptr = ptr + "/additionalItems";
    if (s.contains("additionalItems")) rest = s["additionalItems"];
  } else {
    rest = s.contains("items") ? s["items"] : Json(true);
  }
  if (rest && *rest == Json(false)) rest.reset();
  if (prefix.size() > static_cast<std::size_t>(kMaxArrayItemsBound)) {
    fail(ptr + "/prefixItems", "more than " + std::to_string(kMaxArrayItemsBound) + " prefixItems");
  }
  const std::int64_t lo = s.contains("minItems")
                              ? count_keyword(s, "minItems", ptr + "/minItems", kMaxArrayItemsBound)
                              : 0;
  std::optional<std::int64_t> hi;
  if (s.contains("maxItems"))
    hi = count_keyword(s, "maxItems", ptr + "/maxItems", kMaxArrayItemsBound);
  const auto n_prefix = static_cast<std::int64_t>(prefix.size());
  if (!rest && (!hi || *hi > n_prefix)) hi = n_prefix;
  if (hi && lo > *hi)
    fail(ptr + "/minItems", "no array satisfies minItems " + std::to_string(lo) + " with at most " +
                                std::to_string(*hi) + " items");
  use("ws");
  if (hi && *hi == 0) return R"("[" ws "]")";
  std::vector<std::string> items;
  for (std::int64_t i = 0; i < n_prefix; ++i) {
    const std::string sub = name + "-" + std::to_string(i);
    items.push_back(as_rule(sub, visit(prefix[i], ptr + "/prefixItems/" + std::to_string(i), sub)));
  }
  std::string rest_expr;
  if (rest) rest_expr = as_rule(name + "-item", visit(*rest, rest_ptr, name + "-item"));
  auto item = [&](std::int64_t i) { return i < n_prefix ? items[i] : rest_expr; };
  // After k items: the items from k on, each optional once k >= minItems.
  std::string after;
  if (rest && (!hi || *hi > n_prefix)) {
    const std::int64_t k = n_prefix == 0 ? 1 : n_prefix;
    std::optional<std::int64_t> more;
    if (hi) more = *hi - k;
    after = R"(( ws "," ws )" + rest_expr + " )" +
            repeat_suffix(std::max<std::int64_t>(lo - k, 0), more);
    if (more && *more == 0) after.clear();
  }
  const std::int64_t last = hi ? std::min(*hi, n_prefix) : n_prefix;
  for (std::int64_t k = last - 1; k >= 1; --k) {
    std::string piece = R"(ws "," ws )" + item(k) + (after.empty() ? "" : " " + after);
    after = k >= lo ? "( " + piece + " )?" : piece;
  }
  const std::string seq = item(0) + (after.empty() ? "" : " " + after);
  if (lo == 0) return R"("[" ws ( )" + seq + R"( ws )? "]")";
  return R"("[" ws )" + seq + R"( ws "]")";
}

std::string SchemaConverter::string(const Json& s, const std::string& ptr,
                                    const std::string& name) {
  const bool has_len = s.contains("minLength") || s.contains("maxLength");
  if (s.contains("format")) {
    if (!s["format"].is_string()) fail(ptr + "/format", "format must be a string");
    const std::string f = s["format"].get<std::string>();
    if (has_len || s.contains("pattern")) {
      fail(ptr + "/format",
           "format together with pattern / minLength / maxLength is not supported");
    }
    for (const char* known : {"date", "time", "date-time", "uuid", "ipv4", "email"}) {
      if (f == known) return R"("\"" )" + use(known) + R"( "\"")";
    }
    fail(ptr + "/format",
         "unsupported format \"" + f + "\" (supported: date, time, date-time, uuid, ipv4, email)");
  }
  if (s.contains("pattern")) {
    if (!s["pattern"].is_string()) fail(ptr + "/pattern", "pattern must be a string");
    if (has_len)
      fail(ptr + "/pattern", "pattern together with minLength / maxLength is not supported");
    const std::string rule = unique_name(name + "-pattern");
    try {
      extra_rules_.push_back(regex_to_gbnf(s["pattern"].get<std::string>(), rule,
                                           {.json_string = true, .search = true}));
    } catch (const GrammarError& e) {
      fail(ptr + "/pattern", e.what());
    }
    for (std::size_t at = 0; at < extra_rules_.back().size();) {  // reserve its helper names
      const std::size_t end = extra_rules_.back().find(" ::= ", at);
      if (end == std::string::npos) break;
      used_names_.insert(extra_rules_.back().substr(at, end - at));
      at = extra_rules_.back().find('\n', end) + 1;
      if (at == 0) break;
    }
    return R"("\"" )" + rule + R"( "\"")";
  }
  if (!has_len) return use("string");
  const std::int64_t lo =
      s.contains("minLength")
          ? count_keyword(s, "minLength", ptr + "/minLength", kMaxStringLengthBound)
          : 0;
  std::optional<std::int64_t> hi;
  if (s.contains("maxLength"))
    hi = count_keyword(s, "maxLength", ptr + "/maxLength", kMaxStringLengthBound);
  if (hi && lo > *hi) fail(ptr + "/maxLength", "maxLength is below minLength");
  return R"("\"" )" + use("char") + repeat_suffix(lo, hi) + R"( "\"")";
}

// One bound keyword as an integer; non-integers are floored / ceiled for
// integer schemas (round_up) and refused for number schemas.
std::optional<Bound> read_bound(const Json& s, const std::string& ptr, bool upper, bool integer) {
  const char* incl_key = upper ? "maximum" : "minimum";
  const char* excl_key = upper ? "exclusiveMaximum" : "exclusiveMinimum";
  std::optional<Bound> best;
  for (const char* key : {incl_key, excl_key}) {
    if (!s.contains(key)) continue;
    const std::string where = ptr + "/" + key;
    Json v = s[key];
    bool strict = std::string(key) == excl_key;
    if (strict && v.is_boolean()) {  // draft-04: a flag on minimum / maximum
      if (!v.get<bool>() || !s.contains(incl_key)) continue;
      v = s[incl_key];
    } else if (!strict && s.contains(excl_key) && s[excl_key] == Json(true)) {
      strict = true;
    }
    if (!v.is_number()) fail_at(where, std::string(key) + " must be a number");
    const double d = v.get<double>();
    if (!std::isfinite(d) || std::fabs(d) > 1e15)
      fail_at(where, std::string(key) + " is out of the supported range (|x| <= 1e15)");
    Bound b;
    if (v.is_number_integer()) {
      b.value = v.get<std::int64_t>();
    } else if (std::floor(d) == d) {
      b.value = static_cast<std::int64_t>(d);
    } else if (integer) {
      b.value = static_cast<std::int64_t>(upper ? std::floor(d) : std::ceil(d));
      strict = false;  // the nearest integer inside the bound
    } else {
      fail_at(where, "non-integer bounds on numbers are not supported");
    }
    if (integer && strict) b.value += upper ? -1 : 1, strict = false;
    b.strict = strict;
    const bool tighter =
        !best || (upper ? (b.value < best->value || (b.value == best->value && b.strict))
                        : (b.value > best->value || (b.value == best->value && b.strict)));
    if (tighter) best = b;
  }
  return best;
}

std::string SchemaConverter::number(const Json& s, const std::string& ptr, bool integer) {
  const auto lo = read_bound(s, ptr, false, integer);
  const auto hi = read_bound(s, ptr, true, integer);
  if (!lo && !hi) return use(integer ? "integer" : "number");
  if (lo && hi &&
      (lo->value > hi->value || (lo->value == hi->value && (lo->strict || hi->strict)))) {
    fail(ptr, "no number satisfies the minimum / maximum bounds");
  }
  if (integer) {
    return integer_range(lo ? std::optional(lo->value) : std::nullopt,
                         hi ? std::optional(hi->value) : std::nullopt);
  }
  std::vector<std::string> alts;
  if (!hi || hi->value > 0 || (hi->value == 0 && !hi->strict)) {  // 0 and up
    const bool above_zero = lo && lo->value >= 0;
    magnitude_range(above_zero ? lo->value : 0, above_zero && lo->strict,
                    hi ? std::optional(hi->value) : std::nullopt, hi && hi->strict, "", alts);
  }
  if (!lo || lo->value < 0) {  // below zero: "-" and a magnitude above 0
    const bool below_zero = hi && hi->value < 0;
    magnitude_range(below_zero ? -hi->value : 0, below_zero ? hi->strict : true,
                    lo ? std::optional(-lo->value) : std::nullopt, lo && lo->strict, "\"-\" ",
                    alts);
  }
  return alternatives(alts);
}

std::string convert_ordered(const Json& schema) {
  return SchemaConverter(schema).convert();
}

}  // namespace

std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema) {
  return convert_ordered(schema);
}

std::string json_schema_to_gbnf(const nlohmann::json& schema) {
  return convert_ordered(nlohmann::ordered_json::parse(schema.dump()));
}

std::string any_json_value_gbnf() {
  return "root ::= value\n" + primitive_rules({"value"});
}

std::string any_json_object_gbnf() {
  return "root ::= object\n" + primitive_rules({"object"});
}

}  // namespace folio::grammar
