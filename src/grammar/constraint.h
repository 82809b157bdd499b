// grammar/constraint.h: what a request asks its output to match, as sent.
//
// The API layer (response_format, vLLM's guided_* / structured_outputs,
// tool_choice, the CLI's --json-schema / --grammar) fills one
// ConstraintSpec; grammar::to_gbnf turns it into GBNF text, the one
// grammar language the matcher compiles (grammar/gbnf_parser.h). Compiled
// grammars are cached by (kind, text), so equal schemas compile once.
#pragma once

#include <string>
#include <vector>

namespace folio::grammar {

enum class ConstraintKind {
  kJsonObject,  // any JSON object (response_format json_object)
  kJsonSchema,  // `text` is a JSON Schema document
  kRegex,       // `text` is a regular expression (whole output matches it)
  kChoice,      // the output is exactly one of `choices`
  kGbnf,        // `text` is a GBNF grammar with a `root` rule
};

const char* constraint_kind_name(ConstraintKind k);

struct ConstraintSpec {
  ConstraintKind kind = ConstraintKind::kJsonObject;
  std::string text;                  // schema / regex / grammar (kJsonObject: unused)
  std::vector<std::string> choices;  // kChoice
  // json_schema: vLLM's disable_additional_properties / OpenAI strict
  // semantics are expressed in the schema itself; nothing extra here.
};

// The GBNF grammar for `spec`. Throws GrammarError (grammar/grammar_error.h)
// naming the offending part (a JSON pointer into a schema, an offset into a
// regex) when it cannot be expressed.
std::string to_gbnf(const ConstraintSpec& spec);

}  // namespace folio::grammar
