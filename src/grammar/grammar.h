// grammar/grammar.h: the compiled form every constraint ends up in: a
// context-free grammar over bytes, ready for the matcher.
//
// Rules are lists of alternatives; an alternative is a run of elements in
// one flat array, closed by kEnd. An element matches one character of a
// class (kClass), any number of them (kClassStar: the common `[^"]*` loops
// in place, so matching a JSON string never leaves its rule), or a whole
// rule (kRule). Literals are runs of one-byte classes. Repetition and
// optional parts are lowered to helper rules by the parser (right
// recursion), so the matcher only knows these four kinds.
//
// Grammar::validate refuses what the matcher cannot run: references to
// rules without alternatives, left recursion (a rule that can reach itself
// before consuming a byte, which would expand forever) and empty classes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "grammar/utf8_class.h"

namespace folio::grammar {

enum class ElementKind : std::uint8_t { kClass, kClassStar, kRule, kEnd };

struct Element {
  ElementKind kind = ElementKind::kEnd;
  std::uint32_t arg = 0;  // kClass / kClassStar: class index; kRule: rule index; kEnd: owner rule
};

struct Rule {
  std::string name;
  std::vector<std::uint32_t> alternatives;  // start offsets into Grammar::elements
};

class Grammar {
 public:
  std::uint32_t add_rule(std::string name);  // empty; alternatives added later
  // Appends one alternative (its elements, without kEnd) to `rule`.
  void add_alternative(std::uint32_t rule, const std::vector<Element>& elems);
  // The class for these code points (interned: equal sets share one automaton).
  std::uint32_t add_class(const std::vector<CodePointRange>& normalized);

  // Throws GrammarError naming the rule (see header comment).
  void validate() const;

  std::uint32_t root = 0;
  std::vector<Rule> rules;
  std::vector<Element> elements;
  std::vector<Utf8Class> classes;

  // Whether a rule can match the empty string (computed by validate()).
  const std::vector<bool>& nullable() const { return nullable_; }

  // Human-readable dump, one rule per line (tests, `folio grammar --dump`).
  std::string dump() const;

 private:
  mutable std::vector<bool> nullable_;
};

}  // namespace folio::grammar
