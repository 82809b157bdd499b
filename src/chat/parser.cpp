// chat/parser.cpp: statements and expressions.
#include "chat/parser.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <initializer_list>

#include "base/error.h"
#include "chat/builtins.h"
#include "chat/lexer.h"

namespace folio::chat {
namespace {

// Deep nesting could overflow the C++ stack on a hostile template.
constexpr int kMaxDepth = 200;

class Parser {
 public:
  Parser(std::string_view src, std::vector<Token> toks) : src_(src), t_(std::move(toks)) {}

  Body parse_all() {
    Body body = parse_body({});
    if (peek().type != Tok::kEof) fail(peek().pos, "unexpected '" + peek().value + "'");
    return body;
  }

 private:
  [[noreturn]] void fail(std::size_t pos, const std::string& msg) const {
    throw Error("chat template: " + msg + " at " + describe_position(src_, pos));
  }
  const Token& peek(std::size_t k = 0) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  const Token& next() { return t_[i_ < t_.size() - 1 ? i_++ : i_]; }
  bool is_op(const char* op, std::size_t k = 0) const {
    return peek(k).type == Tok::kOp && peek(k).value == op;
  }
  bool is_name(const char* n, std::size_t k = 0) const {
    return peek(k).type == Tok::kName && peek(k).value == n;
  }
  void expect_op(const char* op) {
    if (!is_op(op)) fail(peek().pos, std::string("expected '") + op + "'");
    next();
  }
  void expect(Tok type, const char* what) {
    if (peek().type != type) fail(peek().pos, std::string("expected ") + what);
    next();
  }
  std::string expect_name() {
    if (peek().type != Tok::kName) fail(peek().pos, "expected a name");
    return next().value;
  }
  struct DepthGuard {
    explicit DepthGuard(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxDepth) p_.fail(p_.peek().pos, "template nested too deeply");
    }
    ~DepthGuard() { --p_.depth_; }
    Parser& p_;
  };

  Body parse_body(std::initializer_list<const char*> enders);
  NodePtr parse_statement();
  NodePtr parse_if();
  NodePtr parse_for(std::size_t pos);
  NodePtr parse_set(std::size_t pos);
  NodePtr parse_macro(std::size_t pos);
  void end_block(const char* name);

  ExprPtr parse_expr();
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_concat();
  ExprPtr parse_add();
  ExprPtr parse_mul();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filters = true);
  ExprPtr parse_postfix(ExprPtr e);
  ExprPtr parse_filters(ExprPtr e);
  ExprPtr parse_primary();
  void parse_call_args(Expr& call);
  ExprPtr parse_tuple_or_expr();

  static ExprPtr make(Expr::Kind k, std::size_t pos, std::string name = {}) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->pos = pos;
    e->name = std::move(name);
    return e;
  }
  static ExprPtr binary(std::string op, std::size_t pos, ExprPtr a, ExprPtr b) {
    auto e = make(Expr::Kind::kBinary, pos, std::move(op));
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }

  std::string_view src_;
  std::vector<Token> t_;
  std::size_t i_ = 0;
  int depth_ = 0;
};

// Parses nodes until a block tag whose keyword is one of `enders` (left unconsumed,
// positioned at its keyword) or the end of input.
Body Parser::parse_body(std::initializer_list<const char*> enders) {
  DepthGuard guard(*this);
  Body body;
  for (;;) {
    const Token& t = peek();
    if (t.type == Tok::kEof) return body;
    if (t.type == Tok::kText) {
      auto n = std::make_unique<Node>();
      n->kind = Node::Kind::kText;
      n->pos = t.pos;
      n->text = next().value;
      body.push_back(std::move(n));
    } else if (t.type == Tok::kVarBegin) {
      next();
      auto n = std::make_unique<Node>();
      n->kind = Node::Kind::kOutput;
      n->pos = t.pos;
      n->expr = parse_expr();
      expect(Tok::kVarEnd, "'}}'");
      body.push_back(std::move(n));
    } else if (t.type == Tok::kBlockBegin) {
      for (const char* e : enders) {
        if (is_name(e, 1)) {
          next();
          return body;
        }
      }
      next();
      body.push_back(parse_statement());
    } else {
      fail(t.pos, "unexpected token");
    }
  }
}

void Parser::end_block(const char* name) {
  if (!is_name(name)) fail(peek().pos, std::string("expected '") + name + "'");
  next();
  expect(Tok::kBlockEnd, "'%}'");
}

NodePtr Parser::parse_statement() {
  const Token& kw = peek();
  if (kw.type != Tok::kName) fail(kw.pos, "expected a statement keyword");
  const std::size_t pos = kw.pos;
  const std::string k = next().value;
  if (k == "if") return parse_if();
  if (k == "for") return parse_for(pos);
  if (k == "set") return parse_set(pos);
  if (k == "macro") return parse_macro(pos);
  if (k == "break" || k == "continue") {
    expect(Tok::kBlockEnd, "'%}'");
    auto n = std::make_unique<Node>();
    n->kind = k == "break" ? Node::Kind::kBreak : Node::Kind::kContinue;
    n->pos = pos;
    return n;
  }
  if (k == "generation") {
    // transformers' {% generation %} marks assistant text; it renders its body as is.
    expect(Tok::kBlockEnd, "'%}'");
    auto n = std::make_unique<Node>();
    n->kind = Node::Kind::kIf;
    n->pos = pos;
    auto yes = make(Expr::Kind::kLiteral, pos);
    yes->literal = Value::boolean(true);
    n->branches.emplace_back(std::move(yes), parse_body({"endgeneration"}));
    end_block("endgeneration");
    return n;
  }
  fail(pos, "unsupported statement '" + k + "'");
}

NodePtr Parser::parse_if() {
  auto n = std::make_unique<Node>();
  n->kind = Node::Kind::kIf;
  n->pos = peek().pos;
  for (;;) {
    ExprPtr cond = parse_expr();
    expect(Tok::kBlockEnd, "'%}'");
    Body body = parse_body({"elif", "else", "endif"});
    n->branches.emplace_back(std::move(cond), std::move(body));
    if (peek().type == Tok::kEof) fail(n->pos, "'if' without 'endif'");
    const std::string k = next().value;
    if (k == "elif") continue;
    if (k == "else") {
      expect(Tok::kBlockEnd, "'%}'");
      n->else_body = parse_body({"endif"});
      if (peek().type == Tok::kEof) fail(n->pos, "'if' without 'endif'");
      next();
    }
    expect(Tok::kBlockEnd, "'%}'");
    return n;
  }
}

NodePtr Parser::parse_for(std::size_t pos) {
  auto n = std::make_unique<Node>();
  n->kind = Node::Kind::kFor;
  n->pos = pos;
  n->targets.push_back(expect_name());
  while (is_op(",")) {
    next();
    n->targets.push_back(expect_name());
  }
  if (!is_name("in")) fail(peek().pos, "expected 'in' in for loop");
  next();
  // The iterable stops before an inline `if` (a filter, not a conditional expression).
  n->expr = parse_or();
  if (is_name("if")) {
    next();
    n->cond = parse_or();
  }
  if (is_name("recursive")) fail(peek().pos, "unsupported feature 'recursive' loops");
  expect(Tok::kBlockEnd, "'%}'");
  n->body = parse_body({"else", "endfor"});
  if (peek().type == Tok::kEof) fail(pos, "'for' without 'endfor'");
  if (next().value == "else") {
    expect(Tok::kBlockEnd, "'%}'");
    n->else_body = parse_body({"endfor"});
    if (peek().type == Tok::kEof) fail(pos, "'for' without 'endfor'");
    next();
  }
  expect(Tok::kBlockEnd, "'%}'");
  return n;
}

NodePtr Parser::parse_set(std::size_t pos) {
  auto n = std::make_unique<Node>();
  n->kind = Node::Kind::kSet;
  n->pos = pos;
  n->targets.push_back(expect_name());
  if (is_op(".")) {
    next();
    n->attr = expect_name();
  } else {
    while (is_op(",")) {
      next();
      n->targets.push_back(expect_name());
    }
  }
  if (peek().type == Tok::kBlockEnd && n->targets.size() == 1 && n->attr.empty()) {
    next();
    n->kind = Node::Kind::kSetBlock;
    n->body = parse_body({"endset"});
    if (peek().type == Tok::kEof) fail(pos, "'set' block without 'endset'");
    next();
    expect(Tok::kBlockEnd, "'%}'");
    return n;
  }
  expect_op("=");
  n->expr = parse_tuple_or_expr();
  expect(Tok::kBlockEnd, "'%}'");
  return n;
}

NodePtr Parser::parse_macro(std::size_t pos) {
  auto n = std::make_unique<Node>();
  n->kind = Node::Kind::kMacro;
  n->pos = pos;
  n->text = expect_name();
  expect_op("(");
  while (!is_op(")")) {
    n->targets.push_back(expect_name());
    if (is_op("=")) {
      next();
      n->defaults.push_back(parse_expr());
    } else {
      n->defaults.push_back(nullptr);
    }
    if (!is_op(",")) break;
    next();
  }
  expect_op(")");
  expect(Tok::kBlockEnd, "'%}'");
  n->body = parse_body({"endmacro"});
  if (peek().type == Tok::kEof) fail(pos, "'macro' without 'endmacro'");
  next();
  expect(Tok::kBlockEnd, "'%}'");
  return n;
}

// `a, b` on the right of set: a tuple (list) of expressions.
ExprPtr Parser::parse_tuple_or_expr() {
  const std::size_t pos = peek().pos;
  ExprPtr first = parse_expr();
  if (!is_op(",")) return first;
  auto list = make(Expr::Kind::kList, pos, "tuple");
  list->args.push_back(std::move(first));
  while (is_op(",")) {
    next();
    list->args.push_back(parse_expr());
  }
  return list;
}

ExprPtr Parser::parse_expr() {
  DepthGuard guard(*this);
  ExprPtr e = parse_or();
  while (is_name("if")) {
    const std::size_t pos = next().pos;
    auto c = make(Expr::Kind::kCond, pos);
    c->args.push_back(parse_or());
    c->args.push_back(std::move(e));
    if (is_name("else")) {
      next();
      c->args.push_back(parse_or());
    } else {
      c->args.push_back(nullptr);
    }
    e = std::move(c);
  }
  return e;
}

ExprPtr Parser::parse_or() {
  ExprPtr e = parse_and();
  while (is_name("or")) {
    const std::size_t pos = next().pos;
    e = binary("or", pos, std::move(e), parse_and());
  }
  return e;
}

ExprPtr Parser::parse_and() {
  ExprPtr e = parse_not();
  while (is_name("and")) {
    const std::size_t pos = next().pos;
    e = binary("and", pos, std::move(e), parse_not());
  }
  return e;
}

ExprPtr Parser::parse_not() {
  if (is_name("not")) {
    DepthGuard guard(*this);
    const std::size_t pos = next().pos;
    auto e = make(Expr::Kind::kUnary, pos, "not");
    e->args.push_back(parse_not());
    return e;
  }
  return parse_compare();
}

ExprPtr Parser::parse_compare() {
  ExprPtr first = parse_concat();
  ExprPtr cmp;
  for (;;) {
    const std::size_t pos = peek().pos;
    std::string op;
    if (peek().type == Tok::kOp) {
      const std::string& v = peek().value;
      if (v == "==" || v == "!=" || v == "<" || v == ">" || v == "<=" || v == ">=") op = v;
    }
    if (!op.empty()) {
      next();
    } else if (is_name("in")) {
      next();
      op = "in";
    } else if (is_name("not") && is_name("in", 1)) {
      next();
      next();
      op = "not in";
    } else {
      return cmp ? std::move(cmp) : std::move(first);
    }
    if (!cmp) {
      cmp = make(Expr::Kind::kCompare, pos);
      cmp->args.push_back(std::move(first));
    }
    cmp->ops.push_back(op);
    cmp->args.push_back(parse_concat());
  }
}

ExprPtr Parser::parse_concat() {
  ExprPtr e = parse_add();
  while (is_op("~")) {
    const std::size_t pos = next().pos;
    e = binary("~", pos, std::move(e), parse_add());
  }
  return e;
}

ExprPtr Parser::parse_add() {
  ExprPtr e = parse_mul();
  while (is_op("+") || is_op("-")) {
    const Token& t = next();
    e = binary(t.value, t.pos, std::move(e), parse_mul());
  }
  return e;
}

ExprPtr Parser::parse_mul() {
  ExprPtr e = parse_pow();
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const Token& t = next();
    e = binary(t.value, t.pos, std::move(e), parse_pow());
  }
  return e;
}

ExprPtr Parser::parse_pow() {
  ExprPtr e = parse_unary();
  while (is_op("**")) {
    const std::size_t pos = next().pos;
    e = binary("**", pos, std::move(e), parse_unary());
  }
  return e;
}

// As in Jinja2, filters apply to the whole unary expression: -1|abs is abs(-1).
ExprPtr Parser::parse_unary(bool with_filters) {
  DepthGuard guard(*this);
  ExprPtr e;
  if (is_op("-") || is_op("+")) {
    const Token& t = next();
    e = make(Expr::Kind::kUnary, t.pos, t.value);
    e->args.push_back(parse_unary(false));
  } else {
    e = parse_postfix(parse_primary());
  }
  return with_filters ? parse_filters(std::move(e)) : std::move(e);
}

ExprPtr Parser::parse_postfix(ExprPtr e) {
  for (;;) {
    const std::size_t pos = peek().pos;
    if (is_op(".")) {
      next();
      if (peek().type == Tok::kInt) {  // foo.0 is foo[0] in Jinja
        auto idx = make(Expr::Kind::kIndex, pos);
        auto lit = make(Expr::Kind::kLiteral, pos);
        lit->literal = Value::integer(std::atoll(next().value.c_str()));
        idx->args.push_back(std::move(e));
        idx->args.push_back(std::move(lit));
        e = std::move(idx);
        continue;
      }
      auto a = make(Expr::Kind::kAttr, pos, expect_name());
      a->args.push_back(std::move(e));
      e = std::move(a);
    } else if (is_op("[")) {
      next();
      ExprPtr parts[3];
      int colons = 0;
      while (!is_op("]")) {
        if (is_op(":")) {
          if (++colons > 2) fail(peek().pos, "too many ':' in slice");
          next();
          continue;
        }
        if (parts[colons]) fail(peek().pos, "expected ']'");
        parts[colons] = parse_expr();
      }
      next();
      if (colons == 0) {
        if (!parts[0]) fail(pos, "empty subscript");
        auto idx = make(Expr::Kind::kIndex, pos);
        idx->args.push_back(std::move(e));
        idx->args.push_back(std::move(parts[0]));
        e = std::move(idx);
      } else {
        auto s = make(Expr::Kind::kSlice, pos);
        s->args.push_back(std::move(e));
        for (auto& p : parts) s->args.push_back(std::move(p));
        e = std::move(s);
      }
    } else if (is_op("(")) {
      next();
      auto c = make(Expr::Kind::kCall, e->pos);  // errors point at the callee's name
      c->args.push_back(std::move(e));
      parse_call_args(*c);
      e = std::move(c);
    } else {
      return e;
    }
  }
}

// After '(': positional and keyword arguments up to and including ')'.
void Parser::parse_call_args(Expr& call) {
  while (!is_op(")")) {
    if (peek().type == Tok::kName && is_op("=", 1)) {
      std::string key = next().value;
      next();
      call.kwargs.emplace_back(std::move(key), parse_expr());
    } else {
      if (!call.kwargs.empty()) fail(peek().pos, "positional argument after keyword argument");
      call.args.push_back(parse_expr());
    }
    if (!is_op(",")) break;
    next();
  }
  expect_op(")");
}

ExprPtr Parser::parse_filters(ExprPtr e) {
  for (;;) {
    if (is_op("|")) {
      const std::size_t pos = next().pos;
      auto f = make(Expr::Kind::kFilter, pos, expect_name());
      f->args.push_back(std::move(e));
      if (is_op("(")) {
        next();
        parse_call_args(*f);
      }
      e = std::move(f);
    } else if (is_name("is")) {
      const std::size_t pos = next().pos;
      bool negate = false;
      if (is_name("not")) {
        next();
        negate = true;
      }
      auto t = make(Expr::Kind::kTest, pos, expect_name());
      t->negate = negate;
      t->args.push_back(std::move(e));
      if (is_op("(")) {
        next();
        parse_call_args(*t);
      } else {
        const Tok ty = peek().type;
        const bool arg_start = ty == Tok::kString || ty == Tok::kInt || ty == Tok::kFloat ||
                               (ty == Tok::kName && !is_name("else") && !is_name("or") &&
                                !is_name("and") && !is_name("if")) ||
                               is_op("[") || is_op("{");
        if (arg_start) t->args.push_back(parse_postfix(parse_primary()));
      }
      e = std::move(t);
    } else {
      return e;
    }
  }
}

ExprPtr Parser::parse_primary() {
  DepthGuard guard(*this);
  const Token& t = peek();
  const std::size_t pos = t.pos;
  auto lit = [&](Value v) {
    auto e = make(Expr::Kind::kLiteral, pos);
    e->literal = std::move(v);
    return e;
  };
  switch (t.type) {
    case Tok::kString: {
      std::string s = next().value;
      while (peek().type == Tok::kString) s += next().value;  // "a" "b" concatenates
      return lit(Value::string(std::move(s)));
    }
    case Tok::kInt: {
      const std::string& v = next().value;
      errno = 0;
      const long long n = std::strtoll(v.c_str(), nullptr, 10);
      if (errno == ERANGE) fail(pos, "integer literal out of range");
      return lit(Value::integer(n));
    }
    case Tok::kFloat:
      return lit(Value::number(std::strtod(next().value.c_str(), nullptr)));
    case Tok::kName: {
      const std::string n = next().value;
      if (n == "true" || n == "True") return lit(Value::boolean(true));
      if (n == "false" || n == "False") return lit(Value::boolean(false));
      if (n == "none" || n == "None") return lit(Value::none());
      return make(Expr::Kind::kName, pos, n);
    }
    default:
      break;
  }
  if (is_op("(")) {
    next();
    if (is_op(")")) {  // empty tuple
      next();
      return make(Expr::Kind::kList, pos, "tuple");
    }
    ExprPtr e = parse_expr();
    if (is_op(",")) {  // tuple
      auto list = make(Expr::Kind::kList, pos, "tuple");
      list->args.push_back(std::move(e));
      while (is_op(",")) {
        next();
        if (is_op(")")) break;
        list->args.push_back(parse_expr());
      }
      e = std::move(list);
    }
    expect_op(")");
    return e;
  }
  if (is_op("[")) {
    next();
    auto list = make(Expr::Kind::kList, pos);
    while (!is_op("]")) {
      list->args.push_back(parse_expr());
      if (!is_op(",")) break;
      next();
    }
    expect_op("]");
    return list;
  }
  if (is_op("{")) {
    next();
    auto dict = make(Expr::Kind::kDict, pos);
    while (!is_op("}")) {
      dict->args.push_back(parse_expr());
      expect_op(":");
      dict->args.push_back(parse_expr());
      if (!is_op(",")) break;
      next();
    }
    expect_op("}");
    return dict;
  }
  const std::string what = t.type == Tok::kVarEnd     ? "}}"
                           : t.type == Tok::kBlockEnd ? "%}"
                                                      : t.value;
  fail(pos, t.type == Tok::kEof ? "unexpected end of template"
                                : "unexpected '" + what + "' in expression");
}

// Rejects unknown filters, tests and functions at load time, so a template
// fails when it is loaded, not in some rarely taken branch mid-conversation.
class Validator {
 public:
  explicit Validator(std::string_view src) : src_(src) {}

  void body(const Body& b) {
    for (const NodePtr& n : b) {
      if (n->kind == Node::Kind::kMacro) macros_.push_back(n->text);
    }
    for (const NodePtr& n : b) node(*n);
  }

 private:
  [[noreturn]] void fail(std::size_t pos, const std::string& msg) const {
    throw Error("chat template: " + msg + " at " + describe_position(src_, pos));
  }
  void node(const Node& n) {
    if (n.expr) expr(*n.expr);
    if (n.cond) expr(*n.cond);
    for (const auto& d : n.defaults) {
      if (d) expr(*d);
    }
    for (const auto& [c, b] : n.branches) {
      expr(*c);
      body(b);
    }
    body(n.body);
    body(n.else_body);
  }
  void expr(const Expr& e) {
    if (e.kind == Expr::Kind::kFilter && !is_known_filter(e.name)) {
      fail(e.pos, "unsupported filter '" + e.name + "'");
    }
    if (e.kind == Expr::Kind::kTest && !is_known_test(e.name)) {
      fail(e.pos, "unsupported test '" + e.name + "'");
    }
    if (e.kind == Expr::Kind::kCall && e.args[0]->kind == Expr::Kind::kName) {
      const std::string& f = e.args[0]->name;
      if (!is_global_function(f) && std::find(macros_.begin(), macros_.end(), f) == macros_.end()) {
        fail(e.pos, "unsupported function '" + f + "'");
      }
    }
    for (const auto& a : e.args) {
      if (a) expr(*a);
    }
    for (const auto& [k, a] : e.kwargs) expr(*a);
  }

  std::string_view src_;
  std::vector<std::string> macros_;
};

}  // namespace

Body parse_template(std::string_view source) {
  Body body = Parser(source, lex(source)).parse_all();
  Validator(source).body(body);
  return body;
}

}  // namespace folio::chat
