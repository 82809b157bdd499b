// JSON Schema -> GBNF conversion: exact rules for each construct, the shared
// rules appended only when used, and the JSON pointer of every refusal.
// (tests/python/test_grammar_schema.py checks the languages with xgrammar.)
#include "grammar/json_schema.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "grammar/constraint.h"
#include "grammar/grammar_error.h"

namespace folio::grammar {
namespace {

std::string convert(const std::string& schema_text) {
  return to_gbnf({ConstraintKind::kJsonSchema, schema_text, {}});
}

// The first line (the root rule) of the grammar for `schema_text`.
std::string root_rule(const std::string& schema_text) {
  const std::string g = convert(schema_text);
  return g.substr(0, g.find('\n'));
}

const char* const kChar = R"(char ::= [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ))";

TEST(JsonSchemaGbnf, ObjectPropertiesInSchemaOrder) {
  EXPECT_EQ(
      convert(R"({"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"string"}},
                        "required":["a"]})"),
      std::string(
          R"(root ::= "{" ws ( "\"b\"" ws ":" ws integer ws "," ws "\"a\"" ws ":" ws string | )"
          R"("\"a\"" ws ":" ws string ) ws "}")") +
          "\nstring ::= \"\\\"\" char* \"\\\"\"\n" + kChar +
          "\ninteger ::= \"-\"? ( \"0\" | [1-9] [0-9]* )\nws ::= [ \\t\\n\\r]{0,32}\n");
}

TEST(JsonSchemaGbnf, AllOptionalAndRequiredUndeclared) {
  EXPECT_EQ(root_rule(R"({"properties":{"a":{"type":"null"},"b":{"type":"null"}}})"),
            R"(root ::= "{" ws ( ( "\"a\"" ws ":" ws null ( ws "," ws "\"b\"" ws ":" ws null )? | )"
            R"("\"b\"" ws ":" ws null ) ws )? "}")");
  EXPECT_EQ(root_rule(R"({"type":"object","required":["z"]})"),
            R"(root ::= "{" ws "\"z\"" ws ":" ws value ws "}")");
  EXPECT_EQ(root_rule(R"({"type":"object"})"), "root ::= object");
  EXPECT_EQ(root_rule(R"({"type":"object","properties":{}})"), R"(root ::= "{" ws "}")");
}

TEST(JsonSchemaGbnf, AdditionalProperties) {
  const std::string g =
      convert(R"({"properties":{"a":{"type":"boolean"}},"additionalProperties":{"type":"null"}})");
  EXPECT_NE(
      g.find(R"(root ::= "{" ws ( ( "\"a\"" ws ":" ws boolean ( ws "," ws root-additional-kv )* | )"
             R"(root-additional-kv ( ws "," ws root-additional-kv )* ) ws )? "}")"),
      std::string::npos)
      << g;
  // Extra keys are any string except the declared names (a trie of "a").
  EXPECT_NE(g.find(R"(root-other-key ::= ( [a] root-other-key-1 | )"), std::string::npos) << g;
  EXPECT_NE(g.find(R"(root-additional-kv ::= "\"" root-other-key "\"" ws ":" ws null)"),
            std::string::npos)
      << g;
  EXPECT_EQ(root_rule(R"({"properties":{"a":{"type":"null"}},"additionalProperties":false})"),
            R"(root ::= "{" ws ( "\"a\"" ws ":" ws null ws )? "}")");
  EXPECT_EQ(root_rule(R"({"additionalProperties":true})"), "root ::= object");
  EXPECT_EQ(root_rule(R"({"additionalProperties":{"type":"null"}})"),
            R"(root ::= "{" ws ( root-additional-kv ( ws "," ws root-additional-kv )* ws )? "}")");
}

TEST(JsonSchemaGbnf, ManyPropertiesUseTailRules) {
  std::string props;
  for (int i = 0; i < 12; ++i)
    props += std::string(i ? "," : "") + "\"p" + std::to_string(i) + "\":{\"type\":\"null\"}";
  const std::string g = convert("{\"properties\":{" + props + "}}");
  EXPECT_NE(g.find("\nroot-tail-11 ::= "), std::string::npos) << g;
  EXPECT_LT(g.size(), 4000u) << g;  // linear, not quadratic, in the properties
}

TEST(JsonSchemaGbnf, Arrays) {
  EXPECT_EQ(root_rule(R"({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":4})"),
            R"(root ::= "[" ws integer ( ws "," ws integer ){1,3} ws "]")");
  EXPECT_EQ(root_rule(R"({"type":"array"})"),
            R"(root ::= "[" ws ( value ( ws "," ws value )* ws )? "]")");
  EXPECT_EQ(root_rule(R"({"type":"array","maxItems":0})"), R"(root ::= "[" ws "]")");
  EXPECT_EQ(
      root_rule(
          R"({"type":"array","prefixItems":[{"type":"null"},{"type":"boolean"}],"items":{"type":"integer"},)"
          R"("minItems":1,"maxItems":4})"),
      R"(root ::= "[" ws null ( ws "," ws boolean ( ws "," ws integer ){0,2} )? ws "]")");
  EXPECT_EQ(root_rule(R"({"type":"array","prefixItems":[{"type":"null"},{"type":"boolean"}]})"),
            R"(root ::= "[" ws ( null ( ws "," ws boolean )? ws )? "]")");
  EXPECT_EQ(root_rule(R"({"type":"array","items":[{"type":"null"}],"additionalItems":false})"),
            R"(root ::= "[" ws ( null ws )? "]")");
}

TEST(JsonSchemaGbnf, StringsAndFormats) {
  EXPECT_EQ(root_rule(R"({"type":"string","minLength":1,"maxLength":3})"),
            R"(root ::= "\"" char{1,3} "\"")");
  EXPECT_EQ(root_rule(R"({"type":"string","minLength":2})"), R"(root ::= "\"" char{2,} "\"")");
  EXPECT_EQ(root_rule(R"({"type":"string","format":"date-time"})"),
            R"(root ::= "\"" date-time "\"")");
  EXPECT_NE(convert(R"({"format":"uuid"})").find("\nuuid ::= [0-9a-fA-F]{8} \"-\""),
            std::string::npos);
  EXPECT_EQ(
      convert(R"({"type":"string","pattern":"^a(b|c)$"})"),
      "root ::= \"\\\"\" root-pattern \"\\\"\"\nroot-pattern ::= ( \"a\" ( \"b\" | \"c\" ) )\n");
  // Unanchored: any text around the match.
  EXPECT_EQ(root_rule(R"({"pattern":"x"})"), R"(root ::= "\"" root-pattern "\"")");
  EXPECT_NE(convert(R"({"pattern":"x"})")
                .find("root-pattern ::= root-pattern-c1* \"x\" root-pattern-c1*"),
            std::string::npos);
}

TEST(JsonSchemaGbnf, IntegerRanges) {
  EXPECT_EQ(
      root_rule(R"({"type":"integer","minimum":-20,"maximum":305})"),
      R"(root ::= ( [0-9] | [1-9] [0-9] | [1-2] [0-9]{2} | "30" [0-5] | "-" ( [1-9] | "1" [0-9] | "20" ) ))");
  EXPECT_EQ(root_rule(R"({"type":"integer","exclusiveMinimum":5})"),
            R"(root ::= ( [6-9] | [1-9] [0-9]{1,} ))");
  EXPECT_EQ(root_rule(R"({"type":"integer","maximum":-7})"),
            R"(root ::= "-" ( [7-9] | [1-9] [0-9]{1,} ))");
  EXPECT_EQ(root_rule(R"({"type":"integer","minimum":1.5,"exclusiveMaximum":3.5})"),
            R"(root ::= [2-3])");
  EXPECT_EQ(root_rule(R"({"type":"integer","minimum":7,"maximum":7})"), R"(root ::= "7")");
  EXPECT_EQ(root_rule(R"({"type":"integer","minimum":5,"exclusiveMinimum":true})"),
            R"(root ::= ( [6-9] | [1-9] [0-9]{1,} ))");
}

TEST(JsonSchemaGbnf, NumberRanges) {
  EXPECT_EQ(root_rule(R"({"type":"number","exclusiveMinimum":0,"maximum":2})"),
            R"(root ::= ( "1" ( "." [0-9]+ )? | "0." [0-9]* [1-9] [0-9]* | "2" ( "." "0"+ )? ))");
  EXPECT_EQ(root_rule(R"({"type":"number","minimum":-1,"exclusiveMaximum":0})"),
            R"(root ::= ( "-" "0." [0-9]* [1-9] [0-9]* | "-" "1" ( "." "0"+ )? ))");
  EXPECT_EQ(root_rule(R"({"type":"number"})"), "root ::= number");
}

TEST(JsonSchemaGbnf, EnumConstAnyOfRefs) {
  EXPECT_EQ(root_rule(R"({"enum":["a",1,null,{"k":[true]}]})"),
            R"(root ::= ( "\"a\"" | "1" | "null" | "{\"k\":[true]}" ))");
  EXPECT_EQ(root_rule(R"({"enum":["a",1,null],"type":"string"})"), R"(root ::= "\"a\"")");
  EXPECT_EQ(root_rule(R"({"const":"x\"y"})"), R"(root ::= "\"x\\\"y\"")");
  EXPECT_EQ(root_rule(R"({"anyOf":[{"type":"null"},{"type":"boolean"}]})"),
            "root ::= ( null | boolean )");
  EXPECT_EQ(root_rule(R"({"oneOf":[{"type":"null"},{"type":"boolean"}]})"),
            "root ::= ( null | boolean )");
  EXPECT_EQ(root_rule(R"({"type":["string","null"],"maxLength":3})"),
            R"(root ::= ( "\"" char{0,3} "\"" | null ))");
  EXPECT_EQ(root_rule(R"({"type":"integer","nullable":true})"), "root ::= ( integer | null )");
  EXPECT_EQ(
      convert(
          R"({"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"})"),
      "root ::= defs-n\ndefs-n ::= \"{\" ws ( \"\\\"next\\\"\" ws \":\" ws defs-n ws )? \"}\"\n"
      "ws ::= [ \\t\\n\\r]{0,32}\n");
  EXPECT_EQ(
      root_rule(R"({"definitions":{"x":{"type":"null"}},"items":{"$ref":"#/definitions/x"}})"),
      R"(root ::= "[" ws ( definitions-x ( ws "," ws definitions-x )* ws )? "]")");
  EXPECT_EQ(root_rule(R"({"type":"object","properties":{"self":{"$ref":"#"}}})"),
            R"(root ::= "{" ws ( "\"self\"" ws ":" ws root ws )? "}")");
}

TEST(JsonSchemaGbnf, AllOfMergesObjects) {
  EXPECT_EQ(root_rule(R"({"$defs":{"a":{"properties":{"a":{"type":"null"}},"required":["a"]}},
                        "allOf":[{"$ref":"#/$defs/a"},{"properties":{"b":{"type":"null"}},"required":["b"]}]})"),
            R"(root ::= "{" ws "\"a\"" ws ":" ws null ws "," ws "\"b\"" ws ":" ws null ws "}")");
}

TEST(JsonSchemaGbnf, AnnotationsAndUnknownKeywordsAreIgnored) {
  EXPECT_EQ(
      root_rule(
          R"({"title":"t","description":"d","examples":[1],"default":2,"$schema":"x","$id":"y",
                        "$comment":"c","deprecated":true,"readOnly":true,"writeOnly":false,"x-vendor":1,
                        "type":"boolean"})"),
      "root ::= boolean");
  EXPECT_EQ(root_rule("true"), "root ::= value");
  EXPECT_EQ(root_rule("{}"), "root ::= value");
}

TEST(JsonSchemaGbnf, AnyValueAndObjectGrammars) {
  EXPECT_EQ(any_json_value_gbnf().rfind(
                "root ::= value\nvalue ::= object | array | string | number | boolean | null\n", 0),
            0u);
  EXPECT_EQ(any_json_object_gbnf().rfind("root ::= object\n", 0), 0u);
  EXPECT_NE(any_json_object_gbnf().find("\nws ::= "), std::string::npos);
}

TEST(JsonSchemaGbnf, DeterministicAndOrderedOverloads) {
  const char* text =
      R"({"properties":{"b":{"type":"null"},"a":{"type":"null"}},"required":["b","a"]})";
  EXPECT_EQ(convert(text), convert(text));
  // nlohmann::json sorts keys: property order follows.
  EXPECT_NE(json_schema_to_gbnf(nlohmann::json::parse(text)).find(R"("{" ws "\"a\"")"),
            std::string::npos);
  EXPECT_NE(json_schema_to_gbnf(nlohmann::ordered_json::parse(text)).find(R"("{" ws "\"b\"")"),
            std::string::npos);
}

// Every refusal names the keyword by JSON pointer.
TEST(JsonSchemaGbnf, RefusalsNameTheKeyword) {
  struct Case {
    const char* schema;
    const char* where;
    const char* message;
  };
  const Case cases[] = {
      {R"({"properties":{"age":{"type":"integer","multipleOf":3}}})", "/properties/age/multipleOf",
       "multipleOf"},
      {R"({"not":{}})", "/not", "`not`"},
      {R"({"if":{},"then":{}})", "/if", "if/then/else"},
      {R"({"patternProperties":{"^x":{}}})", "/patternProperties", "patternProperties"},
      {R"({"propertyNames":{"maxLength":3}})", "/propertyNames", "propertyNames"},
      {R"({"dependentSchemas":{}})", "/dependentSchemas", "dependentSchemas"},
      {R"({"dependentRequired":{}})", "/dependentRequired", "dependentRequired"},
      {R"({"type":"object","minProperties":1})", "/minProperties", "minProperties"},
      {R"({"type":"array","contains":{}})", "/contains", "contains"},
      {R"({"type":"array","uniqueItems":true})", "/uniqueItems", "uniqueItems"},
      {R"({"unevaluatedProperties":{}})", "/unevaluatedProperties", "unevaluatedProperties"},
      {R"({"type":"string","format":"hostname"})", "/format", "unsupported format \"hostname\""},
      {R"({"type":"string","format":"date","maxLength":3})", "/format", "together with"},
      {R"({"type":"string","pattern":"a","maxLength":3})", "/pattern", "together with"},
      {R"j({"items":{"type":"string","pattern":"a(?=b)"}})j", "/items/pattern",
       "offset 1: lookaround"},
      {R"({"$ref":"https://example.com/s.json"})", "/$ref", "only local references"},
      {R"({"$ref":"#/$defs/missing"})", "/$ref", "does not name"},
      {R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"})",
       "/$ref", "cycle"},
      {R"({"$ref":"#/$defs/a","maxLength":3,"$defs":{"a":{}}})", "/maxLength", "next to `$ref`"},
      {R"({"anyOf":[{"type":"null"}],"type":"string"})", "/type", "next to `anyOf`"},
      {R"({"anyOf":[]})", "/anyOf", "non-empty"},
      {R"({"enum":[1,2],"type":"string"})", "/enum", "no value of the enum"},
      {R"({"allOf":[{"type":"string"}]})", "/allOf/0/type", "object schemas only"},
      {R"({"allOf":[{"maxProperties":2}]})", "/allOf/0/maxProperties", "maxProperties"},
      {R"({"allOf":[{"properties":{"a":{"type":"null"}}},{"properties":{"a":{"type":"string"}}}]})",
       "/allOf/1/properties/a", "differently"},
      {R"({"properties":{"x":false}})", "/properties/x", "`false` matches nothing"},
      {R"({"properties":{"x":3}})", "/properties/x", "object or a boolean"},
      {R"({"type":"strin"})", "/type", "unknown type \"strin\""},
      {R"({"type":"number","minimum":0.5})", "/minimum", "non-integer bounds"},
      {R"({"type":"integer","maximum":1e300})", "/maximum", "out of the supported range"},
      {R"({"type":"integer","minimum":5,"maximum":4})", "", "no number satisfies"},
      {R"({"properties":{"n":{"type":"number","exclusiveMinimum":3,"exclusiveMaximum":3}}})",
       "/properties/n", "no number satisfies"},
      {R"({"type":"array","maxItems":5000})", "/maxItems", "limit of 1000"},
      {R"({"type":"array","minItems":3,"prefixItems":[{}]})", "/minItems", "no array satisfies"},
      {R"({"type":"array","minItems":-1})", "/minItems", "non-negative integer"},
      {R"({"type":"string","maxLength":20000})", "/maxLength", "limit of 10000"},
      {R"({"type":"string","minLength":4,"maxLength":3})", "/maxLength", "below minLength"},
      {R"({"$defs":{"a":{"type":"integer","multipleOf":2}},"items":{"$ref":"#/$defs/a"}})",
       "/$defs/a/multipleOf", "multipleOf"},
      {R"({"properties":{"a/b":{"not":{}}}})", "/properties/a~1b/not", "`not`"},
  };
  for (const auto& c : cases) {
    try {
      convert(c.schema);
      ADD_FAILURE() << "accepted: " << c.schema;
    } catch (const GrammarError& e) {
      EXPECT_EQ(e.where(), c.where) << c.schema;
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos)
          << c.schema << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace folio::grammar
