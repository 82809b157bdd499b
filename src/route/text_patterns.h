// route/text_patterns.h: the pattern counters behind the text features
// (features.h), each monotone under appending.
//
// Every counter counts matches decided by the matched characters and the ones
// before them, never by what follows the match or by where the text ends. So
// a match in `s` is still a match in `s + t` for any `t`, and appending text
// never lowers a count: a longer prompt never looks easier. The price of that
// guarantee: a phrase must start a word but may run on into a longer one
// ("prove" also counts in "proves" and "proven"; requiring a word end as well
// would let an appended "s" remove the hit of a final "prove"), and a `;` counts
// as a line end only once the newline after it is there.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace folio::route {

// Occurrences of `phrase` at a word start (the text's start, or after a byte
// that is not an ASCII letter, digit, '_' or part of a UTF-8 sequence), ASCII
// case-insensitive. Whitespace in the phrase matches any run of whitespace in
// the text ("step by step" matches "Step  by\nstep"); whitespace around it is
// ignored. A blank phrase matches nothing.
std::int64_t count_phrase(std::string_view text, std::string_view phrase);

// Non-overlapping occurrences of `pattern`, case-sensitive, taken left to
// right ("````" holds one "```"). An empty pattern matches nothing.
std::int64_t count_substring(std::string_view text, std::string_view pattern);

// Lines whose first characters after spaces and tabs begin with one of
// `prefixes` (case-sensitive); a line counts once whatever number match.
std::int64_t count_line_starts(std::string_view text, std::span<const std::string_view> prefixes);

// Bytes of `enders` that end a finished line: a '\n' follows them, with only
// spaces, tabs or '\r' between.
std::int64_t count_line_ends(std::string_view text, std::string_view enders);

// Maximal runs of ASCII digits ("12 and 345" holds two).
std::int64_t count_digit_runs(std::string_view text);

// Runs of operator bytes (+ - * / ^ = < > %) between two operands on one line,
// spaces and tabs allowed around the run: an operand is an ASCII letter, digit
// or parenthesis, and one of the two must be a digit. "12*7", "x^2", "(a+b)^2"
// and "2x + 3 = 11" count (once per run: 1, 1, 1 and 2); "well-known", "a+b"
// and "x = y" do not.
std::int64_t count_operators(std::string_view text);

}  // namespace folio::route
