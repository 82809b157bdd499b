// extract_features: exact counts on typical prompts, and monotonicity: text
// appended to a prompt (plain prose, code, keywords, random bytes) never lowers
// any feature.
#include "route/features.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace folio::route {
namespace {

RouteFeatures features_of(std::string_view text, const FeatureConfig& cfg = {}) {
  RouteInput in;
  in.text = text;
  return extract_features(in, cfg);
}

TEST(Features, CopiesTheCountsTheServerGives) {
  RouteInput in;
  in.text = "hello";
  in.prompt_tokens = 321;
  in.turns = 4;
  in.max_tokens = 2048;
  const RouteFeatures f = extract_features(in, {});
  EXPECT_EQ(f.prompt_tokens, 321);
  EXPECT_EQ(f.turns, 4);
  EXPECT_EQ(f.max_tokens, 2048);
}

TEST(Features, PlainProseHasNoSignals) {
  const RouteFeatures f = features_of("The weather is nice today, isn't it? Let's go for a walk.");
  EXPECT_EQ(f.code_signals, 0);
  EXPECT_EQ(f.math_signals, 0);
  EXPECT_EQ(f.keyword_hits, 0);
}

TEST(Features, CodeSnippet) {
  const RouteFeatures f = features_of(
      "Why is this wrong?\n```python\ndef fact(n):\n    if n == 1:\n        return 1\n"
      "    return n * fact(n - 1)\n```");
  // Line starts: "def ", two "return" (the "if n" is Python's, not "if (").
  // Tokens: two ``` fences, one "==". No line ends in { } ;.
  EXPECT_EQ(f.code_signals, 3 + 2 + 1);
  // Digit runs: 1, 1, 1. Operators with a digit operand: "n == 1", "n - 1".
  EXPECT_EQ(f.math_signals, 3 + 2);
  EXPECT_EQ(f.keyword_hits, 0);
}

TEST(Features, BraceLanguageSnippet) {
  const RouteFeatures f = features_of(
      "#include <vector>\nint main() {\n  std::vector<int> v;\n  return v.size() == 0 ? 0 : "
      "1;\n}\n");
  // Line starts: "int ", "return" (not "#include": it counts as a token).
  // Line ends: "{", ";", ";", "}". Tokens: "#include", "::", "==".
  EXPECT_EQ(f.code_signals, 2 + 4 + 3);
}

TEST(Features, MathQuestion) {
  const RouteFeatures f = features_of("Solve for x: 3x + 7 = 22, then take the sqrt of x.");
  // Digit runs: 3, 7, 22. Operators: "x + 7", "7 = 22". Words: solve, sqrt.
  EXPECT_EQ(f.math_signals, 3 + 2 + 2);
  EXPECT_EQ(f.code_signals, 0);
  EXPECT_EQ(f.keyword_hits, 0);
  EXPECT_EQ(features_of("$$\\frac{a}{b}$$").math_signals, 3);  // two "$$" and "\frac"
}

TEST(Features, DefaultKeywordsWholeWordAtStartCaseInsensitive) {
  const RouteFeatures f = features_of(
      "Prove the claim STEP BY STEP, then explain why it holds and compare approaches. "
      "Disprove nothing; the derived formula counts as derive.");
  // prove, step by step, explain why, compare, derive (in "derived" and
  // "derive"); not "Disprove".
  EXPECT_EQ(f.keyword_hits, 6);
}

TEST(Features, DefaultKeywordsAreTheDocumentedOnes) {
  const std::vector<std::string> k = default_keywords();
  for (const char* w : {"prove", "explain why", "step by step", "analyze", "derive", "compare",
                        "implement", "debug", "optimize", "algorithm"}) {
    EXPECT_NE(std::find(k.begin(), k.end(), w), k.end()) << w;
  }
  EXPECT_EQ(FeatureConfig{}.keywords, k);
}

TEST(Features, ConfiguredKeywordsReplaceTheDefaults) {
  FeatureConfig cfg;
  cfg.keywords = {"Kubernetes", "helm chart"};
  EXPECT_EQ(features_of("Prove it. Write a kubernetes HELM  chart.", cfg).keyword_hits, 2);
  cfg.keywords.clear();
  EXPECT_EQ(features_of("Prove it step by step.", cfg).keyword_hits, 0);
}

bool all_at_least(const RouteFeatures& a, const RouteFeatures& b) {
  return a.code_signals >= b.code_signals && a.math_signals >= b.math_signals &&
         a.keyword_hits >= b.keyword_hits;
}

std::string random_prompt(std::mt19937_64& rng, int fragments) {
  static const std::vector<std::string> kPool = {"the ",
                                                 "cat ",
                                                 "Prove",
                                                 "s ",
                                                 "step by",
                                                 " step",
                                                 "explain ",
                                                 "why",
                                                 "\n",
                                                 "  ",
                                                 "\t",
                                                 "def ",
                                                 "return",
                                                 " x",
                                                 ";",
                                                 "{",
                                                 "}",
                                                 "`",
                                                 "```",
                                                 "=",
                                                 ">",
                                                 "-",
                                                 "+",
                                                 "*",
                                                 "^",
                                                 "(",
                                                 ")",
                                                 "7",
                                                 "12",
                                                 "sqrt",
                                                 "integr",
                                                 "al",
                                                 "$",
                                                 "\\frac",
                                                 ":",
                                                 "#include",
                                                 "\xE2\x80\x94",
                                                 "Derive",
                                                 "debug",
                                                 "."};
  std::uniform_int_distribution<std::size_t> pick(0, kPool.size() - 1);
  std::string s;
  for (int i = 0; i < fragments; ++i) s += kPool[pick(rng)];
  return s;
}

TEST(Features, EveryPrefixHasAtMostTheFeaturesOfTheWhole) {
  std::mt19937_64 rng(5);
  const FeatureConfig cfg;
  RouteFeatures total;
  for (int trial = 0; trial < 60; ++trial) {
    const std::string text = random_prompt(rng, 50);
    RouteFeatures prev = features_of("", cfg);
    for (std::size_t len = 1; len <= text.size(); ++len) {
      const RouteFeatures f = features_of(std::string_view(text).substr(0, len), cfg);
      ASSERT_TRUE(all_at_least(f, prev)) << "fell at byte " << len << " of\n" << text;
      prev = f;
    }
    total.code_signals += prev.code_signals;
    total.math_signals += prev.math_signals;
    total.keyword_hits += prev.keyword_hits;
  }
  EXPECT_GT(total.code_signals, 0);
  EXPECT_GT(total.math_signals, 0);
  EXPECT_GT(total.keyword_hits, 0);
}

TEST(Features, AppendingProseCodeOrKeywordsNeverLowersAFeature) {
  const std::vector<std::string> bases = {"",    "What is 2+3?", "Prove",   "int x = 1;",
                                          "```", "x^",           "step by", "return"};
  const std::vector<std::string> tails = {" and some plain words about the weather.",
                                          "s and more",
                                          "\nfor (int i = 0; i < n; ++i) {\n  sum += i;\n}\n",
                                          " Explain why, step by step, and prove it.",
                                          "2 = 4 and sqrt(16) = 4",
                                          "\n```\n"};
  for (const std::string& base : bases) {
    for (const std::string& tail : tails) {
      EXPECT_TRUE(all_at_least(features_of(base + tail), features_of(base)))
          << "\"" << base << "\" + \"" << tail << "\"";
    }
  }
  // And strictly more, where the tail carries a signal of its own.
  EXPECT_GT(features_of("Hi. Prove it.").keyword_hits, features_of("Hi.").keyword_hits);
  EXPECT_GT(features_of("Hi.\nreturn x;\n").code_signals, features_of("Hi.").code_signals);
  EXPECT_GT(features_of("Hi. 12*7").math_signals, features_of("Hi.").math_signals);
}

}  // namespace
}  // namespace folio::route
