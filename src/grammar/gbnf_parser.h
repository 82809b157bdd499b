// grammar/gbnf_parser.h: GBNF text (llama.cpp's grammar language, also what
// xgrammar's EBNF reads) -> Grammar.
//
//   root  ::= "{" ws pair ("," ws pair)* "}"     # a comment
//   pair  ::= [a-z]+ ":" [0-9]{1,3}
//
// Literals in double quotes, classes in brackets ([^...] negated, ranges,
// `.` any character), groups, alternation, and the postfix operators
// * + ? {m} {m,} {m,n} {,n}. Escapes: \n \r \t \\ \" \[ \] \- \^ \/ \xHH
// \uHHHH \UHHHHHHHH (code points, matched as UTF-8). A rule ends where the
// next `name ::=` starts, so alternatives may continue on following lines.
// Errors are GrammarError with where = "line L, column C". Sizes are
// bounded (text, nesting, repetition counts, total elements): a grammar
// over the limits is refused, not expanded.
#pragma once

#include <string_view>

#include "grammar/grammar.h"

namespace folio::grammar {

inline constexpr std::size_t kMaxGrammarBytes = std::size_t{1} << 20;
inline constexpr std::size_t kMaxGrammarElements = std::size_t{1} << 20;
inline constexpr std::uint32_t kMaxRepetition = 10000;

// Parses and validates; the root is the rule named `root_name`.
Grammar parse_gbnf(std::string_view text, std::string_view root_name = "root");

}  // namespace folio::grammar
