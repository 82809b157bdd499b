// server/structured_output.cpp: response_format / structured_outputs /
// guided_* -> ConstraintSpec.
#include "server/structured_output.h"

#include <vector>

#include "server/api_error.h"

namespace folio::server {
namespace {

using grammar::ConstraintKind;
using grammar::ConstraintSpec;

// The same value from the key-ordered body when there is one.
const nlohmann::ordered_json* ordered_at(const nlohmann::ordered_json* ordered,
                                         std::initializer_list<const char*> path) {
  const nlohmann::ordered_json* j = ordered;
  for (const char* key : path) {
    if (j == nullptr || !j->is_object()) return nullptr;
    const auto it = j->find(key);
    if (it == j->end()) return nullptr;
    j = &*it;
  }
  return j;
}

// A schema given as an object (or, as vLLM allows, as JSON text).
std::string schema_text(const nlohmann::json& v, const nlohmann::ordered_json* ordered,
                        const char* name) {
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_object() && !v.is_boolean()) bad_param(name, "a JSON Schema (an object)");
  return ordered != nullptr ? ordered->dump() : v.dump();
}

std::vector<std::string> choice_list(const nlohmann::json& v, const char* name) {
  if (!v.is_array() || v.empty()) bad_param(name, "a non-empty list of strings");
  std::vector<std::string> out;
  for (const auto& c : v) {
    if (!c.is_string()) bad_param(name, "a non-empty list of strings");
    out.push_back(c.get<std::string>());
  }
  return out;
}

std::string text_of(const nlohmann::json& v, const char* name) {
  if (!v.is_string() || v.get_ref<const std::string&>().empty())
    bad_param(name, "a non-empty string");
  return v.get<std::string>();
}

// Refuses keys of `obj` nobody read (named as parent.key).
void refuse_unread(const Fields& f, const std::string& parent) {
  const std::vector<std::string> unknown = f.unread();
  if (unknown.empty()) return;
  const std::string name = parent + "." + unknown.front();
  throw ApiError(400, "unsupported field '" + name + "': folio does not implement it", name);
}

class Collector {
 public:
  void add(ConstraintSpec spec, std::string field) {
    if (found_) {
      throw ApiError(400,
                     "'" + field + "' cannot be combined with '" + found_->field +
                         "': a request takes one output constraint",
                     field);
    }
    found_ = OutputConstraint{std::move(spec), std::move(field)};
  }
  std::optional<OutputConstraint> take() { return std::move(found_); }

 private:
  std::optional<OutputConstraint> found_;
};

void read_response_format(const nlohmann::json& rf, const nlohmann::ordered_json* ordered,
                          Collector& out) {
  if (!rf.is_object()) bad_param("response_format", "an object with a \"type\"");
  Fields f(rf);
  const auto type = f.string("type");
  if (!type) bad_param("response_format", "an object with a \"type\"");
  if (*type == "text") {
    refuse_unread(f, "response_format");
    return;
  }
  if (*type == "json_object") {
    refuse_unread(f, "response_format");
    out.add({ConstraintKind::kJsonObject, "", {}}, "response_format");
    return;
  }
  if (*type != "json_schema") {
    throw ApiError(
        400,
        "response_format.type '" + *type + "' is not supported (text, json_object, json_schema)",
        "response_format.type");
  }
  const nlohmann::json* js = f.get("json_schema");
  if (js == nullptr || !js->is_object()) {
    bad_param("response_format.json_schema", "an object with \"name\" and \"schema\"");
  }
  refuse_unread(f, "response_format");
  Fields jf(*js);
  const auto name = jf.string("name");
  if (!name || name->empty()) bad_param("response_format.json_schema.name", "a non-empty string");
  jf.string("description");  // annotation
  jf.boolean("strict");      // enforced either way
  const nlohmann::json* schema = jf.get("schema");
  refuse_unread(jf, "response_format.json_schema");
  // OpenAI: a missing schema means any JSON (vLLM too).
  if (schema == nullptr) {
    out.add({ConstraintKind::kJsonSchema, "{}", {}}, "response_format");
    return;
  }
  out.add({ConstraintKind::kJsonSchema,
           schema_text(*schema, ordered_at(ordered, {"response_format", "json_schema", "schema"}),
                       "response_format.json_schema.schema"),
           {}},
          "response_format");
}

void read_structured_outputs(const nlohmann::json& so, const nlohmann::ordered_json* ordered,
                             Collector& out) {
  if (!so.is_object()) bad_param("structured_outputs", "an object");
  Fields f(so);
  if (const auto* v = f.get("json")) {
    out.add({ConstraintKind::kJsonSchema,
             schema_text(*v, ordered_at(ordered, {"structured_outputs", "json"}),
                         "structured_outputs.json"),
             {}},
            "structured_outputs.json");
  }
  if (const auto* v = f.get("regex")) {
    out.add({ConstraintKind::kRegex, text_of(*v, "structured_outputs.regex"), {}},
            "structured_outputs.regex");
  }
  if (const auto* v = f.get("choice")) {
    out.add({ConstraintKind::kChoice, "", choice_list(*v, "structured_outputs.choice")},
            "structured_outputs.choice");
  }
  if (const auto* v = f.get("grammar")) {
    out.add({ConstraintKind::kGbnf, text_of(*v, "structured_outputs.grammar"), {}},
            "structured_outputs.grammar");
  }
  if (const auto v = f.boolean("json_object"); v && *v) {
    out.add({ConstraintKind::kJsonObject, "", {}}, "structured_outputs.json_object");
  }
  refuse_unread(f, "structured_outputs");
}

}  // namespace

std::optional<OutputConstraint> read_output_constraint(Fields& f,
                                                       const nlohmann::ordered_json* ordered) {
  Collector out;
  if (const auto* rf = f.get("response_format")) read_response_format(*rf, ordered, out);
  if (const auto* so = f.get("structured_outputs")) read_structured_outputs(*so, ordered, out);
  if (const auto* v = f.get("guided_json")) {
    out.add({ConstraintKind::kJsonSchema,
             schema_text(*v, ordered_at(ordered, {"guided_json"}), "guided_json"),
             {}},
            "guided_json");
  }
  if (const auto* v = f.get("guided_regex")) {
    out.add({ConstraintKind::kRegex, text_of(*v, "guided_regex"), {}}, "guided_regex");
  }
  if (const auto* v = f.get("guided_choice")) {
    out.add({ConstraintKind::kChoice, "", choice_list(*v, "guided_choice")}, "guided_choice");
  }
  if (const auto* v = f.get("guided_grammar")) {
    out.add({ConstraintKind::kGbnf, text_of(*v, "guided_grammar"), {}}, "guided_grammar");
  }
  if (const auto backend = f.string("guided_decoding_backend"); backend && *backend != "auto") {
    throw ApiError(400,
                   "guided_decoding_backend '" + *backend +
                       "' is not available: folio has its own grammar engine (use \"auto\")",
                   "guided_decoding_backend");
  }
  return out.take();
}

}  // namespace folio::server
