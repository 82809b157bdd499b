// Regex -> GBNF conversion: exact output for the supported syntax, and the
// offset of every refused construct.
#include "grammar/regex_gbnf.h"

#include <gtest/gtest.h>

#include <string>

#include "grammar/constraint.h"
#include "grammar/grammar_error.h"

namespace folio::grammar {
namespace {

std::string root_of(const std::string& re, const RegexOptions& opt = {}) {
  return regex_to_gbnf(re, "root", opt);
}

// The GrammarError's `where` for `re`, or "" when it converts.
std::string error_where(const std::string& re, std::string* message = nullptr) {
  try {
    regex_to_gbnf(re, "root");
  } catch (const GrammarError& e) {
    if (message) *message = e.what();
    return e.where();
  }
  return "";
}

TEST(RegexGbnf, LiteralsMergeIntoOneString) {
  EXPECT_EQ(root_of("abc"), "root ::= \"abc\"\n");
  EXPECT_EQ(root_of("a\"b\\\\"), "root ::= \"a\\\"b\\\\\"\n");
  EXPECT_EQ(root_of("\\.\\*\\/"), "root ::= \".*/\"\n");
  EXPECT_EQ(root_of(""), "root ::= \"\"\n");
}

TEST(RegexGbnf, ClassesAndEscapes) {
  EXPECT_EQ(root_of("[a-cx]"), "root ::= [a-cx]\n");
  EXPECT_EQ(root_of("[^a-c]"), "root ::= [^a-c]\n");
  EXPECT_EQ(root_of("\\d"), "root ::= [0-9]\n");
  EXPECT_EQ(root_of("\\w"), "root ::= [0-9A-Z_a-z]\n");
  EXPECT_EQ(root_of("\\D"), "root ::= [^0-9]\n");
  EXPECT_EQ(root_of("."), "root ::= [^\\n]\n");
  EXPECT_EQ(root_of("[\\d-z]"), "root ::= [\\-0-9z]\n");    // a set cannot start a range
  EXPECT_EQ(root_of("[a\\-\\]]"), "root ::= [\\-\\]a]\n");  // escaped class metacharacters
  EXPECT_EQ(root_of("\\x41\\u00e9\\t"), "root ::= \"A\xC3\xA9\\t\"\n");
  EXPECT_EQ(root_of("[^]"), "root ::= [\\x00-\\U0010FFFF]\n");
  EXPECT_EQ(root_of("[\\b]"), "root ::= \"\\x08\"\n");
  EXPECT_EQ(
      root_of("\\s"),
      "root ::= [\\t-\\r \xC2\xA0\xE1\x9A\x80\xE2\x80\x80-\xE2\x80\x8A\xE2\x80\xA8\xE2\x80\xA9"
      "\xE2\x80\xAF\xE2\x81\x9F\xE3\x80\x80\xEF\xBB\xBF]\n");
}

TEST(RegexGbnf, GroupsAlternationQuantifiers) {
  EXPECT_EQ(root_of("(ab|c)+d?"), "root ::= ( ( \"ab\" | \"c\" )+ \"d\"? )\n");
  EXPECT_EQ(root_of("(?:a)*?b{2}c{1,}d{0,3}e{3,5}"),
            "root ::= ( \"a\"* \"b\"{2} \"c\"+ \"d\"{0,3} \"e\"{3,5} )\n");
  EXPECT_EQ(root_of("(?<year>\\d{4})"), "root ::= [0-9]{4}\n");
  EXPECT_EQ(root_of("(a*)*"), "root ::= ( \"a\"* )*\n");  // never "a"**
  EXPECT_EQ(root_of("a|"), "root ::= \"a\" | \"\"\n");
  EXPECT_EQ(root_of("x{,5}"), "root ::= \"x{,5}\"\n");  // not a quantifier: literal
}

TEST(RegexGbnf, AnchorsAtTheEndsOnly) {
  EXPECT_EQ(root_of("^ab$"), "root ::= \"ab\"\n");
  EXPECT_EQ(root_of("^a|b$"), "root ::= \"a\" | \"b\"\n");
  EXPECT_EQ(error_where("a^b"), "offset 1");
  EXPECT_EQ(error_where("a$b"), "offset 1");
  EXPECT_EQ(error_where("(^a)"), "offset 1");
}

TEST(RegexGbnf, SearchModePadsUnanchoredEnds) {
  const RegexOptions search{.json_string = false, .search = true};
  EXPECT_EQ(root_of("^a", search), "root ::= \"a\" [\\x00-\\U0010FFFF]*\n");
  EXPECT_EQ(root_of("a$", search), "root ::= [\\x00-\\U0010FFFF]* \"a\"\n");
  EXPECT_EQ(root_of("^a$", search), "root ::= \"a\"\n");
}

TEST(RegexGbnf, JsonStringModeWritesJsonEncodings) {
  const RegexOptions json{.json_string = true, .search = false};
  EXPECT_EQ(root_of("a\"\\\\\n", json), "root ::= \"a\\\\\\\"\\\\\\\\\\\\n\"\n");
  // A set with characters JSON must escape: raw part plus the escapes.
  EXPECT_EQ(root_of("[^a]", json),
            "root ::= root-c1\n"
            "root-c1 ::= [^\\x00-\\x1F\"\\\\a] | \"\\\\\\\"\" | \"\\\\\\\\\" | \"\\\\\" [bfnrt] | "
            "\"\\\\u00\" ( \"0\" [0-7bBeEfF] | \"1\" [0-9a-fA-F] )\n");
  EXPECT_EQ(root_of("[\\x01\\n]", json),
            "root ::= root-c1\nroot-c1 ::= \"\\\\n\" | \"\\\\u0001\"\n");
  EXPECT_EQ(root_of("[a-c]", json), "root ::= [a-c]\n");
}

TEST(RegexGbnf, RefusedConstructsNameTheirOffset) {
  struct Case {
    const char* re;
    const char* where;
    const char* message;
  };
  const Case cases[] = {
      {"a(?=b)", "offset 1", "lookaround"},
      {"a(?!b)", "offset 1", "lookaround"},
      {"a(?<=b)", "offset 1", "lookaround"},
      {"a(?<!b)", "offset 1", "lookaround"},
      {"(a)\\1", "offset 3", "backreferences"},
      {"(?<n>a)\\k<n>", "offset 7", "backreferences"},
      {"\\bword", "offset 0", "word boundaries"},
      {"a\\B", "offset 1", "word boundaries"},
      {"\\p{L}", "offset 0", "Unicode property"},
      {"(?i)a", "offset 0", "inline flags"},
      {"a*+", "offset 2", "possessive"},
      {"a**", "offset 2", "nothing to repeat"},
      {"a{2}{3}", "offset 4", "nothing to repeat"},
      {"*a", "offset 0", "nothing to repeat"},
      {"a{1001}", "offset 1", "limit of 1000"},
      {"a{3,2}", "offset 1", "n < m"},
      {"(ab", "offset 0", "unterminated group"},
      {"ab)", "offset 2", "unmatched ')'"},
      {"[ab", "offset 0", "unterminated character class"},
      {"[z-a]", "offset 2", "out of order"},
      {"[]", "offset 0", "matches nothing"},
      {"\\A", "offset 0", "unsupported escape \\A"},
      {"\\u{1F600}", "offset 0", "\\u{...}"},
      {"\\xZZ", "offset 0", "malformed hex"},
      {"\\012", "offset 0", "octal"},
      {"ab\\", "offset 2", "trailing backslash"},
      {"a\xFF", "offset 1", "invalid UTF-8"},
  };
  for (const auto& c : cases) {
    std::string message;
    EXPECT_EQ(error_where(c.re, &message), c.where) << c.re;
    EXPECT_NE(message.find(c.message), std::string::npos) << c.re << ": " << message;
  }
}

TEST(RegexGbnf, HelperRulesArePrefixed) {
  const RegexOptions json{.json_string = true, .search = true};
  const std::string g = regex_to_gbnf("^a.b", "root-x-pattern", json);
  EXPECT_EQ(g.rfind("root-x-pattern ::= ", 0), 0u) << g;
  EXPECT_NE(g.find("\nroot-x-pattern-c1 ::= "), std::string::npos) << g;
}

TEST(GbnfText, LiteralAndClassEscapes) {
  EXPECT_EQ(gbnf_literal("a\"\\\n\r\t\x01\x7F\xC3\xA9"),
            "\"a\\\"\\\\\\n\\r\\t\\x01\\x7F\xC3\xA9\"");
  EXPECT_THROW(gbnf_literal("\xC3"), GrammarError);
  EXPECT_EQ(gbnf_class({{'a', 'a'}, {'c', 'd'}, {'f', 'h'}}), "[acdf-h]");
  EXPECT_EQ(gbnf_class({{0, 9}, {11, 0x10FFFF}}), "[^\\n]");
}

TEST(Constraint, KindsDispatch) {
  EXPECT_STREQ(constraint_kind_name(ConstraintKind::kJsonSchema), "json_schema");
  EXPECT_STREQ(constraint_kind_name(ConstraintKind::kChoice), "choice");
  ConstraintSpec choice{ConstraintKind::kChoice, "", {"yes", "no \"x\"", "yes"}};
  EXPECT_EQ(to_gbnf(choice), "root ::= \"yes\" | \"no \\\"x\\\"\"\n");
  ConstraintSpec gbnf{ConstraintKind::kGbnf, "root ::= \"x\"\n", {}};
  EXPECT_EQ(to_gbnf(gbnf), gbnf.text);
  ConstraintSpec regex{ConstraintKind::kRegex, "a+", {}};
  EXPECT_EQ(to_gbnf(regex), "root ::= \"a\"+\n");
  ConstraintSpec object{ConstraintKind::kJsonObject, "", {}};
  EXPECT_EQ(to_gbnf(object).rfind("root ::= object\nvalue ::= ", 0), 0u);
}

TEST(Constraint, ErrorsNameThePlace) {
  try {
    to_gbnf({ConstraintKind::kChoice, "", {}});
    FAIL();
  } catch (const GrammarError& e) {
    EXPECT_EQ(e.where(), "choices");
  }
  try {
    to_gbnf({ConstraintKind::kChoice, "", {"ok", "\xFF"}});
    FAIL();
  } catch (const GrammarError& e) {
    EXPECT_EQ(e.where(), "choices/1");
  }
  try {
    to_gbnf({ConstraintKind::kJsonSchema, "{\"type\": \"object\",}", {}});
    FAIL();
  } catch (const GrammarError& e) {
    EXPECT_EQ(e.where(), "byte 19");
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos);
  }
  // A number beyond a double is an out_of_range, not a parse_error, in
  // nlohmann::json (found by fuzz/grammar_fuzz.cpp): still a GrammarError.
  try {
    to_gbnf({ConstraintKind::kJsonSchema, "{\"maximum\": 3E333}", {}});
    FAIL();
  } catch (const GrammarError& e) {
    EXPECT_NE(std::string(e.what()).find("number overflow"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace folio::grammar
