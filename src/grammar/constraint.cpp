// grammar/constraint.cpp: one ConstraintSpec -> GBNF text, by kind.
#include "grammar/constraint.h"

#include <nlohmann/json.hpp>
#include <set>

#include "grammar/grammar_error.h"
#include "grammar/json_schema.h"
#include "grammar/regex_gbnf.h"

namespace folio::grammar {

const char* constraint_kind_name(ConstraintKind k) {
  switch (k) {
    case ConstraintKind::kJsonObject:
      return "json_object";
    case ConstraintKind::kJsonSchema:
      return "json_schema";
    case ConstraintKind::kRegex:
      return "regex";
    case ConstraintKind::kChoice:
      return "choice";
    case ConstraintKind::kGbnf:
      return "gbnf";
  }
  return "unknown";
}

namespace {

std::string choice_gbnf(const std::vector<std::string>& choices) {
  if (choices.empty())
    throw GrammarError("choices", "a choice constraint needs at least one string");
  std::string body;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (!seen.insert(choices[i]).second) continue;  // a repeat adds nothing
    body += (body.empty() ? "" : " | ") + gbnf_literal(choices[i], "choices/" + std::to_string(i));
  }
  return "root ::= " + body + "\n";
}

std::string schema_gbnf(const std::string& text) {
  // The converter recurses per level: nesting is bounded as request bodies
  // are (server/json_fields.h).
  constexpr int kMaxSchemaDepth = 64;
  const auto depth_guard = [](int depth, nlohmann::ordered_json::parse_event_t,
                              nlohmann::ordered_json&) {
    if (depth > kMaxSchemaDepth) {
      throw GrammarError("", "the JSON schema nests deeper than 64 levels");
    }
    return true;
  };
  nlohmann::ordered_json schema;
  try {
    schema = nlohmann::ordered_json::parse(text, depth_guard);  // keeps property order
  } catch (const nlohmann::json::parse_error& e) {
    throw GrammarError("byte " + std::to_string(e.byte),
                       std::string("the JSON schema is not valid JSON: ") + e.what());
  } catch (const nlohmann::json::exception& e) {  // e.g. a number too large for a double
    throw GrammarError("", std::string("the JSON schema is not valid JSON: ") + e.what());
  }
  return json_schema_to_gbnf(schema);
}

}  // namespace

std::string to_gbnf(const ConstraintSpec& spec) {
  switch (spec.kind) {
    case ConstraintKind::kJsonObject:
      return any_json_object_gbnf();
    case ConstraintKind::kJsonSchema:
      return schema_gbnf(spec.text);
    case ConstraintKind::kRegex:
      return regex_to_gbnf(spec.text, "root");
    case ConstraintKind::kChoice:
      return choice_gbnf(spec.choices);
    case ConstraintKind::kGbnf:
      return spec.text;
  }
  throw GrammarError("", "unknown constraint kind");
}

}  // namespace folio::grammar
