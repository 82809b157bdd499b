// `folio grammar`: print the GBNF grammar a constraint compiles to (the text
// the server would compile for the same response_format / guided_* field).
//
//   folio grammar --json-schema FILE | --json-object | --regex RE
//                 | --choice S [--choice S ...] | --gbnf FILE   [--print-gbnf]
//
// Errors (a schema or regex that cannot be expressed) print the message, with
// the offending JSON pointer or regex offset, and exit with status 2.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/text_file.h"
#include "grammar/constraint.h"

namespace folio::cli {

namespace {

struct GrammarArgs {
  std::string json_schema_file;
  bool json_object = false;
  std::string regex;
  std::vector<std::string> choices;
  std::string gbnf_file;
  bool print_gbnf = true;  // the only action so far; matcher options come later
};

grammar::ConstraintSpec spec_from(const GrammarArgs& a, const CLI::App& sub) {
  grammar::ConstraintSpec spec;
  if (sub.count("--json-schema") > 0) {
    spec.kind = grammar::ConstraintKind::kJsonSchema;
    spec.text = read_text_file(a.json_schema_file);
  } else if (sub.count("--regex") > 0) {
    spec.kind = grammar::ConstraintKind::kRegex;
    spec.text = a.regex;
  } else if (sub.count("--choice") > 0) {
    spec.kind = grammar::ConstraintKind::kChoice;
    spec.choices = a.choices;
  } else if (sub.count("--gbnf") > 0) {
    spec.kind = grammar::ConstraintKind::kGbnf;
    spec.text = read_text_file(a.gbnf_file);
  } else {
    spec.kind = grammar::ConstraintKind::kJsonObject;
  }
  return spec;
}

int run_grammar(const GrammarArgs& a, const CLI::App& sub) {
  try {
    const std::string gbnf = grammar::to_gbnf(spec_from(a, sub));
    if (a.print_gbnf) std::fwrite(gbnf.data(), 1, gbnf.size(), stdout);
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "folio grammar: error: %s\n", e.what());
    return 2;
  }
}

}  // namespace

Command register_grammar(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "grammar", "Print the GBNF grammar of a constraint (JSON Schema, regex, choice, ...)");
  auto a = std::make_shared<GrammarArgs>();
  auto* g = sub->add_option_group("constraint", "what the output must match (one of)");
  g->add_option("--json-schema", a->json_schema_file, "JSON Schema file")->check(CLI::ExistingFile);
  g->add_flag("--json-object", a->json_object, "Any JSON object (the default)");
  g->add_option("--regex", a->regex, "Regular expression the whole output matches");
  g->add_option("--choice", a->choices, "The output is exactly one of these (repeatable)");
  g->add_option("--gbnf", a->gbnf_file, "GBNF grammar file (root rule `root`), passed through")
      ->check(CLI::ExistingFile);
  g->require_option(0, 1);
  sub->add_flag("--print-gbnf", a->print_gbnf, "Print the GBNF text (default)");
  return {sub, [a, sub]() { return run_grammar(*a, *sub); }};
}

}  // namespace folio::cli
