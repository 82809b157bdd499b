#include "route/features.h"

#include <algorithm>
#include <array>
#include <limits>

#include "route/text_patterns.h"

namespace folio::route {
namespace {

// The first token of a line of code (case-sensitive, so prose sentences that
// start with "If" or "For" are not code).
constexpr std::array<std::string_view, 30> kCodeLineStarts = {
    "def ",     "class ",  "return",  "import ",   "elif ",   "if (",     "for (", "while (",
    "switch (", "fn ",     "func ",   "function ", "const ",  "let ",     "var ",  "public ",
    "private ", "static ", "struct ", "template",  "using ",  "package ", "int ",  "void ",
    "auto ",    "print(",  "printf(", "console.",  "#define", "SELECT "};

// Tokens that are rare outside code, counted wherever they occur.
constexpr std::array<std::string_view, 13> kCodeTokens = {
    "```", "=>", "->", "::", "==", "!=", "&&", "||", "#include", "();", "/*", "self.", ":="};

// Math words, matched like keywords (at a word start, case-insensitive).
constexpr std::array<std::string_view, 20> kMathWords = {
    "sqrt",      "integral", "integrate", "derivative",  "differentiate",
    "equation",  "solve",    "theorem",   "lemma",       "polynomial",
    "matrix",    "matrices", "eigen",     "probability", "logarithm",
    "factorial", "modulo",   "prime",     "inequality",  "arithmetic"};

// LaTeX, counted wherever it occurs.
constexpr std::array<std::string_view, 6> kLatex = {"\\frac", "\\int", "\\sum",
                                                    "\\sqrt", "$$",    "\\cdot"};

// Counts are summed in 64 bits and saturate at the int32 maximum, which keeps
// them monotone.
std::int32_t saturate(std::int64_t n) {
  return static_cast<std::int32_t>(
      std::min<std::int64_t>(n, std::numeric_limits<std::int32_t>::max()));
}

std::int64_t code_signals(std::string_view text) {
  std::int64_t n = count_line_starts(text, kCodeLineStarts) + count_line_ends(text, "{};");
  for (std::string_view t : kCodeTokens) n += count_substring(text, t);
  return n;
}

std::int64_t math_signals(std::string_view text) {
  std::int64_t n = count_digit_runs(text) + count_operators(text);
  for (std::string_view w : kMathWords) n += count_phrase(text, w);
  for (std::string_view t : kLatex) n += count_substring(text, t);
  return n;
}

}  // namespace

std::vector<std::string> default_keywords() {
  return {"prove",    "proof",    "derive",   "explain why", "step by step", "analyze",   "analyse",
          "compare",  "evaluate", "justify",  "in detail",   "trade-off",    "implement", "debug",
          "refactor", "optimize", "optimise", "algorithm",   "complexity"};
}

RouteFeatures extract_features(const RouteInput& in, const FeatureConfig& cfg) {
  RouteFeatures f;
  f.prompt_tokens = in.prompt_tokens;
  f.turns = in.turns;
  f.max_tokens = in.max_tokens;
  f.code_signals = saturate(code_signals(in.text));
  f.math_signals = saturate(math_signals(in.text));
  std::int64_t hits = 0;
  for (const std::string& k : cfg.keywords) hits += count_phrase(in.text, k);
  f.keyword_hits = saturate(hits);
  return f;
}

}  // namespace folio::route
