// grammar/json_schema.h: JSON Schema -> GBNF (structured output, issue #16).
//
// The grammar admits a subset of the schema's valid instances, chosen so a
// model cannot go wrong and cannot stall:
// - Whitespace: between JSON tokens, at most kMaxJsonWhitespace characters of
//   [ \t\n\r] (`ws` rule): enough for pretty-printing a few levels deep, and
//   bounded so a model cannot emit whitespace forever. None before or after
//   the top-level value.
// - Objects: declared properties in schema order (as llama.cpp and xgrammar
//   do), optional ones may be left out; undeclared names listed in
//   `required` follow with any value. Additional properties are admitted
//   only where the schema sets `additionalProperties` to true or a schema,
//   and then after the declared ones, with names other than the declared
//   ones (compared as written: a declared name spelled with \u escapes is
//   not excluded). An absent additionalProperties means *none* (as xgrammar's strict
//   mode, llama.cpp and OpenAI's strict mode): every output is still valid
//   against the schema, and a user who lists properties wants those, not
//   invented extra keys. An object schema with neither `properties` nor
//   `additionalProperties` admits any object.
// - Arrays with prefixItems and no `items` admit no extra items (as objects).
// - enum / const values are written compactly (nlohmann's dump()).
// - integer: no fraction or exponent (1.0 is an integer to JSON Schema but
//   is not generated). minimum / maximum / exclusive* become exact digit
//   grammars. number with bounds: only integer bounds, and then no exponent;
//   other bounds are refused.
// - Strings in canonical JSON encoding where a pattern or format applies
//   (regex_gbnf.h); plain strings admit every JSON escape.
// - pattern follows JSON Schema: unanchored (matches anywhere) unless it
//   starts with ^ / ends with $. pattern cannot be combined with
//   minLength / maxLength / format (refused).
// - format: date, time, date-time (RFC 3339; month days not checked against
//   the month), uuid, ipv4, email (an approximation: dot-atom local part,
//   letter/digit/hyphen domain labels, at least one dot).
// - oneOf is read as anyOf (an instance matching several branches is not
//   excluded). allOf is merged when its members are plain object schemas.
// - $ref: local references ("#", "#/$defs/X", "#/definitions/X", any local
//   JSON pointer); recursion is allowed. Siblings of $ref must be
//   annotations.
// Refused (GrammarError, where = JSON pointer of the keyword): not,
// if/then/else, patternProperties, propertyNames, dependent*, min/maxProperties,
// uniqueItems: true, contains, multipleOf, unknown formats, remote $ref,
// unevaluated* other than false, `false` schemas, unsatisfiable bounds, and
// bounds over the limits below. Annotation keywords (title, description,
// examples, default, $schema, $id, $comment, deprecated, readOnly, writeOnly)
// and unknown keywords are ignored, as JSON Schema says for the latter.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace folio::grammar {

inline constexpr int kMaxJsonWhitespace = 32;        // per gap between tokens
inline constexpr int kMaxArrayItemsBound = 1000;     // minItems / maxItems / prefixItems
inline constexpr int kMaxStringLengthBound = 10000;  // minLength / maxLength

// The GBNF for `schema`; `root` matches exactly the admitted instances.
// Property order is the order of `schema`'s keys, so pass ordered_json
// (constraint.cpp parses schema text that way).
std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema);
// Same, for a schema whose object keys were sorted by nlohmann::json.
std::string json_schema_to_gbnf(const nlohmann::json& schema);

// `root` = any JSON value / any JSON object (response_format json_object).
std::string any_json_value_gbnf();
std::string any_json_object_gbnf();

}  // namespace folio::grammar
