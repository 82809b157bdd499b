// grammar/gbnf_parser.cpp: a recursive-descent GBNF parser that lowers
// repetition to helper rules as it goes.
#include "grammar/gbnf_parser.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "grammar/grammar_error.h"
#include "grammar/grammar_rewrite.h"
#include "tokenizer/utf8.h"

namespace folio::grammar {
namespace {

constexpr int kMaxNesting = 128;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}
bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

class Parser {
 public:
  explicit Parser(std::string_view src) : src_(src) {}

  Grammar run(std::string_view root_name) {
    if (src_.size() > kMaxGrammarBytes) {
      throw GrammarError("", "grammar text of " + std::to_string(src_.size()) +
                                 " bytes is over the limit of " + std::to_string(kMaxGrammarBytes));
    }
    skip_space();
    while (pos_ < src_.size()) {
      const std::size_t at = pos_;
      const std::string name = parse_name();
      skip_space();
      if (!consume("::=")) fail("expected '::=' after rule name '" + name + "'");
      const std::uint32_t id = rule_id(name, at);
      if (defined_[id]) fail_at(at, "rule '" + name + "' is defined twice");
      defined_[id] = true;
      parse_alternatives(id);
      skip_space();
    }
    for (std::uint32_t r = 0; r < defined_.size(); ++r) {
      if (!defined_[r] && !anonymous_[r]) {
        fail_at(first_use_[r], "undefined rule '" + g_.rules[r].name + "'");
      }
    }
    const auto root = ids_.find(std::string(root_name));
    if (root == ids_.end() || !defined_[root->second]) {
      throw GrammarError("", "the grammar has no '" + std::string(root_name) + "' rule");
    }
    g_.root = root->second;
    g_.validate();  // on the grammar as written, so errors name its rules
    fold_class_loops(g_);
    return std::move(g_);
  }

 private:
  [[noreturn]] void fail_at(std::size_t at, const std::string& what) const {
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < at && i < src_.size(); ++i) {
      if (src_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw GrammarError("line " + std::to_string(line) + ", column " + std::to_string(col), what);
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }

  bool eof() const { return pos_ >= src_.size(); }
  char peek() const { return eof() ? '\0' : src_[pos_]; }
  bool consume(std::string_view s) {
    if (src_.substr(pos_, s.size()) != s) return false;
    pos_ += s.size();
    return true;
  }

  void skip_space() {
    while (!eof()) {
      const char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        while (!eof() && src_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  std::string parse_name() {
    if (!is_name_start(peek())) fail("expected a rule name");
    const std::size_t start = pos_;
    while (!eof() && is_name_char(src_[pos_])) ++pos_;
    return std::string(src_.substr(start, pos_ - start));
  }

  // Whether a new rule (`name ::=`) starts at pos_.
  bool at_rule_start() const {
    std::size_t p = pos_;
    if (p >= src_.size() || !is_name_start(src_[p])) return false;
    while (p < src_.size() && is_name_char(src_[p])) ++p;
    while (p < src_.size() &&
           (src_[p] == ' ' || src_[p] == '\t' || src_[p] == '\r' || src_[p] == '\n')) {
      ++p;
    }
    return src_.substr(p, 3) == "::=";
  }

  std::uint32_t rule_id(const std::string& name, std::size_t at) {
    const auto [it, fresh] = ids_.try_emplace(name, 0);
    if (fresh) {
      it->second = new_rule(name, false);
      first_use_.back() = at;
    }
    return it->second;
  }

  std::uint32_t new_rule(const std::string& name, bool anonymous) {
    const std::uint32_t id = g_.add_rule(name);
    defined_.push_back(anonymous);
    anonymous_.push_back(anonymous);
    first_use_.push_back(pos_);
    return id;
  }

  std::uint32_t helper_rule(const char* what) {
    return new_rule(std::string(what) + "-" + std::to_string(helper_count_++), true);
  }

  void add_alternative(std::uint32_t rule, const std::vector<Element>& elems) {
    if (g_.elements.size() + elems.size() + 1 > kMaxGrammarElements) {
      fail("the grammar expands to more than " + std::to_string(kMaxGrammarElements) + " elements");
    }
    g_.add_alternative(rule, elems);
  }

  void parse_alternatives(std::uint32_t rule) {
    add_alternative(rule, parse_sequence());
    while (peek() == '|') {
      ++pos_;
      add_alternative(rule, parse_sequence());
    }
  }

  std::vector<Element> parse_sequence() {
    std::vector<Element> seq;
    for (;;) {
      skip_space();
      if (eof() || peek() == '|' || peek() == ')') return seq;
      if (depth_ == 0 && at_rule_start()) return seq;
      std::vector<Element> atom = parse_primary();
      apply_quantifiers(atom);
      seq.insert(seq.end(), atom.begin(), atom.end());
    }
  }

  Element class_element(const std::vector<CodePointRange>& ranges) {
    return Element{ElementKind::kClass, g_.add_class(normalize_ranges(ranges, false))};
  }

  std::vector<Element> parse_primary() {
    const char c = peek();
    if (c == '"') {
      ++pos_;
      std::vector<Element> out;
      while (peek() != '"') {
        if (eof() || peek() == '\n') fail("unterminated string literal");
        const std::uint32_t cp = parse_char();
        out.push_back(class_element({{cp, cp}}));
      }
      ++pos_;
      return out;
    }
    if (c == '[') {
      ++pos_;
      const bool negate = peek() == '^';
      if (negate) ++pos_;
      std::vector<CodePointRange> ranges;
      while (peek() != ']') {
        if (eof()) fail("unterminated character class");
        const std::uint32_t lo = parse_char();
        std::uint32_t hi = lo;
        if (peek() == '-' && pos_ + 1 < src_.size() && src_[pos_ + 1] != ']') {
          ++pos_;
          hi = parse_char();
          if (hi < lo) fail("character range is reversed");
        }
        ranges.push_back({lo, hi});
      }
      ++pos_;
      const std::vector<CodePointRange> set = normalize_ranges(ranges, negate);
      if (set.empty()) fail("character class matches no character");
      return {Element{ElementKind::kClass, g_.add_class(set)}};
    }
    if (c == '.') {
      ++pos_;
      return {Element{ElementKind::kClass, g_.add_class(normalize_ranges({}, true))}};
    }
    if (c == '(') {
      ++pos_;
      if (++depth_ > kMaxNesting) fail("groups nested too deeply");
      const std::uint32_t rule = helper_rule("group");
      parse_alternatives(rule);
      skip_space();
      if (peek() != ')') fail("expected ')'");
      ++pos_;
      --depth_;
      return {Element{ElementKind::kRule, rule}};
    }
    if (is_name_start(c)) {
      const std::size_t at = pos_;
      const std::string name = parse_name();
      return {Element{ElementKind::kRule, rule_id(name, at)}};
    }
    fail("unexpected character '" + std::string(1, c) + "'");
  }

  std::uint32_t parse_count() {
    if (peek() < '0' || peek() > '9') fail("expected a number");
    std::uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      v = v * 10 + static_cast<std::uint64_t>(peek() - '0');
      if (v > kMaxRepetition)
        fail("repetition count over the limit of " + std::to_string(kMaxRepetition));
      ++pos_;
    }
    return static_cast<std::uint32_t>(v);
  }

  // One unit for a repeated atom: itself when it is one element, else a rule.
  Element unit_of(const std::vector<Element>& atom) {
    if (atom.size() == 1) return atom.front();
    const std::uint32_t rule = helper_rule("seq");
    add_alternative(rule, atom);
    return Element{ElementKind::kRule, rule};
  }

  Element star_of(Element unit) {
    if (unit.kind == ElementKind::kClass) return Element{ElementKind::kClassStar, unit.arg};
    const std::uint32_t rule = helper_rule("star");
    add_alternative(rule, {unit, Element{ElementKind::kRule, rule}});
    add_alternative(rule, {});
    return Element{ElementKind::kRule, rule};
  }

  // unit? nested `count` deep: up to `count` more units.
  Element optional_run(Element unit, std::uint32_t count) {
    Element tail{};
    for (std::uint32_t k = 1; k <= count; ++k) {
      const std::uint32_t rule = helper_rule("opt");
      if (k == 1) {
        add_alternative(rule, {unit});
      } else {
        add_alternative(rule, {unit, tail});
      }
      add_alternative(rule, {});
      tail = Element{ElementKind::kRule, rule};
    }
    return tail;
  }

  void apply_quantifiers(std::vector<Element>& atom) {
    for (;;) {
      // As llama.cpp: blanks may separate an operator from its operand.
      while (peek() == ' ' || peek() == '\t' ||
             (depth_ > 0 && (peek() == '\n' || peek() == '\r'))) {
        ++pos_;
      }
      const char q = peek();
      if (q != '*' && q != '+' && q != '?' && q != '{') return;
      const std::size_t at = pos_;
      ++pos_;
      std::uint32_t lo = 0, hi = 0;
      bool unbounded = false;
      if (q == '*') {
        unbounded = true;
      } else if (q == '+') {
        lo = 1;
        unbounded = true;
      } else if (q == '?') {
        hi = 1;
      } else {
        skip_space();
        if (peek() != ',') lo = parse_count();
        skip_space();
        if (peek() == ',') {
          ++pos_;
          skip_space();
          if (peek() == '}') {
            unbounded = true;
          } else {
            hi = parse_count();
          }
        } else {
          hi = lo;
        }
        skip_space();
        if (peek() != '}') fail("expected '}'");
        ++pos_;
        if (!unbounded && hi < lo) fail_at(at, "repetition {m,n} with n < m");
      }
      const Element unit = unit_of(atom);
      std::vector<Element> out;
      if (static_cast<std::uint64_t>(lo) * atom.size() > kMaxGrammarElements) {
        fail_at(at, "repetition expands to too many elements");
      }
      for (std::uint32_t k = 0; k < lo; ++k) out.push_back(unit);
      if (unbounded) {
        out.push_back(star_of(unit));
      } else if (hi > lo) {
        out.push_back(optional_run(unit, hi - lo));
      }
      atom = std::move(out);
    }
  }

  std::uint32_t parse_hex(int digits) {
    std::uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const char c = peek();
      int d = -1;
      if (c >= '0' && c <= '9') d = c - '0';
      if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
      if (d < 0) fail("bad hexadecimal escape");
      v = v * 16 + static_cast<std::uint32_t>(d);
      ++pos_;
    }
    if (v > kMaxCodePoint) fail("escape beyond U+10FFFF");
    return v;
  }

  // One code point of a literal or class (escapes decoded, UTF-8 read).
  std::uint32_t parse_char() {
    const auto c = static_cast<unsigned char>(peek());
    if (c == '\\') {
      ++pos_;
      const char e = peek();
      ++pos_;
      switch (e) {
        case 'n':
          return '\n';
        case 'r':
          return '\r';
        case 't':
          return '\t';
        case '\\':
        case '"':
        case '[':
        case ']':
        case '-':
        case '^':
        case '/':
        case '\'':
          return static_cast<std::uint32_t>(e);
        case 'x':
          return parse_hex(2);
        case 'u':
          return parse_hex(4);
        case 'U':
          return parse_hex(8);
        default:
          fail_at(pos_ - 2, std::string("unknown escape '\\") + e + "'");
      }
    }
    if (c < 0x80) {
      ++pos_;
      return c;
    }
    const std::size_t n = tokenizer::utf8::valid_sequence_length(src_, pos_);
    if (n == 0) fail("invalid UTF-8 in the grammar");
    const auto cp = static_cast<std::uint32_t>(tokenizer::utf8::decode(src_, pos_, n));
    pos_ += n;
    return cp;
  }

  std::string_view src_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  std::uint32_t helper_count_ = 0;
  Grammar g_;
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::vector<bool> defined_;
  std::vector<bool> anonymous_;
  std::vector<std::size_t> first_use_;
};

}  // namespace

Grammar parse_gbnf(std::string_view text, std::string_view root_name) {
  return Parser(text).run(root_name);
}

}  // namespace folio::grammar
