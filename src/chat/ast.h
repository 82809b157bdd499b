// chat/ast.h: syntax tree of a parsed template.
//
// Plain structs owned through unique_ptr; `pos` is the byte offset of the
// construct in the template source so runtime errors can point at it.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/value.h"

namespace folio::chat {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    kLiteral,  // literal
    kName,     // name
    kList,     // args = items; name "tuple" for (a, b)
    kDict,     // args = key0, value0, key1, value1 ...
    kAttr,     // args[0].name
    kIndex,    // args[0][args[1]]
    kSlice,    // args[0][args[1]:args[2]:args[3]] (null = omitted)
    kCall,     // args[0](args[1..], kwargs)
    kFilter,   // args[0] | name(args[1..], kwargs)
    kTest,     // args[0] is [not] name(args[1..]); negate
    kUnary,    // name in {"not", "-", "+"}, args[0]
    kBinary,   // name is the operator, args[0] op args[1]
    kCompare,  // args[0] ops[0] args[1] ops[1] args[2] ... (chained, as in Python)
    kCond,     // args[1] if args[0] else args[2] (args[2] may be null)
  };
  Kind kind;
  std::size_t pos = 0;
  std::string name;
  Value literal;
  bool negate = false;
  std::vector<std::string> ops;  // kCompare operators
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct Node {
  enum class Kind {
    kText,      // text
    kOutput,    // {{ expr }}
    kIf,        // branches: (cond, body)...; else_body
    kFor,       // for targets in expr [if cond]: body; else_body
    kSet,       // set targets = expr   or   set ns.attr = expr (attr non-empty)
    kSetBlock,  // {% set name %}body{% endset %}
    kBreak,
    kContinue,
    kMacro,  // {% macro name(params) %}body{% endmacro %}
  };
  Kind kind;
  std::size_t pos = 0;
  std::string text;
  ExprPtr expr;
  ExprPtr cond;                      // for: inline filter
  std::vector<std::string> targets;  // for / set names; macro parameter names
  std::string attr;                  // set ns.attr
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body;
  Body else_body;
  std::vector<ExprPtr> defaults;  // macro parameter defaults (null = required)
};

}  // namespace folio::chat
