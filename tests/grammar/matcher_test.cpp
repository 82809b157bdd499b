// The matcher's masks against a brute-force reference (every token tried
// by accept_token and rolled back), along seeded random walks, on a
// made-up vocabulary with multi-byte, character-splitting and
// terminal-spanning tokens.
#include "grammar/matcher.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "grammar/gbnf_parser.h"

namespace folio::grammar {
namespace {

constexpr TokenId kStop = 0;
constexpr TokenId kControl = 1;

std::shared_ptr<const TokenVocab> test_vocab() {
  std::vector<std::string> bytes = {"", "<ctrl>"};
  std::vector<bool> text = {false, false};
  for (int b = 0; b < 256; ++b) {
    bytes.emplace_back(1, static_cast<char>(b));
    text.push_back(true);
  }
  for (const char* s :
       {"{",          "}",        "{\"",    "\":",  "\",",    "\"}",   "\"}\n",        "ab",
        "a\"",        "\"a",      "  ",     "true", "null",   ", ",    ",\"",          "\xC3\xA9",
        "\xC3\xA9\"", "\xE2\x82", "\xAC\"", "12",   "1.5",    "-0",    "[]",           "{}",
        "[{",         "}]",       "},{\"",  "\"\"", "\\n",    "\\u00", "name",         "\":\"",
        "\": ",       " {",       "\n",     "},",   "abc\"}", "xyz",   "\"name\": \"", "42}",
        "[1,",        "2]",       "ba",     "bab",  "abab"}) {
    bytes.emplace_back(s);
    text.push_back(true);
  }
  bytes.emplace_back("");  // an empty token: never allowed
  text.push_back(true);
  return std::make_shared<const TokenVocab>(std::move(bytes), std::move(text));
}

bool bit(const std::vector<std::uint64_t>& m, TokenId id) {
  const auto u = static_cast<std::size_t>(id);
  return (m[u / 64] >> (u % 64)) & 1;
}

// Walks `steps` seeded random tokens, checking each mask against the
// brute-force set; returns the texts generated.
std::vector<std::string> walk(const std::string& gbnf, int walks, int steps, unsigned seed) {
  auto vocab = test_vocab();
  auto cg = std::make_shared<const CompiledGrammar>(parse_gbnf(gbnf), vocab);
  std::mt19937 rng(seed);
  std::vector<std::string> texts;
  for (int w = 0; w < walks; ++w) {
    GrammarMatcher m(cg, {kStop});
    std::string text;
    for (int s = 0; s < steps && !m.terminated(); ++s) {
      std::vector<std::uint64_t> mask(m.mask_words());
      m.fill_mask(mask);
      std::vector<TokenId> allowed;
      for (TokenId id = 0; static_cast<std::size_t>(id) < vocab->size(); ++id) {
        const bool ok = m.accept_token(id);
        if (ok) m.rollback(1);
        EXPECT_EQ(bit(mask, id), ok)
            << "token " << id << " '" << vocab->bytes(id) << "' after '" << text << "'";
        if (ok) allowed.push_back(id);
      }
      EXPECT_FALSE(allowed.empty()) << "nothing allowed after '" << text << "'";
      if (allowed.empty()) break;
      // Prefer text tokens so walks get somewhere; stop when only stop is left.
      const TokenId pick =
          allowed[std::uniform_int_distribution<std::size_t>(0, allowed.size() - 1)(rng)];
      EXPECT_TRUE(m.accept_token(pick));
      if (pick != kStop) text += vocab->bytes(pick);
    }
    texts.push_back(text);
  }
  return texts;
}

const char* kJsonish = R"(
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null")
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}"
array  ::= "[" ws ( value ("," ws value)* )? "]"
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]{1,16})? ws
ws     ::= | " " | "\n"
)";

TEST(Matcher, MaskEqualsBruteForceOnJsonWalks) {
  const auto texts = walk(kJsonish, 12, 40, 1);
  std::size_t total = 0;
  for (const std::string& t : texts) {
    EXPECT_EQ(t.front(), '{') << t;
    total += t.size();
  }
  EXPECT_GT(total, 200u);  // the walks went somewhere
}

TEST(Matcher, MaskEqualsBruteForceOnStringsAndStars) {
  walk(R"(root ::= "\"" [^"]* "\"" ("," "\"" [a-c]* "\"")*)", 10, 40, 2);
  walk(R"(root ::= ("ab" | "a" "b"? | "ba")+ "!")", 10, 30, 3);
  walk(R"(root ::= [^\x00-\x7F]{2,5} "\"")", 10, 10, 4);
}

TEST(Matcher, StopOnlyWhereTheGrammarMayEnd) {
  auto vocab = test_vocab();
  auto cg = std::make_shared<const CompiledGrammar>(parse_gbnf(R"(root ::= "ab" | "abab")"), vocab);
  GrammarMatcher m(cg, {kStop});
  EXPECT_FALSE(m.accept_token(kStop));
  EXPECT_FALSE(m.accept_token(kControl));
  ASSERT_TRUE(m.accept_bytes("ab"));
  EXPECT_TRUE(m.can_end());
  EXPECT_FALSE(m.must_end());
  std::vector<std::uint64_t> mask(m.mask_words());
  m.fill_mask(mask);
  EXPECT_TRUE(bit(mask, kStop));
  EXPECT_FALSE(bit(mask, kControl));
  ASSERT_TRUE(m.accept_token(kStop));
  EXPECT_TRUE(m.terminated());
  m.fill_mask(mask);
  for (const std::uint64_t w : mask) EXPECT_EQ(w, 0u);
  m.rollback(1);
  EXPECT_FALSE(m.terminated());
}

TEST(Matcher, SplitCharactersAndRollback) {
  auto vocab = test_vocab();
  auto cg =
      std::make_shared<const CompiledGrammar>(parse_gbnf(R"(root ::= "\"" [^"a-z]* "\"")"), vocab);
  GrammarMatcher m(cg, {kStop});
  const auto id_of = [&](std::string_view s) {
    for (TokenId id = 0; static_cast<std::size_t>(id) < vocab->size(); ++id) {
      if (vocab->is_text(id) && vocab->bytes(id) == s) return id;
    }
    ADD_FAILURE() << "no token " << s;
    return TokenId{-1};
  };
  ASSERT_TRUE(m.accept_token(id_of("\"")));
  ASSERT_TRUE(m.accept_token(id_of("\xE2\x82")));  // the first two bytes of the euro sign
  EXPECT_FALSE(m.accept_token(id_of("\"")));       // cannot close mid-character
  ASSERT_TRUE(m.accept_token(id_of("\xAC\"")));    // completes it and closes
  EXPECT_TRUE(m.must_end());
  m.rollback(2);
  EXPECT_EQ(m.num_tokens(), 1u);
  EXPECT_FALSE(m.accept_token(id_of("ab")));
  ASSERT_TRUE(m.accept_token(id_of("\xC3\xA9\"")));
  EXPECT_TRUE(m.can_end());
}

}  // namespace
}  // namespace folio::grammar
