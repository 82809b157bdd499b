// chat/lexer.h: splits a Jinja2 template into text and tag tokens.
//
// Applies whitespace control at lex time, with the settings transformers
// uses for chat templates: trim_blocks (drop the first newline after a block
// or comment tag), lstrip_blocks (drop spaces/tabs between the start of a
// line and a block or comment tag), `-` on a tag side strips all whitespace
// on that side, `+` disables lstrip/trim, and one trailing newline of the
// template is dropped (keep_trailing_newline=False). Comments vanish; raw
// blocks become text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace folio::chat {

enum class Tok {
  kText,        // literal output
  kVarBegin,    // {{
  kVarEnd,      // }}
  kBlockBegin,  // {%
  kBlockEnd,    // %}
  kName,
  kString,  // value is unescaped
  kInt,
  kFloat,
  kOp,  // operators and punctuation: + - * / // % ** ~ == != < > <= >= = ( ) [ ] { } , . : |
  kEof,
};

struct Token {
  Tok type;
  std::string value;
  std::size_t pos;  // byte offset in the template, for error messages
};

std::vector<Token> lex(std::string_view source);

// "line L, column C" for a byte offset.
std::string describe_position(std::string_view source, std::size_t pos);

}  // namespace folio::chat
