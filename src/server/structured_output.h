// server/structured_output.h: a request's output constraint, as OpenAI and
// vLLM spell it, read into one grammar::ConstraintSpec.
//
//   response_format: {"type": "text"}                       (no constraint)
//                    {"type": "json_object"}                (any JSON object)
//                    {"type": "json_schema", "json_schema": {"name",
//                      "schema", "strict"?, "description"?}}
//   vLLM's structured_outputs: {"json": SCHEMA | "SCHEMA TEXT", "regex",
//                      "choice": [...], "grammar": GBNF, "json_object": true}
//   vLLM's older fields: guided_json, guided_regex, guided_choice,
//                      guided_grammar, guided_decoding_backend ("auto" only:
//                      folio has one engine, src/grammar/).
// At most one constraint per request; a second is a 400 naming it, as is
// an unknown key inside these objects (vLLM's whitespace_pattern,
// disable_any_whitespace and disable_additional_properties are refused by
// name: folio's JSON grammar already bounds whitespace and admits no
// undeclared properties, docs/CONFIG.md). `strict` is accepted either way:
// the schema is always enforced.
//
// `ordered` is the same body parsed with key order kept: a schema's
// properties are generated in the order the client wrote them (nlohmann's
// default object sorts keys). Without it, schemas come out sorted.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "grammar/constraint.h"
#include "server/json_fields.h"

namespace folio::server {

struct OutputConstraint {
  grammar::ConstraintSpec spec;
  std::string field;  // the request field it came from, for error messages
};

std::optional<OutputConstraint> read_output_constraint(Fields& f,
                                                       const nlohmann::ordered_json* ordered);

}  // namespace folio::server
