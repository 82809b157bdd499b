// grammar/grammar.cpp: building and checking the byte-level grammar.
#include "grammar/grammar.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "base/error.h"
#include "grammar/grammar_error.h"

namespace folio::grammar {

std::uint32_t Grammar::add_rule(std::string name) {
  rules.push_back(Rule{std::move(name), {}});
  return static_cast<std::uint32_t>(rules.size() - 1);
}

void Grammar::add_alternative(std::uint32_t rule, const std::vector<Element>& elems) {
  FOLIO_CHECK(rule < rules.size());
  rules[rule].alternatives.push_back(static_cast<std::uint32_t>(elements.size()));
  elements.insert(elements.end(), elems.begin(), elems.end());
  elements.push_back(Element{ElementKind::kEnd, rule});
}

std::uint32_t Grammar::add_class(const std::vector<CodePointRange>& normalized) {
  for (std::uint32_t i = 0; i < classes.size(); ++i) {
    if (classes[i].ranges() == normalized) return i;
  }
  classes.emplace_back(normalized);
  return static_cast<std::uint32_t>(classes.size() - 1);
}

void Grammar::validate() const {
  if (root >= rules.size()) throw GrammarError("", "the grammar has no root rule");
  for (const Rule& r : rules) {
    if (r.alternatives.empty())
      throw GrammarError("rule '" + r.name + "'", "rule has no definition");
  }
  for (std::size_t i = 0; i < elements.size(); ++i) {
    if (elements[i].kind == ElementKind::kClass && classes[elements[i].arg].empty()) {
      std::size_t end = i;
      while (elements[end].kind != ElementKind::kEnd) ++end;
      throw GrammarError("rule '" + rules[elements[end].arg].name + "'",
                         "a character class matches no character");
    }
  }
  // Nullable rules: fixed point.
  nullable_.assign(rules.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (std::uint32_t r = 0; r < rules.size(); ++r) {
      if (nullable_[r]) continue;
      for (const std::uint32_t start : rules[r].alternatives) {
        bool all = true;
        for (std::uint32_t i = start; elements[i].kind != ElementKind::kEnd; ++i) {
          const Element& e = elements[i];
          if (e.kind == ElementKind::kClass ||
              (e.kind == ElementKind::kRule && !nullable_[e.arg])) {
            all = false;
            break;
          }
        }
        if (all) {
          nullable_[r] = true;
          changed = true;
          break;
        }
      }
    }
  }
  // Left recursion: the rules each rule can start with (through nullable
  // prefixes) must not lead back to it.
  std::vector<std::vector<std::uint32_t>> first(rules.size());
  for (std::uint32_t r = 0; r < rules.size(); ++r) {
    for (const std::uint32_t start : rules[r].alternatives) {
      for (std::uint32_t i = start; elements[i].kind != ElementKind::kEnd; ++i) {
        const Element& e = elements[i];
        if (e.kind == ElementKind::kRule) first[r].push_back(e.arg);
        if (e.kind == ElementKind::kClass || (e.kind == ElementKind::kRule && !nullable_[e.arg])) {
          break;
        }
      }
    }
  }
  // Iterative depth-first search (a grammar may chain thousands of rules).
  enum : std::uint8_t { kWhite, kGrey, kBlack };
  std::vector<std::uint8_t> colour(rules.size(), kWhite);
  std::vector<std::pair<std::uint32_t, std::size_t>> stack;  // rule, next edge
  for (std::uint32_t r0 = 0; r0 < rules.size(); ++r0) {
    if (colour[r0] != kWhite) continue;
    colour[r0] = kGrey;
    stack.emplace_back(r0, 0);
    while (!stack.empty()) {
      auto& [r, edge] = stack.back();
      if (edge == first[r].size()) {
        colour[r] = kBlack;
        stack.pop_back();
        continue;
      }
      const std::uint32_t s = first[r][edge++];
      if (colour[s] == kGrey) {
        throw GrammarError("rule '" + rules[s].name + "'",
                           "left recursion (the rule can reach itself before matching any "
                           "character; rewrite it with repetition, e.g. x ::= y (\",\" y)*)");
      }
      if (colour[s] == kWhite) {
        colour[s] = kGrey;
        stack.emplace_back(s, 0);
      }
    }
  }
}

namespace {

std::string cp_text(std::uint32_t cp) {
  if (cp >= 0x20 && cp < 0x7F && cp != ']' && cp != '\\' && cp != '-' && cp != '^') {
    return std::string(1, static_cast<char>(cp));
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, cp <= 0xFF ? "\\x%02X" : "\\U%08X", static_cast<unsigned>(cp));
  return buf;
}

}  // namespace

std::string Grammar::dump() const {
  std::string out;
  for (const Rule& r : rules) {
    out += r.name + " ::=";
    for (std::size_t a = 0; a < r.alternatives.size(); ++a) {
      if (a > 0) out += " |";
      for (std::uint32_t i = r.alternatives[a]; elements[i].kind != ElementKind::kEnd; ++i) {
        const Element& e = elements[i];
        if (e.kind == ElementKind::kRule) {
          out += " " + rules[e.arg].name;
          continue;
        }
        out += " [";
        for (const CodePointRange& cr : classes[e.arg].ranges()) {
          out += cp_text(cr.lo);
          if (cr.hi != cr.lo) out += "-" + cp_text(cr.hi);
        }
        out += e.kind == ElementKind::kClassStar ? "]*" : "]";
      }
      if (elements[r.alternatives[a]].kind == ElementKind::kEnd) out += " \"\"";
    }
    out += "\n";
  }
  return out;
}

}  // namespace folio::grammar
