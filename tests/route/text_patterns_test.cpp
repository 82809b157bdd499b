// The pattern counters: exact counts on crafted text, and the property the
// features rely on: no counter ever decreases as text is appended.
#include "route/text_patterns.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace folio::route {
namespace {

TEST(CountPhrase, AtWordStartsCaseInsensitive) {
  EXPECT_EQ(count_phrase("Prove it. Then prove it again; PROVE!", "prove"), 3);
  EXPECT_EQ(count_phrase("disprove, reprove", "prove"), 0);        // not at a word start
  EXPECT_EQ(count_phrase("it proves and is proven", "prove"), 2);  // may run on
  EXPECT_EQ(count_phrase("_prove 9prove", "prove"), 0);            // '_' and digits are word bytes
  EXPECT_EQ(count_phrase("d\xC3\xA9prove", "prove"), 0);           // so are UTF-8 bytes
  EXPECT_EQ(count_phrase("(prove) \"prove\"", "prove"), 2);
  EXPECT_EQ(count_phrase("prov", "prove"), 0);
}

TEST(CountPhrase, WhitespaceInPhraseMatchesAnyRun) {
  EXPECT_EQ(count_phrase("Explain it Step  by\n\tstep.", "step by step"), 1);
  EXPECT_EQ(count_phrase("stepby step", "step by step"), 0);
  EXPECT_EQ(count_phrase("step by step by step", "step by step"), 2);
  EXPECT_EQ(count_phrase("explain why", "  explain   why \n"), 1);  // the phrase is trimmed
}

TEST(CountPhrase, BlankPhraseMatchesNothing) {
  EXPECT_EQ(count_phrase("anything at all", ""), 0);
  EXPECT_EQ(count_phrase("anything at all", " \t\n"), 0);
  EXPECT_EQ(count_phrase("", "prove"), 0);
}

TEST(CountSubstring, NonOverlappingLeftToRight) {
  EXPECT_EQ(count_substring("````", "```"), 1);
  EXPECT_EQ(count_substring("``````", "```"), 2);
  EXPECT_EQ(count_substring("a == b == c", "=="), 2);
  EXPECT_EQ(count_substring("=====", "=="), 2);
  EXPECT_EQ(count_substring("abc", ""), 0);
  EXPECT_EQ(count_substring("", "x"), 0);
}

TEST(CountLineStarts, FirstTokenOfEachLine) {
  constexpr std::array<std::string_view, 3> kPrefixes = {"def ", "return", "re"};
  // "return" and "re" both match line 2: it counts once. "If" is not "if".
  EXPECT_EQ(count_line_starts("def f():\n    return 1\n\treturn\nx = 1  # def \n", kPrefixes), 3);
  EXPECT_EQ(count_line_starts("  def", kPrefixes), 0);  // "def " needs its space
  EXPECT_EQ(count_line_starts("", kPrefixes), 0);
  EXPECT_EQ(count_line_starts("\n\n\nrest", kPrefixes), 1);
}

TEST(CountLineEnds, OnlyFinishedLines) {
  EXPECT_EQ(count_line_ends("a;\nb {  \r\n}\nc; d\ne;", "{};"), 3);
  EXPECT_EQ(count_line_ends("x;", "{};"), 0);  // no newline yet
  EXPECT_EQ(count_line_ends(";;\n", "{};"), 1);
}

TEST(CountDigitRuns, MaximalRuns) {
  EXPECT_EQ(count_digit_runs("12 and 345, x1y2"), 4);
  EXPECT_EQ(count_digit_runs("2023-05-01"), 3);
  EXPECT_EQ(count_digit_runs("no digits"), 0);
}

TEST(CountOperators, BetweenOperandsOneDigit) {
  EXPECT_EQ(count_operators("12*7"), 1);
  EXPECT_EQ(count_operators("x^2"), 1);
  EXPECT_EQ(count_operators("(a+b)^2"), 1);
  EXPECT_EQ(count_operators("2x + 3 = 11"), 2);
  EXPECT_EQ(count_operators("x <= 10 and 2**3"), 2);  // a run counts once
  EXPECT_EQ(count_operators("well-known a+b x = y"), 0);
  EXPECT_EQ(count_operators("2 +\n3"), 0);  // operands on one line
  EXPECT_EQ(count_operators("2 + "), 0);    // no right operand yet
  EXPECT_EQ(count_operators("+3"), 0);      // no left operand
}

// Random text from fragments that exercise every counter, split anywhere.
std::string random_text(std::mt19937_64& rng, std::size_t fragments) {
  static const std::vector<std::string> kPool = {
      "prove",       "Prov", "e",    "s",        " ",           "  ", "\n", "\t",       "\r",
      "step",        "by",   "def ", "return",   "re",          "{",  "}",  ";",        "`",
      "``",          "=",    ">",    "-",        "+",           "*",  "^",  "(",        ")",
      "1",           "23",   "x",    "a",        "\xC3\xA9",    "_",  "::", "#include", "sqrt",
      "Explain why", ".",    "?",    "step by ", "Step by step"};
  std::uniform_int_distribution<std::size_t> pick(0, kPool.size() - 1);
  std::string s;
  for (std::size_t i = 0; i < fragments; ++i) s += kPool[pick(rng)];
  return s;
}

TEST(TextPatterns, EveryCounterIsMonotoneUnderAppending) {
  constexpr std::array<std::string_view, 3> kPrefixes = {"def ", "return", "{"};
  const std::vector<std::pair<const char*, std::function<std::int64_t(std::string_view)>>>
      counters = {
          {"phrase prove", [](std::string_view t) { return count_phrase(t, "prove"); }},
          {"phrase step", [](std::string_view t) { return count_phrase(t, "step by step"); }},
          {"substring ```", [](std::string_view t) { return count_substring(t, "```"); }},
          {"substring ::", [](std::string_view t) { return count_substring(t, "::"); }},
          {"line starts", [&](std::string_view t) { return count_line_starts(t, kPrefixes); }},
          {"line ends", [](std::string_view t) { return count_line_ends(t, "{};"); }},
          {"digit runs", [](std::string_view t) { return count_digit_runs(t); }},
          {"operators", [](std::string_view t) { return count_operators(t); }},
      };
  std::mt19937_64 rng(11);
  std::vector<std::int64_t> grew(counters.size(), 0);
  for (int trial = 0; trial < 200; ++trial) {
    const std::string text = random_text(rng, 60);
    for (std::size_t c = 0; c < counters.size(); ++c) {
      std::int64_t prev = 0;
      for (std::size_t len = 0; len <= text.size(); ++len) {
        const std::int64_t n = counters[c].second(std::string_view(text).substr(0, len));
        ASSERT_GE(n, prev) << counters[c].first << " fell at byte " << len << " of\n" << text;
        prev = n;
      }
      grew[c] += prev;
    }
  }
  // The property is not vacuous: every counter found matches.
  for (std::size_t c = 0; c < counters.size(); ++c) EXPECT_GT(grew[c], 0) << counters[c].first;
}

}  // namespace
}  // namespace folio::route
