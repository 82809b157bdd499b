// chat/interpreter.h: evaluates a parsed template against variables.
//
// One Interpreter per render (mutable state: scopes, loop budget). Scoping
// follows Jinja2: a for loop body gets its own scope, so `set` inside a loop
// does not leak out (templates use namespace() for that); if/else do not
// open scopes. Bounded: total loop iterations, output size and macro depth
// are capped by Limits, so a hostile template fails instead of hanging or
// exhausting memory.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "chat/ast.h"
#include "chat/builtins.h"
#include "chat/value.h"

namespace folio::chat {

class Interpreter {
 public:
  Interpreter(std::string_view source, Limits limits, Value::Object globals);
  // Breaks the reference cycles a render made (see changed_).
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  std::string render(const Body& body);

 private:
  enum class Flow { kNormal, kBreak, kContinue };
  using Scope = std::unordered_map<std::string, Value>;

  Flow exec(const Body& body, std::string& out);
  Flow exec(const Node& n, std::string& out);
  Flow exec_for(const Node& n, std::string& out);
  void exec_set(const Node& n);
  Value eval(const Expr& e);
  Value eval_inner(const Expr& e);
  Value eval_binary(const Expr& e);
  Value eval_call(const Expr& e);
  Value call_macro(const Node& m, const Args& args, std::size_t pos);
  Args eval_args(const Expr& e, std::size_t first);
  Value lookup(const std::string& name) const;
  void assign(const std::string& name, Value v) { scopes_.back()[name] = std::move(v); }
  void append(std::string& out, std::string_view s, std::size_t pos);
  [[noreturn]] void fail(std::size_t pos, const std::string& msg) const;

  std::string_view source_;
  Limits limits_;
  std::vector<Scope> scopes_;
  std::unordered_map<std::string, const Node*> macros_;
  std::size_t iterations_ = 0;
  int macro_depth_ = 0;
  // Expressions being evaluated, across macro calls: the parser bounds one
  // expression's depth and macro calls are bounded, but not their product,
  // which would overflow the stack (fuzz/chat_template_fuzz).
  int eval_depth_ = 0;
  // The dicts `set obj.attr = v` wrote to, by identity. That statement is
  // the only way to store a reference into an existing dict or list, so
  // every cycle (`{% set ns.me = ns %}`), which shared ownership alone would
  // leak, runs through one of them.
  std::unordered_map<const void*, Value> changed_;
};

}  // namespace folio::chat
