// GBNF parsing: accepted syntax, lowering, and every error path.
#include "grammar/gbnf_parser.h"

#include <gtest/gtest.h>

#include <string>

#include "grammar/grammar_error.h"
#include "grammar/pda.h"

namespace folio::grammar {
namespace {

// Whether the whole of `text` is a sentence of the grammar.
bool accepts(const Grammar& g, std::string_view text) {
  Pda pda(g);
  NodeTable nodes;
  MatchState s = pda.start(nodes);
  MatchState next;
  for (const char c : text) {
    pda.step(nodes, s, static_cast<std::uint8_t>(c), next);
    if (next.dead()) return false;
    s = next;
  }
  return s.can_end;
}

std::string error_of(std::string_view text) {
  try {
    parse_gbnf(text);
  } catch (const GrammarError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GbnfParser, LiteralsClassesAndGroups) {
  const Grammar g = parse_gbnf(R"(root ::= "a" [b-d]+ ("x" | "yz")? # comment
)");
  EXPECT_TRUE(accepts(g, "ab"));
  EXPECT_TRUE(accepts(g, "adcbx"));
  EXPECT_TRUE(accepts(g, "abyz"));
  EXPECT_FALSE(accepts(g, "a"));
  EXPECT_FALSE(accepts(g, "abx x"));
  EXPECT_FALSE(accepts(g, "abe"));
}

TEST(GbnfParser, BlanksBeforeOperators) {
  const Grammar g = parse_gbnf("root ::= \"a\" ? [0-9] + (\"x\"\n  | \"y\") {1,2}\n");
  EXPECT_TRUE(accepts(g, "a1x"));
  EXPECT_TRUE(accepts(g, "12yx"));
  EXPECT_FALSE(accepts(g, "a1"));
}

TEST(GbnfParser, AlternativesContinueOnNextLines) {
  const Grammar g = parse_gbnf("root ::= item\n  | \"[\" item \"]\"\nitem ::= [0-9]\n");
  EXPECT_TRUE(accepts(g, "7"));
  EXPECT_TRUE(accepts(g, "[7]"));
  EXPECT_FALSE(accepts(g, "[7"));
}

TEST(GbnfParser, BoundedRepetition) {
  const Grammar g = parse_gbnf(R"(root ::= [a]{2,4} "-" "xy"{2} [0-9]{,2} "!"{1,})");
  EXPECT_TRUE(accepts(g, "aa-xyxy!"));
  EXPECT_TRUE(accepts(g, "aaaa-xyxy12!!!"));
  EXPECT_FALSE(accepts(g, "a-xyxy!"));
  EXPECT_FALSE(accepts(g, "aaaaa-xyxy!"));
  EXPECT_FALSE(accepts(g, "aa-xy!"));
  EXPECT_FALSE(accepts(g, "aa-xyxy123!"));
  EXPECT_FALSE(accepts(g, "aa-xyxy"));
}

TEST(GbnfParser, NegatedClassesMatchWholeUtf8Characters) {
  const Grammar g = parse_gbnf(R"(root ::= "\"" [^"\\]* "\"")");
  EXPECT_TRUE(accepts(g, "\"h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80\""));
  EXPECT_FALSE(accepts(g, "\"a\"b\""));
  EXPECT_FALSE(accepts(g, "\"\xC3\""));          // a lone lead byte
  EXPECT_FALSE(accepts(g, "\"\xED\xA0\x80\""));  // an encoded surrogate
  EXPECT_FALSE(accepts(g, "\"\x80\""));          // a stray continuation byte
}

TEST(GbnfParser, EscapesAndAnyCharacter) {
  const Grammar g = parse_gbnf(R"(root ::= "\x41\u00e9\n" [\t\]\-] . "\U0001F600")");
  EXPECT_TRUE(accepts(g, "A\xC3\xA9\n]z\xF0\x9F\x98\x80"));
  EXPECT_TRUE(accepts(g, "A\xC3\xA9\n-\xE2\x82\xAC\xF0\x9F\x98\x80"));
  EXPECT_FALSE(accepts(g, "A\xC3\xA9\nxz\xF0\x9F\x98\x80"));
}

TEST(GbnfParser, RecursionThatConsumesFirstIsFine) {
  const Grammar g = parse_gbnf(R"g(root ::= "(" root ")" | "")g");
  EXPECT_TRUE(accepts(g, ""));
  EXPECT_TRUE(accepts(g, "((()))"));
  EXPECT_FALSE(accepts(g, "(()"));
}

TEST(GbnfParser, LongListsKeepStacksShallow) {
  const Grammar g = parse_gbnf(R"(root ::= "[" ("1" ("," "1")*)? "]")");
  std::string text = "[1";
  for (int i = 0; i < 5000; ++i) text += ",1";
  text += "]";
  Pda pda(g);
  NodeTable nodes;
  MatchState s = pda.start(nodes);
  MatchState next;
  for (const char c : text) {
    pda.step(nodes, s, static_cast<std::uint8_t>(c), next);
    ASSERT_FALSE(next.dead());
    s = next;
  }
  EXPECT_TRUE(s.can_end);
  EXPECT_LT(nodes.size(), 64u);  // tail calls: no node per element
}

TEST(GbnfParser, Errors) {
  EXPECT_EQ(error_of("root ::= foo"), "line 1, column 10: undefined rule 'foo'");
  EXPECT_EQ(error_of("start ::= \"a\""), "the grammar has no 'root' rule");
  EXPECT_EQ(error_of("root ::= \"a"), "line 1, column 12: unterminated string literal");
  EXPECT_EQ(error_of("root ::= [a-"), "line 1, column 13: unterminated character class");
  EXPECT_EQ(error_of("root ::= [z-a]"), "line 1, column 14: character range is reversed");
  EXPECT_EQ(error_of("root ::= (\"a\""), "line 1, column 14: expected ')'");
  EXPECT_EQ(error_of("root ::= \"a\"\nroot ::= \"b\""),
            "line 2, column 1: rule 'root' is defined twice");
  EXPECT_EQ(error_of("root ::= \"\\q\""), "line 1, column 11: unknown escape '\\q'");
  EXPECT_EQ(error_of("root ::= \"a\"{3,2}"), "line 1, column 13: repetition {m,n} with n < m");
  EXPECT_EQ(error_of("root ::= \"a\"{99999}"),
            "line 1, column 18: repetition count over the limit of 10000");
  EXPECT_EQ(error_of("root ::= root \"a\" | \"b\""),
            "rule 'root': left recursion (the rule can reach itself before matching any "
            "character; rewrite it with repetition, e.g. x ::= y (\",\" y)*)");
  EXPECT_NE(error_of("root ::= (\"\")*").find("left recursion"), std::string::npos);
  EXPECT_EQ(error_of("root ::= @"), "line 1, column 10: unexpected character '@'");
  EXPECT_EQ(error_of("root = \"a\""), "line 1, column 6: expected '::=' after rule name 'root'");
  EXPECT_EQ(error_of(std::string(2u << 20, ' ')),
            "grammar text of 2097152 bytes is over the limit of 1048576");
  std::string deep = "root ::= ";
  for (int i = 0; i < 200; ++i) deep += "(";
  EXPECT_NE(error_of(deep).find("nested too deeply"), std::string::npos);
}

}  // namespace
}  // namespace folio::grammar
