#include "route/text_patterns.h"

#include <cstddef>

namespace folio::route {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_blank(char c) {
  return c == ' ' || c == '\t';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
// Bytes >= 0x80 belong to a multi-byte UTF-8 letter (or symbol): treating them
// as word bytes keeps "prove" from matching inside "déprove".
bool is_word_byte(char c) {
  return is_alpha(c) || is_digit(c) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
bool is_operator(char c) {
  return c == '+' || c == '-' || c == '*' || c == '/' || c == '^' || c == '=' || c == '<' ||
         c == '>' || c == '%';
}
bool is_operand(char c) {
  return is_alpha(c) || is_digit(c) || c == '(' || c == ')';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Whether `phrase` (trimmed, non-empty) matches `text` from `i`. A whitespace
// run in the phrase consumes a whole whitespace run of the text; the phrase
// byte after it is not whitespace, so the greedy consumption never needs to
// back off.
bool phrase_at(std::string_view text, std::size_t i, std::string_view phrase) {
  std::size_t k = 0;
  while (k < phrase.size()) {
    if (is_space(phrase[k])) {
      while (k < phrase.size() && is_space(phrase[k])) ++k;
      if (i >= text.size() || !is_space(text[i])) return false;
      while (i < text.size() && is_space(text[i])) ++i;
      continue;
    }
    if (i >= text.size() || lower(text[i]) != lower(phrase[k])) return false;
    ++i;
    ++k;
  }
  return true;
}

}  // namespace

std::int64_t count_phrase(std::string_view text, std::string_view phrase) {
  phrase = trim(phrase);
  if (phrase.empty()) return 0;
  const char first = lower(phrase.front());
  std::int64_t n = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (lower(text[i]) != first) continue;
    if (i > 0 && is_word_byte(text[i - 1])) continue;
    if (phrase_at(text, i, phrase)) ++n;
  }
  return n;
}

std::int64_t count_substring(std::string_view text, std::string_view pattern) {
  if (pattern.empty()) return 0;
  std::int64_t n = 0;
  for (std::size_t i = text.find(pattern); i != std::string_view::npos;
       i = text.find(pattern, i + pattern.size())) {
    ++n;
  }
  return n;
}

std::int64_t count_line_starts(std::string_view text, std::span<const std::string_view> prefixes) {
  std::int64_t n = 0;
  std::size_t line = 0;
  while (line < text.size()) {
    std::size_t i = line;
    while (i < text.size() && is_blank(text[i])) ++i;
    const std::string_view rest = text.substr(i);
    for (std::string_view p : prefixes) {
      if (!p.empty() && rest.starts_with(p)) {
        ++n;
        break;
      }
    }
    const std::size_t nl = text.find('\n', i);
    if (nl == std::string_view::npos) break;
    line = nl + 1;
  }
  return n;
}

std::int64_t count_line_ends(std::string_view text, std::string_view enders) {
  std::int64_t n = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (enders.find(text[i]) == std::string_view::npos) continue;
    std::size_t j = i + 1;
    while (j < text.size() && (is_blank(text[j]) || text[j] == '\r')) ++j;
    if (j < text.size() && text[j] == '\n') ++n;
  }
  return n;
}

std::int64_t count_digit_runs(std::string_view text) {
  std::int64_t n = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (is_digit(text[i]) && (i == 0 || !is_digit(text[i - 1]))) ++n;
  }
  return n;
}

std::int64_t count_operators(std::string_view text) {
  std::int64_t n = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!is_operator(text[i])) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < text.size() && is_operator(text[i])) ++i;  // the run is [start, i)
    std::size_t l = start;
    while (l > 0 && is_blank(text[l - 1])) --l;
    std::size_t r = i;
    while (r < text.size() && is_blank(text[r])) ++r;
    // A run still open at the end of the text has no right operand yet: it
    // counts once one is appended, never before.
    if (l == 0 || r == text.size()) continue;
    const char left = text[l - 1];
    const char right = text[r];
    if (is_operand(left) && is_operand(right) && (is_digit(left) || is_digit(right))) ++n;
  }
  return n;
}

}  // namespace folio::route
