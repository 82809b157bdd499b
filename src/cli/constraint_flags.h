// cli/constraint_flags.h: --json-schema FILE / --grammar FILE / --regex RE
// on `run` and `generate`: the output constraint every request of the
// command gets (structured output, as the server's response_format /
// guided_grammar / guided_regex; src/grammar/).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "grammar/constraint.h"

namespace folio::cli {

struct ConstraintFlags {
  std::string json_schema;  // file
  std::string grammar;      // GBNF file
  std::string regex;
};

void add_constraint_flags(CLI::App* sub, ConstraintFlags& f);

// The constraint the flags ask for (files read); none when no flag is set.
// Throws folio::Error naming the flag when a file cannot be read.
std::optional<grammar::ConstraintSpec> constraint_from_flags(const ConstraintFlags& f);

}  // namespace folio::cli
