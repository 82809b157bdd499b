// grammar/regex_gbnf.h: regular expressions -> GBNF rules, and the small GBNF
// text helpers (literals, character classes) the other converters share.
//
// Supported (ECMAScript-style syntax, the dialect of JSON Schema `pattern` and
// of vLLM's guided_regex): literals; escapes \d \w \s \D \W \S (\s is the
// exact ECMAScript set), \n \r \t \f \v \0 \xHH \uHHHH, and any escaped
// non-alphanumeric character; classes [...] with ranges, negation and those
// escapes; `.` (any code point except \n); groups ( ), (?: ) and (?<name> );
// alternation; quantifiers * + ? {m} {m,} {m,n}, the lazy forms (*? ...)
// read as greedy (same language). ^ and $ only at the start / end of a
// top-level alternative. A `{` that does not start a valid quantifier is a
// literal (as in ECMAScript's web-compatibility grammar).
// Refused with GrammarError, where = "offset N" (a byte offset into the
// regex): backreferences, lookaround, \b \B, \p{..}, inline flags (?i),
// possessive quantifiers, other letter escapes, anchors elsewhere, and
// repetition bounds over kMaxRegexRepeat.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace folio::grammar {

// Repetition bounds ({m,n}) above this are refused: consumers of the GBNF
// expand bounded repetition into rules, and an unbounded-looking expansion
// is a denial of service, not a constraint anyone needs.
inline constexpr int kMaxRegexRepeat = 1000;

struct RegexOptions {
  // The text matched is the *content of a JSON string*: each character the
  // regex matches is written in its canonical JSON encoding (raw, except
  // \" \\ \b \f \n \r \t and \u00XX for other control characters).
  bool json_string = false;
  // JSON Schema `pattern` semantics: the regex may match anywhere, so an
  // alternative without a leading ^ (trailing $) gets any text before
  // (after) it. Otherwise the whole text must match (guided_regex).
  bool search = false;
};

// GBNF rules for `regex`: the rule named `rule_prefix` matches exactly the
// strings the regex accepts (whole-string match unless opt.search); helper
// rules, if any, are named `<rule_prefix>-<suffix>`. Deterministic output.
std::string regex_to_gbnf(std::string_view regex, std::string_view rule_prefix,
                          const RegexOptions& opt = {});

// A GBNF string literal ("...") matching exactly the UTF-8 text `s`. Throws
// GrammarError (where = `where`) when `s` is not valid UTF-8.
std::string gbnf_literal(std::string_view s, const std::string& where = "");

// A GBNF character class matching the code points in `ranges` (inclusive,
// sorted, disjoint, non-empty).
using CodepointRanges = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
std::string gbnf_class(const CodepointRanges& ranges);

// The code points of UTF-8 text; throws GrammarError (where = `where`) when
// it is malformed.
std::vector<std::uint32_t> utf8_codepoints(std::string_view s, const std::string& where);

}  // namespace folio::grammar
