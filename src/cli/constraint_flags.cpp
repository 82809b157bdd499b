// cli/constraint_flags.cpp: the constraint flags, read into a ConstraintSpec.
#include "cli/constraint_flags.h"

#include "cli/text_file.h"

namespace folio::cli {

void add_constraint_flags(CLI::App* sub, ConstraintFlags& f) {
  auto* g = sub->add_option_group("output constraint", "structured output (at most one)");
  g->add_option("--json-schema", f.json_schema, "The output is JSON valid against this schema file")
      ->check(CLI::ExistingFile);
  g->add_option("--grammar", f.grammar, "The output matches this GBNF grammar file (rule `root`)")
      ->check(CLI::ExistingFile);
  g->add_option("--regex", f.regex, "The output matches this regular expression");
  g->require_option(0, 1);
}

std::optional<grammar::ConstraintSpec> constraint_from_flags(const ConstraintFlags& f) {
  if (!f.json_schema.empty()) {
    return grammar::ConstraintSpec{
        grammar::ConstraintKind::kJsonSchema, read_text_file(f.json_schema), {}};
  }
  if (!f.grammar.empty()) {
    return grammar::ConstraintSpec{grammar::ConstraintKind::kGbnf, read_text_file(f.grammar), {}};
  }
  if (!f.regex.empty())
    return grammar::ConstraintSpec{grammar::ConstraintKind::kRegex, f.regex, {}};
  return std::nullopt;
}

}  // namespace folio::cli
