// chat/lexer.cpp: text / tag scanning, whitespace control, expression tokens.
#include "chat/lexer.h"

#include <cctype>
#include <cstdint>

#include "base/error.h"

namespace folio::chat {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

[[noreturn]] void fail(std::string_view src, std::size_t pos, const std::string& msg) {
  throw Error("chat template: " + msg + " at " + describe_position(src, pos));
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Jinja normalizes line endings in template text to "\n".
std::string normalize_newlines(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r') {
      out += '\n';
      if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  std::vector<Token> run();

 private:
  void emit_text(std::string_view text, std::size_t pos);
  std::size_t lex_tag(std::size_t start, char kind);  // returns the position after the tag
  std::size_t lex_raw(std::size_t body);              // after "{% raw %}"
  std::size_t skip_comment(std::size_t start);
  std::size_t after_tag_end(std::size_t end_pos, bool strip, bool plus, bool trims);
  std::size_t lex_string(std::size_t i);
  std::size_t lex_number(std::size_t i);

  std::string_view src_;
  std::vector<Token> out_;
};

std::size_t find_tag(std::string_view s, std::size_t from) {
  for (std::size_t i = s.find('{', from); i != std::string_view::npos; i = s.find('{', i + 1)) {
    if (i + 1 < s.size() && (s[i + 1] == '{' || s[i + 1] == '%' || s[i + 1] == '#')) return i;
  }
  return std::string_view::npos;
}

void Lexer::emit_text(std::string_view text, std::size_t pos) {
  if (!text.empty()) out_.push_back({Tok::kText, normalize_newlines(text), pos});
}

std::vector<Token> Lexer::run() {
  std::size_t pos = 0;
  while (pos < src_.size()) {
    const std::size_t tag = find_tag(src_, pos);
    if (tag == std::string_view::npos) {
      emit_text(src_.substr(pos), pos);
      break;
    }
    std::string_view text = src_.substr(pos, tag - pos);
    const char kind = src_[tag + 1];
    const char mod = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
    if (mod == '-') {
      while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
    } else if (kind != '{' && mod != '+') {
      // lstrip_blocks: only whitespace between the line start and the tag.
      const std::size_t nl = text.rfind('\n');
      const std::size_t line_start = nl == std::string_view::npos ? 0 : nl + 1;
      const bool at_line_start = nl != std::string_view::npos || pos == 0 || src_[pos - 1] == '\n';
      std::string_view tail = text.substr(line_start);
      if (at_line_start && tail.find_first_not_of(" \t") == std::string_view::npos) {
        text = text.substr(0, line_start);
      }
    }
    emit_text(text, pos);
    pos = kind == '#' ? skip_comment(tag) : lex_tag(tag, kind);
  }
  out_.push_back({Tok::kEof, "", src_.size()});
  return std::move(out_);
}

// Position after a tag whose end marker starts at end_pos; applies `-` / trim_blocks.
std::size_t Lexer::after_tag_end(std::size_t next, bool strip, bool plus, bool trims) {
  if (strip) {
    while (next < src_.size() && is_space(src_[next])) ++next;
  } else if (trims && !plus) {
    if (src_.substr(next, 2) == "\r\n")
      next += 2;
    else if (next < src_.size() && (src_[next] == '\n' || src_[next] == '\r'))
      ++next;
  }
  return next;
}

std::size_t Lexer::skip_comment(std::size_t start) {
  const std::size_t end = src_.find("#}", start + 2);
  if (end == std::string_view::npos) fail(src_, start, "unclosed comment '{#'");
  const bool strip = end > start + 2 && src_[end - 1] == '-';
  const bool plus = end > start + 2 && src_[end - 1] == '+';
  return after_tag_end(end + 2, strip, plus, true);
}

std::size_t Lexer::lex_raw(std::size_t body) {
  for (std::size_t i = src_.find("{%", body); i != std::string_view::npos;
       i = src_.find("{%", i + 2)) {
    std::size_t j = i + 2;
    if (j < src_.size() && (src_[j] == '-' || src_[j] == '+')) ++j;
    while (j < src_.size() && is_space(src_[j])) ++j;
    if (src_.substr(j, 6) != "endraw") continue;
    j += 6;
    while (j < src_.size() && is_space(src_[j])) ++j;
    bool strip = false;
    if (j < src_.size() && (src_[j] == '-' || src_[j] == '+')) strip = src_[j++] == '-';
    if (src_.substr(j, 2) != "%}") continue;
    std::string_view text = src_.substr(body, i - body);
    if (src_[i + 2] == '-') {
      while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
    }
    emit_text(text, body);
    return after_tag_end(j + 2, strip, false, true);
  }
  fail(src_, body, "unclosed '{% raw %}' block");
}

std::size_t Lexer::lex_tag(std::size_t start, char kind) {
  const bool var = kind == '{';
  std::size_t i = start + 2;
  if (i < src_.size() && (src_[i] == '-' || src_[i] == '+')) ++i;
  const std::size_t first_token = out_.size() + 1;
  out_.push_back({var ? Tok::kVarBegin : Tok::kBlockBegin, "", start});
  int depth = 0;  // brackets inside the tag: "}}" inside {{ {'a': {}} }} is not an end
  for (;;) {
    while (i < src_.size() && is_space(src_[i])) ++i;
    if (i >= src_.size()) fail(src_, start, var ? "unclosed '{{'" : "unclosed '{%'");
    const char end0 = var ? '}' : '%';
    if (depth == 0) {
      std::size_t e = i;
      const bool strip = src_[e] == '-';
      const bool plus = !var && src_[e] == '+';
      if (strip || plus) ++e;
      if (e + 1 < src_.size() && src_[e] == end0 && src_[e + 1] == '}') {
        out_.push_back({var ? Tok::kVarEnd : Tok::kBlockEnd, "", i});
        const std::size_t next = after_tag_end(e + 2, strip, plus, !var);
        if (!var && out_.size() == first_token + 2 && out_[first_token].type == Tok::kName &&
            out_[first_token].value == "raw") {
          out_.resize(first_token - 1);
          return lex_raw(next);
        }
        return next;
      }
    }
    const char c = src_[i];
    if (c == '"' || c == '\'') {
      i = lex_string(i);
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      i = lex_number(i);
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < src_.size() &&
             (std::isalnum(static_cast<unsigned char>(src_[j])) || src_[j] == '_'))
        ++j;
      out_.push_back({Tok::kName, std::string(src_.substr(i, j - i)), i});
      i = j;
    } else {
      static constexpr std::string_view kTwo[] = {"//", "**", "==", "!=", "<=", ">="};
      std::string op;
      for (auto t : kTwo) {
        if (src_.substr(i, 2) == t) op = t;
      }
      if (op.empty()) {
        if (std::string_view("+-*/%~<>=()[]{},.:|").find(c) == std::string_view::npos) {
          fail(src_, i, std::string("unexpected character '") + c + "'");
        }
        op = std::string(1, c);
      }
      if (op == "(" || op == "[" || op == "{") ++depth;
      if ((op == ")" || op == "]" || op == "}") && depth > 0) --depth;
      out_.push_back({Tok::kOp, op, i});
      i += op.size();
    }
  }
}

std::size_t Lexer::lex_string(std::size_t i) {
  const char q = src_[i];
  std::string val;
  std::size_t j = i + 1;
  for (;; ++j) {
    if (j >= src_.size()) fail(src_, i, "unterminated string literal");
    const char c = src_[j];
    if (c == q) break;
    if (c != '\\') {
      val += c;
      continue;
    }
    if (++j >= src_.size()) fail(src_, i, "unterminated string literal");
    const char e = src_[j];
    switch (e) {
      case 'n':
        val += '\n';
        break;
      case 't':
        val += '\t';
        break;
      case 'r':
        val += '\r';
        break;
      case 'b':
        val += '\b';
        break;
      case 'f':
        val += '\f';
        break;
      case 'v':
        val += '\v';
        break;
      case '0':
        val += '\0';
        break;
      case '\\':
      case '\'':
      case '"':
        val += e;
        break;
      case '\n':
        break;  // line continuation
      case 'x':
      case 'u':
      case 'U': {
        const std::size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        if (j + n >= src_.size()) fail(src_, j, "truncated escape sequence");
        std::uint32_t cp = 0;
        for (std::size_t k = 1; k <= n; ++k) {
          const char h = src_[j + k];
          if (!std::isxdigit(static_cast<unsigned char>(h))) fail(src_, j, "bad escape sequence");
          cp = cp * 16 + static_cast<std::uint32_t>(std::isdigit(static_cast<unsigned char>(h))
                                                        ? h - '0'
                                                        : std::tolower(h) - 'a' + 10);
        }
        if (cp > 0x10FFFF) fail(src_, j, "escape sequence outside Unicode");
        append_utf8(val, cp);
        j += n;
        break;
      }
      default:
        val += '\\';
        val += e;  // Python keeps unknown escapes verbatim
    }
  }
  out_.push_back({Tok::kString, std::move(val), i});
  return j + 1;
}

std::size_t Lexer::lex_number(std::size_t i) {
  std::size_t j = i;
  auto digits = [&] {
    while (j < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[j])) || src_[j] == '_'))
      ++j;
  };
  digits();
  bool is_float = false;
  if (j + 1 < src_.size() && src_[j] == '.' &&
      std::isdigit(static_cast<unsigned char>(src_[j + 1]))) {
    is_float = true;
    ++j;
    digits();
  }
  if (j < src_.size() && (src_[j] == 'e' || src_[j] == 'E')) {
    std::size_t k = j + 1;
    if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
    if (k < src_.size() && std::isdigit(static_cast<unsigned char>(src_[k]))) {
      is_float = true;
      j = k;
      digits();
    }
  }
  std::string text;
  for (char c : src_.substr(i, j - i)) {
    if (c != '_') text += c;
  }
  out_.push_back({is_float ? Tok::kFloat : Tok::kInt, std::move(text), i});
  return j;
}

}  // namespace

std::vector<Token> lex(std::string_view source) {
  // keep_trailing_newline=False: Jinja drops one trailing newline of the source.
  if (source.ends_with("\r\n"))
    source.remove_suffix(2);
  else if (source.ends_with('\n') || source.ends_with('\r'))
    source.remove_suffix(1);
  return Lexer(source).run();
}

std::string describe_position(std::string_view source, std::size_t pos) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < pos && i < source.size(); ++i) {
    if (source[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

}  // namespace folio::chat
