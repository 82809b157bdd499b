// chat/parser.h: recursive-descent parser from tokens to the syntax tree.
//
// Grammar follows Jinja2's precedence: conditional expression < or < and <
// not < comparisons / in < ~ < + - < * / // % < ** < unary - < postfix
// (.attr [index] [slice] (call)) with filters `|` and tests `is` binding to
// the unary operand. A construct outside the supported subset throws
// folio::Error naming it and its line/column.
#pragma once

#include <string_view>

#include "chat/ast.h"

namespace folio::chat {

Body parse_template(std::string_view source);

}  // namespace folio::chat
