// grammar/grammar_rewrite.cpp: class-loop folding.
#include "grammar/grammar_rewrite.h"

#include <vector>

namespace folio::grammar {
namespace {

// The elements of alternative `start` (without its kEnd).
std::vector<Element> alternative(const Grammar& g, std::uint32_t start) {
  std::vector<Element> out;
  for (std::uint32_t i = start; g.elements[i].kind != ElementKind::kEnd; ++i) {
    out.push_back(g.elements[i]);
  }
  return out;
}

// Whether `s` is S ::= R S | "" (either order); sets the body rule R.
bool is_loop(const Grammar& g, std::uint32_t s, std::uint32_t& body) {
  const Rule& r = g.rules[s];
  if (r.alternatives.size() != 2) return false;
  const std::vector<Element> a = alternative(g, r.alternatives[0]);
  const std::vector<Element> b = alternative(g, r.alternatives[1]);
  const std::vector<Element>& step = a.empty() ? b : a;
  if (!(a.empty() || b.empty()) || step.size() != 2) return false;
  if (step[0].kind != ElementKind::kRule || step[0].arg == s) return false;
  if (step[1].kind != ElementKind::kRule || step[1].arg != s) return false;
  body = step[0].arg;
  return true;
}

}  // namespace

void fold_class_loops(Grammar& g) {
  const std::size_t n_rules = g.rules.size();
  for (std::uint32_t s = 0; s < n_rules; ++s) {
    std::uint32_t body = 0;
    if (!is_loop(g, s, body)) continue;
    std::vector<CodePointRange> chars;
    std::vector<std::vector<Element>> others;
    for (const std::uint32_t start : g.rules[body].alternatives) {
      std::vector<Element> alt = alternative(g, start);
      if (alt.size() == 1 && alt[0].kind == ElementKind::kClass) {
        const auto& ranges = g.classes[alt[0].arg].ranges();
        chars.insert(chars.end(), ranges.begin(), ranges.end());
      } else {
        others.push_back(std::move(alt));
      }
    }
    if (chars.empty()) continue;
    const Element star{ElementKind::kClassStar, g.add_class(normalize_ranges(chars, false))};
    g.rules[s].alternatives.clear();
    if (others.empty()) {
      g.add_alternative(s, {star});
      continue;
    }
    const std::uint32_t rest = g.add_rule(g.rules[s].name + "-rest");
    const std::uint32_t tail = g.add_rule(g.rules[s].name + "-tail");
    for (const std::vector<Element>& alt : others) g.add_alternative(rest, alt);
    g.add_alternative(tail,
                      {Element{ElementKind::kRule, rest}, star, Element{ElementKind::kRule, tail}});
    g.add_alternative(tail, {});
    g.add_alternative(s, {star, Element{ElementKind::kRule, tail}});
  }
}

}  // namespace folio::grammar
