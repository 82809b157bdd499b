// grammar/regex_gbnf.cpp: a regex is parsed into a small tree (character
// sets, sequences, alternations, repetitions) and written back as one GBNF
// expression; only long JSON-encoded character sets become helper rules.
#include "grammar/regex_gbnf.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "grammar/grammar_error.h"
#include "tokenizer/utf8.h"

namespace folio::grammar {

namespace {

constexpr std::uint32_t kMaxCodepoint = 0x10FFFF;
constexpr int kUnbounded = -1;

CodepointRanges normalize(CodepointRanges r) {
  std::sort(r.begin(), r.end());
  CodepointRanges out;
  for (const auto& [lo, hi] : r) {
    if (!out.empty() && lo <= out.back().second + 1) {
      out.back().second = std::max(out.back().second, hi);
    } else {
      out.emplace_back(lo, hi);
    }
  }
  return out;
}

CodepointRanges complement(const CodepointRanges& r) {
  CodepointRanges out;
  std::uint32_t next = 0;
  for (const auto& [lo, hi] : r) {
    if (lo > next) out.emplace_back(next, lo - 1);
    next = hi + 1;
  }
  if (next <= kMaxCodepoint) out.emplace_back(next, kMaxCodepoint);
  return out;
}

CodepointRanges intersect(const CodepointRanges& a, const CodepointRanges& b) {
  CodepointRanges out;
  for (const auto& x : a) {
    for (const auto& y : b) {
      const std::uint32_t lo = std::max(x.first, y.first);
      const std::uint32_t hi = std::min(x.second, y.second);
      if (lo <= hi) out.emplace_back(lo, hi);
    }
  }
  return normalize(out);
}

bool contains(const CodepointRanges& r, std::uint32_t cp) {
  return std::any_of(r.begin(), r.end(),
                     [cp](const auto& x) { return x.first <= cp && cp <= x.second; });
}

// Decodes one UTF-8 code point at s[i]; false on malformed input.
// The code point at s[i] (advancing i); false when the bytes there are not
// well-formed UTF-8 (tokenizer/utf8.h's rules: no overlong forms, no
// surrogates, nothing above U+10FFFF).
bool decode_utf8(std::string_view s, std::size_t& i, std::uint32_t& cp) {
  const std::size_t n = tokenizer::utf8::valid_sequence_length(s, i);
  if (n == 0) return false;
  cp = static_cast<std::uint32_t>(tokenizer::utf8::decode(s, i, n));
  i += n;
  return true;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  tokenizer::utf8::append(out, static_cast<char32_t>(cp));
}

// One code point inside a GBNF literal or class: controls, DEL and
// surrogates as escapes, other code points as UTF-8.
std::string gbnf_char(std::uint32_t cp, bool in_class) {
  char buf[16];
  switch (cp) {
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    case '\\':
      return "\\\\";
    default:
      break;
  }
  if (!in_class && cp == '"') return "\\\"";
  if (in_class && (cp == ']' || cp == '[' || cp == '-' || cp == '^'))
    return std::string("\\") + static_cast<char>(cp);
  if (cp < 0x20 || cp == 0x7F) {
    std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(cp));
    return buf;
  }
  if (cp >= 0xD800 && cp <= 0xDFFF) {
    std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(cp));
    return buf;
  }
  if (cp == kMaxCodepoint) return "\\U0010FFFF";
  std::string out;
  append_utf8(out, cp);
  return out;
}

std::string class_body(const CodepointRanges& ranges) {
  std::string out;
  for (const auto& [lo, hi] : ranges) {
    out += gbnf_char(lo, true);
    if (hi > lo + 1) out += '-';
    if (hi > lo) out += gbnf_char(hi, true);
  }
  return out;
}

// The regex tree. kSet: one code point from `set`; kSeq / kAlt: kids;
// kRepeat: kids[0] repeated min..max times (max kUnbounded: no limit).
struct Node {
  enum Kind { kSet, kSeq, kAlt, kRepeat } kind = kSeq;
  CodepointRanges set;
  std::vector<Node> kids;
  int min = 0, max = 0;
};

Node set_node(CodepointRanges r) {
  Node n;
  n.kind = Node::kSet;
  n.set = normalize(std::move(r));
  return n;
}

// ECMAScript's \s: WhiteSpace and LineTerminator.
const CodepointRanges& space_set() {
  static const CodepointRanges kSet = normalize({{0x09, 0x0D},
                                                 {0x20, 0x20},
                                                 {0xA0, 0xA0},
                                                 {0x1680, 0x1680},
                                                 {0x2000, 0x200A},
                                                 {0x2028, 0x2029},
                                                 {0x202F, 0x202F},
                                                 {0x205F, 0x205F},
                                                 {0x3000, 0x3000},
                                                 {0xFEFF, 0xFEFF}});
  return kSet;
}

class RegexParser {
 public:
  explicit RegexParser(std::string_view re) : re_(re) {}

  // Top-level alternatives, each with its ^ / $ anchors.
  struct Branch {
    Node body;
    bool anchored_start = false, anchored_end = false;
  };
  std::vector<Branch> parse() {
    std::vector<Branch> out;
    for (;;) {
      Branch b;
      if (peek('^')) ++pos_, b.anchored_start = true;
      b.body = parse_seq(/*top=*/true, &b.anchored_end);
      out.push_back(std::move(b));
      if (pos_ >= re_.size()) return out;
      if (re_[pos_] == ')') fail(pos_, "unmatched ')'");
      ++pos_;  // '|'
    }
  }

 private:
  [[noreturn]] void fail(std::size_t at, const std::string& what) const {
    throw GrammarError("offset " + std::to_string(at), what);
  }
  bool peek(char c) const { return pos_ < re_.size() && re_[pos_] == c; }

  Node parse_alt() {
    Node alt;
    alt.kind = Node::kAlt;
    alt.kids.push_back(parse_seq(false, nullptr));
    while (peek('|')) {
      ++pos_;
      alt.kids.push_back(parse_seq(false, nullptr));
    }
    return alt.kids.size() == 1 ? std::move(alt.kids[0]) : alt;
  }

  Node parse_seq(bool top, bool* anchored_end) {
    Node seq;
    while (pos_ < re_.size() && re_[pos_] != '|' && re_[pos_] != ')') {
      const std::size_t at = pos_;
      if (re_[pos_] == '$') {
        ++pos_;
        if (top && (pos_ == re_.size() || re_[pos_] == '|')) {
          *anchored_end = true;
          break;
        }
        fail(at, "'$' is only supported at the end of the pattern");
      }
      if (re_[pos_] == '^') fail(at, "'^' is only supported at the start of the pattern");
      Node atom = parse_atom();
      seq.kids.push_back(parse_quantifiers(std::move(atom)));
    }
    return seq.kids.size() == 1 ? std::move(seq.kids[0]) : seq;
  }

  // {m}, {m,}, {m,n} at pos_; false (pos_ unchanged) when it is not one.
  bool parse_braces(int& lo, int& hi) {
    std::size_t p = pos_ + 1;
    auto number = [&](int& v) {
      const std::size_t start = p;
      long long x = 0;
      while (p < re_.size() && re_[p] >= '0' && re_[p] <= '9')
        x = std::min(x * 10 + (re_[p++] - '0'), 1LL << 40);
      v = static_cast<int>(std::min<long long>(x, 1 << 30));
      return p > start;
    };
    if (!number(lo)) return false;
    hi = lo;
    if (p < re_.size() && re_[p] == ',') {
      ++p;
      hi = kUnbounded;
      if (p < re_.size() && re_[p] != '}' && !number(hi)) return false;
    }
    if (p >= re_.size() || re_[p] != '}') return false;
    pos_ = p + 1;
    return true;
  }

  Node parse_quantifiers(Node atom) {
    if (pos_ >= re_.size()) return atom;
    const std::size_t at = pos_;
    int lo = 0, hi = 0;
    const char c = re_[pos_];
    if (c == '*') {
      lo = 0, hi = kUnbounded, ++pos_;
    } else if (c == '+') {
      lo = 1, hi = kUnbounded, ++pos_;
    } else if (c == '?') {
      lo = 0, hi = 1, ++pos_;
    } else if (c != '{' || !parse_braces(lo, hi)) {
      return atom;
    }
    if (hi != kUnbounded && hi < lo) fail(at, "repetition {m,n} with n < m");
    if (std::max(lo, hi) > kMaxRegexRepeat) {
      fail(at, "repetition bound over folio's limit of " + std::to_string(kMaxRegexRepeat));
    }
    if (peek('?')) ++pos_;  // lazy: the same language
    if (peek('+')) fail(pos_, "possessive quantifiers are not supported");
    if (pos_ < re_.size() && (re_[pos_] == '*' || re_[pos_] == '+' || re_[pos_] == '?')) {
      fail(pos_, "nothing to repeat");
    }
    int l2 = 0, h2 = 0;
    const std::size_t save = pos_;
    if (peek('{') && parse_braces(l2, h2)) fail(save, "nothing to repeat");
    Node rep;
    rep.kind = Node::kRepeat;
    rep.min = lo, rep.max = hi;
    rep.kids.push_back(std::move(atom));
    return rep;
  }

  Node parse_atom() {
    const std::size_t at = pos_;
    const char c = re_[pos_];
    if (c == '(') return parse_group();
    if (c == '[') return parse_class();
    if (c == '.') {
      ++pos_;
      return set_node(complement({{'\n', '\n'}}));
    }
    if (c == '*' || c == '+' || c == '?') fail(at, "nothing to repeat");
    if (c == '{') {
      int lo = 0, hi = 0;
      if (parse_braces(lo, hi)) fail(at, "nothing to repeat");
    }
    if (c == '\\') {
      CodepointRanges r = parse_escape(false);
      return set_node(std::move(r));
    }
    const std::uint32_t cp = literal_cp();
    return set_node({{cp, cp}});
  }

  std::uint32_t literal_cp() {
    std::uint32_t cp = 0;
    if (!decode_utf8(re_, pos_, cp)) fail(pos_, "invalid UTF-8");
    return cp;
  }

  Node parse_group() {
    const std::size_t at = pos_;
    ++pos_;
    if (peek('?')) {
      const std::string_view rest = re_.substr(pos_);
      if (rest.starts_with("?:")) {
        pos_ += 2;
      } else if (rest.starts_with("?=") || rest.starts_with("?!") || rest.starts_with("?<=") ||
                 rest.starts_with("?<!")) {
        fail(at, "lookaround assertions are not supported");
      } else if (rest.starts_with("?<") || rest.starts_with("?P<")) {
        const std::size_t close = re_.find('>', pos_);
        if (close == std::string_view::npos) fail(at, "unterminated group name");
        pos_ = close + 1;
      } else {
        fail(at, "inline flags and other (?...) groups are not supported");
      }
    }
    if (++depth_ > kMaxGroupNesting) fail(at, "groups nested more than 64 deep");
    Node inner = parse_alt();
    if (!peek(')')) fail(at, "unterminated group '('");
    ++pos_;
    --depth_;
    // A group is its own node so a quantifier applies to all of it.
    Node g;
    g.kind = Node::kSeq;
    g.kids.push_back(std::move(inner));
    return g;
  }

  static std::uint32_t hex_value(char h) {
    if (h >= '0' && h <= '9') return h - '0';
    if (h >= 'a' && h <= 'f') return h - 'a' + 10;
    if (h >= 'A' && h <= 'F') return h - 'A' + 10;
    return 16;
  }

  std::uint32_t parse_hex(std::size_t digits, std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < digits; ++k) {
      const std::uint32_t d = pos_ < re_.size() ? hex_value(re_[pos_]) : 16;
      if (d > 15) fail(at, "malformed hex escape");
      v = v * 16 + d;
      ++pos_;
    }
    return v;
  }

  // The set an escape at pos_ ('\\') stands for.
  CodepointRanges parse_escape(bool in_class) {
    const std::size_t at = pos_;
    ++pos_;
    if (pos_ >= re_.size()) fail(at, "trailing backslash");
    const char c = re_[pos_++];
    auto one = [](std::uint32_t cp) { return CodepointRanges{{cp, cp}}; };
    static const CodepointRanges kDigit = {{'0', '9'}};
    static const CodepointRanges kWord = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
    switch (c) {
      case 'd':
        return kDigit;
      case 'D':
        return complement(kDigit);
      case 'w':
        return kWord;
      case 'W':
        return complement(kWord);
      case 's':
        return space_set();
      case 'S':
        return complement(space_set());
      case 'n':
        return one('\n');
      case 'r':
        return one('\r');
      case 't':
        return one('\t');
      case 'f':
        return one('\f');
      case 'v':
        return one('\v');
      case 'x':
        return one(parse_hex(2, at));
      case 'u':
        if (peek('{')) fail(at, "\\u{...} escapes are not supported");
        return one(parse_hex(4, at));
      case '0':
        if (pos_ < re_.size() && re_[pos_] >= '0' && re_[pos_] <= '9')
          fail(at, "octal escapes are not supported");
        return one(0);
      case 'b':
        if (in_class) return one('\b');
        fail(at, "word boundaries (\\b) are not supported");
      case 'B':
        fail(at, "word boundaries (\\B) are not supported");
      default:
        break;
    }
    if (c >= '1' && c <= '9') fail(at, "backreferences are not supported");
    if (c == 'k') fail(at, "named backreferences are not supported");
    if (c == 'p' || c == 'P') fail(at, "Unicode property escapes are not supported");
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
      fail(at, std::string("unsupported escape \\") + c);
    --pos_;
    const std::uint32_t cp = literal_cp();
    return one(cp);
  }

  Node parse_class() {
    const std::size_t at = pos_;
    ++pos_;
    const bool negate = peek('^');
    if (negate) ++pos_;
    CodepointRanges set;
    for (;;) {
      if (pos_ >= re_.size()) fail(at, "unterminated character class '['");
      if (re_[pos_] == ']') break;
      bool single = false;
      std::uint32_t lo = 0;
      CodepointRanges item = class_atom(single, lo);
      if (single && peek('-') && pos_ + 1 < re_.size() && re_[pos_ + 1] != ']') {
        const std::size_t dash = pos_++;
        bool single_hi = false;
        std::uint32_t hi = 0;
        class_atom(single_hi, hi);
        if (!single_hi) fail(dash, "a class range needs single characters at both ends");
        if (hi < lo) fail(dash, "class range out of order");
        item = {{lo, hi}};
      }
      set.insert(set.end(), item.begin(), item.end());
    }
    ++pos_;
    set = normalize(set);
    if (negate) set = complement(set);
    if (set.empty()) fail(at, "character class matches nothing");
    return set_node(std::move(set));
  }

  CodepointRanges class_atom(bool& single, std::uint32_t& cp) {
    CodepointRanges r;
    if (re_[pos_] == '\\') {
      r = parse_escape(true);
    } else {
      const std::uint32_t c = literal_cp();
      r = {{c, c}};
    }
    single = r.size() == 1 && r[0].first == r[0].second;
    cp = r[0].first;
    return r;
  }

  static constexpr int kMaxGroupNesting = 64;  // bounds the parser's (and emitter's) recursion
  std::string_view re_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

// Writes the tree as GBNF. In JSON-string mode a character set becomes the
// JSON encodings of its members; long ones are interned as helper rules.
class Emitter {
 public:
  Emitter(std::string_view prefix, bool json) : prefix_(prefix), json_(json) {}

  std::string emit(const Node& n) {
    switch (n.kind) {
      case Node::kSet:
        return set_expr(n.set);
      case Node::kSeq:
        return seq_expr(n);
      case Node::kAlt: {
        std::string out = "(";
        for (std::size_t i = 0; i < n.kids.size(); ++i) out += (i ? " | " : " ") + emit(n.kids[i]);
        return out + " )";
      }
      case Node::kRepeat:
        return repeat_expr(n);
    }
    return "\"\"";
  }

  std::string set_expr(const CodepointRanges& set) {
    if (!json_) {
      if (set.size() == 1 && set[0].first == set[0].second)
        return "\"" + gbnf_char(set[0].first, false) + "\"";
      return gbnf_class(set);
    }
    std::vector<std::string> alts;
    const CodepointRanges raw = intersect(set, complement({{0, 0x1F}, {'"', '"'}, {'\\', '\\'}}));
    if (!raw.empty()) alts.push_back(set_expr_plain(raw));
    if (contains(set, '"')) alts.emplace_back("\"\\\\\\\"\"");
    if (contains(set, '\\')) alts.emplace_back("\"\\\\\\\\\"");
    std::string short_escapes;
    for (const auto& [cp, letter] :
         {std::pair{'\b', 'b'}, {'\f', 'f'}, {'\n', 'n'}, {'\r', 'r'}, {'\t', 't'}}) {
      if (contains(set, static_cast<std::uint32_t>(cp))) short_escapes += letter;
    }
    if (short_escapes.size() == 1) alts.push_back("\"\\\\" + short_escapes + "\"");
    if (short_escapes.size() > 1) alts.push_back("\"\\\\\" [" + short_escapes + "]");
    // Other controls as \u00XX: one alternative when all of them are in.
    const CodepointRanges others = {{0, 7}, {0x0B, 0x0B}, {0x0E, 0x1F}};
    const bool all_others = intersect(set, others) == others;
    if (all_others) alts.emplace_back(R"("\\u00" ( "0" [0-7bBeEfF] | "1" [0-9a-fA-F] ))");
    for (std::uint32_t cp = 0; cp < 0x20 && !all_others; ++cp) {
      if (contains(set, cp) && cp != '\b' && cp != '\f' && cp != '\n' && cp != '\r' && cp != '\t') {
        char buf[16];
        std::snprintf(buf, sizeof buf, "\"\\\\u%04x\"", static_cast<unsigned>(cp));
        alts.emplace_back(buf);
      }
    }
    if (alts.size() == 1) return alts[0];
    std::string body;
    for (std::size_t i = 0; i < alts.size(); ++i) body += (i ? " | " : "") + alts[i];
    return intern(body);
  }

  std::string rules() const {
    std::string out;
    for (const auto& [name, body] : helpers_) out += name + " ::= " + body + "\n";
    return out;
  }

 private:
  static std::string set_expr_plain(const CodepointRanges& set) {
    if (set.size() == 1 && set[0].first == set[0].second)
      return "\"" + gbnf_char(set[0].first, false) + "\"";
    return gbnf_class(set);
  }

  std::string intern(const std::string& body) {
    for (const auto& [name, b] : helpers_) {
      if (b == body) return name;
    }
    helpers_.emplace_back(std::string(prefix_) + "-c" + std::to_string(helpers_.size() + 1), body);
    return helpers_.back().first;
  }

  // Single code points in a row become one literal.
  std::string seq_expr(const Node& n) {
    if (n.kids.empty()) return "\"\"";
    std::vector<std::string> parts;
    std::string pending;
    auto flush = [&] {
      if (!pending.empty()) parts.push_back("\"" + pending + "\"");
      pending.clear();
    };
    for (const Node& k : n.kids) {
      if (k.kind == Node::kSet && k.set.size() == 1 && k.set[0].first == k.set[0].second) {
        const std::string e = set_expr(k.set);  // "..." literal, quotes stripped below
        pending += e.substr(1, e.size() - 2);
      } else {
        flush();
        parts.push_back(emit(k));
      }
    }
    flush();
    if (parts.size() == 1) return parts[0];
    std::string out = "(";
    for (const auto& p : parts) out += " " + p;
    return out + " )";
  }

  std::string repeat_expr(const Node& n) {
    std::string inner = emit(n.kids[0]);
    // Every expression emit() returns is one primary, perhaps quantified;
    // a quantified one is grouped before another quantifier applies.
    if (std::string_view("*+?}").find(inner.back()) != std::string_view::npos)
      inner = "( " + inner + " )";
    if (n.min == 0 && n.max == 1) return inner + "?";
    if (n.min == 0 && n.max == kUnbounded) return inner + "*";
    if (n.min == 1 && n.max == kUnbounded) return inner + "+";
    if (n.max == kUnbounded) return inner + "{" + std::to_string(n.min) + ",}";
    if (n.min == n.max) return inner + "{" + std::to_string(n.min) + "}";
    return inner + "{" + std::to_string(n.min) + "," + std::to_string(n.max) + "}";
  }

  std::string_view prefix_;
  bool json_;
  std::vector<std::pair<std::string, std::string>> helpers_;
};

}  // namespace

std::string gbnf_class(const CodepointRanges& ranges) {
  if (ranges.size() == 1 && ranges[0].first == 0 && ranges[0].second == kMaxCodepoint) {
    return "[\\x00-\\U0010FFFF]";
  }
  if (ranges.back().second == kMaxCodepoint) return "[^" + class_body(complement(ranges)) + "]";
  return "[" + class_body(ranges) + "]";
}

std::string gbnf_literal(std::string_view s, const std::string& where) {
  std::string out = "\"";
  std::size_t i = 0;
  while (i < s.size()) {
    std::uint32_t cp = 0;
    if (!decode_utf8(s, i, cp)) throw GrammarError(where, "text is not valid UTF-8");
    out += gbnf_char(cp, false);
  }
  return out + "\"";
}

std::vector<std::uint32_t> utf8_codepoints(std::string_view s, const std::string& where) {
  std::vector<std::uint32_t> out;
  std::size_t i = 0;
  while (i < s.size()) {
    std::uint32_t cp = 0;
    if (!decode_utf8(s, i, cp)) throw GrammarError(where, "text is not valid UTF-8");
    out.push_back(cp);
  }
  return out;
}

std::string regex_to_gbnf(std::string_view regex, std::string_view rule_prefix,
                          const RegexOptions& opt) {
  RegexParser parser(regex);
  const auto branches = parser.parse();
  Emitter emitter(rule_prefix, opt.json_string);
  std::string pad;  // made on first use, so an anchored regex has no unused helper
  auto padding = [&] {
    if (pad.empty()) pad = emitter.set_expr({{0, kMaxCodepoint}}) + "*";
    return pad;
  };
  std::string body;
  for (std::size_t i = 0; i < branches.size(); ++i) {
    const auto& b = branches[i];
    const bool empty = b.body.kind == Node::kSeq && b.body.kids.empty();
    std::vector<std::string> parts;
    if (opt.search && !b.anchored_start) parts.push_back(padding());
    if (!empty) parts.push_back(emitter.emit(b.body));
    if (opt.search && !b.anchored_end && !(empty && !b.anchored_start)) parts.push_back(padding());
    if (parts.empty()) parts.emplace_back("\"\"");
    std::string alt;
    for (std::size_t k = 0; k < parts.size(); ++k) alt += (k ? " " : "") + parts[k];
    body += (i ? " | " : "") + alt;
  }
  return std::string(rule_prefix) + " ::= " + body + "\n" + emitter.rules();
}

}  // namespace folio::grammar
