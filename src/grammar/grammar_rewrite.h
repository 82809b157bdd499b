// grammar/grammar_rewrite.h: rewrites that keep a grammar's language and
// cut what the matcher must track.
//
// fold_class_loops: a loop over a rule some of whose alternatives are
// single characters, S ::= R S | "" with R ::= [a] | [b] | B1 | B2, becomes
// S ::= [ab]* T, T ::= (B1 | B2) [ab]* T | "" ((A|B)* = A* (B A*)*). The
// common case is a JSON string's `char*`: the plain characters then loop
// inside one class element instead of entering and leaving a rule per
// character, so the token-mask cache sees whole tokens of text stay in the
// string rule (accepted) rather than leave it after one character
// (uncertain, checked at every step).
#pragma once

#include "grammar/grammar.h"

namespace folio::grammar {

void fold_class_loops(Grammar& g);

}  // namespace folio::grammar
