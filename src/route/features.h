// route/features.h: what the router reads from a request: its length, turns
// and max_tokens, and counts of the signals that make a request hard (code,
// math, hard-request keywords) in its text.
//
// Every text feature is a count, never a density: a density (signals per
// token) would fall when plain text is appended, and a longer prompt must
// never look easier. Each counter is monotone under appending
// (text_patterns.h), so extract_features of `text + more` is at least that of
// `text` in every field.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace folio::route {

// What the server hands over, from the parsed request.
struct RouteInput {
  // The user-visible prompt text (chat: the message contents joined by "\n";
  // completions: the prompt).
  std::string_view text;
  std::int32_t prompt_tokens = 0;  // counted with the SMALL model's tokenizer (template applied)
  std::int32_t turns = 1;          // chat: number of user messages; completions: 1
  std::int32_t max_tokens = 0;     // requested max_tokens / max_completion_tokens; 0 = not set
};

struct RouteFeatures {
  std::int32_t prompt_tokens = 0;  // copied from RouteInput
  std::int32_t turns = 1;          // copied from RouteInput
  std::int32_t max_tokens = 0;     // copied from RouteInput
  // Lines that start with a code keyword (`def `, `return`, `#include`, ...),
  // `{` `}` `;` ending a line, and code tokens anywhere (``` fences, `=>`,
  // `->`, `::`, `==`, `&&`, ...).
  std::int32_t code_signals = 0;
  // Numbers (digit runs), operators between operands ("12*7", "x^2 = 4"),
  // math words at a word start ("sqrt", "integral", "equation", "solve", ...)
  // and LaTeX ("\frac", "$$", ...).
  std::int32_t math_signals = 0;
  // Occurrences of the configured keywords (FeatureConfig), each matched at a
  // word start, case-insensitively.
  std::int32_t keyword_hits = 0;

  bool operator==(const RouteFeatures&) const = default;
};

// Words and phrases that mark a request asking for reasoning, analysis or
// engineering rather than a lookup or chat: "prove", "proof", "derive",
// "explain why", "step by step", "analyze", "analyse", "compare", "evaluate",
// "justify", "in detail", "trade-off", "implement", "debug", "refactor",
// "optimize", "optimise", "algorithm", "complexity". Each matches at a word
// start and may run on ("derive" counts "derived", "implement" counts
// "implementation"), so the list holds stems of the common inflections.
// Words that are mostly math ("solve", "integral") are math signals instead,
// so that one word is not counted twice.
std::vector<std::string> default_keywords();

struct FeatureConfig {
  std::vector<std::string> keywords = default_keywords();  // matched as count_phrase does
};

RouteFeatures extract_features(const RouteInput& in, const FeatureConfig& cfg);

}  // namespace folio::route
