// chat/interpreter.cpp: statement execution and expression evaluation.
#include "chat/interpreter.h"

#include <cmath>

#include "base/error.h"
#include "chat/lexer.h"

namespace folio::chat {
namespace {

// Expressions evaluated inside one another, across macro calls (each level
// is a few stack frames; 1,000 is far beyond any real template).
constexpr int kMaxEvalDepth = 1000;

constexpr const char* kPrefix = "chat template: ";

bool numeric(const Value& v) {
  return v.is_number();
}

Value arith(const std::string& op, const Value& a, const Value& b) {
  if (!numeric(a) || !numeric(b)) {
    throw Error("unsupported operand types for " + op + ": '" + a.type_name() + "' and '" +
                b.type_name() + "'");
  }
  const bool ints = !a.is_float() && !b.is_float();
  if (op == "/") {
    if (b.as_double() == 0.0) throw Error("division by zero");
    return Value::number(a.as_double() / b.as_double());
  }
  if (op == "//" || op == "%") {
    if (b.as_double() == 0.0) throw Error("division by zero");
    if (ints) {  // Python floors toward -inf; the remainder takes the divisor's sign
      const std::int64_t x = a.as_int(), y = b.as_int();
      std::int64_t q = x / y, r = x % y;
      if (r != 0 && ((r < 0) != (y < 0))) {
        --q;
        r += y;
      }
      return Value::integer(op == "//" ? q : r);
    }
    const double x = a.as_double(), y = b.as_double();
    const double q = std::floor(x / y);
    return Value::number(op == "//" ? q : x - q * y);
  }
  if (op == "**") {
    if (ints && b.as_int() >= 0) {
      return Value::number(std::pow(a.as_double(), b.as_double())).as_double() < 9.2e18
                 ? Value::integer(static_cast<std::int64_t>(std::pow(a.as_double(), b.as_double())))
                 : Value::number(std::pow(a.as_double(), b.as_double()));
    }
    return Value::number(std::pow(a.as_double(), b.as_double()));
  }
  if (ints) {
    const std::int64_t x = a.as_int(), y = b.as_int();
    std::int64_t r = 0;
    const bool overflow = op == "+"   ? __builtin_add_overflow(x, y, &r)
                          : op == "-" ? __builtin_sub_overflow(x, y, &r)
                                      : __builtin_mul_overflow(x, y, &r);
    if (overflow) throw Error("integer overflow in '" + op + "'");
    return Value::integer(r);
  }
  const double x = a.as_double(), y = b.as_double();
  return Value::number(op == "+" ? x + y : op == "-" ? x - y : x * y);
}

bool contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string()) throw Error("'in <string>' requires a string on the left");
    return container.str().find(item.str()) != std::string::npos;
  }
  if (container.is_object()) return item.is_string() && container.find(item.str()) != nullptr;
  if (container.is_array()) {
    for (const Value& x : container.items()) {
      if (equals(x, item)) return true;
    }
    return false;
  }
  if (container.is_undefined()) return false;
  throw Error(std::string("argument of type '") + container.type_name() + "' is not iterable");
}

bool compare(const std::string& op, const Value& a, const Value& b) {
  if (op == "==") return equals(a, b);
  if (op == "!=") return !equals(a, b);
  if (op == "<") return less(a, b);
  if (op == ">") return less(b, a);
  if (op == "<=") return !less(b, a);
  if (op == ">=") return !less(a, b);
  if (op == "in") return contains(b, a);
  return !contains(b, a);  // "not in"
}

}  // namespace

// `globals` is taken by value and its values are moved out below (clang-tidy 14 does not see a
// move through a structured binding).
// NOLINTNEXTLINE(performance-unnecessary-value-param)
Interpreter::Interpreter(std::string_view source, Limits limits, Value::Object globals)
    : source_(source), limits_(limits) {
  scopes_.emplace_back();
  for (auto& [k, v] : globals) scopes_.back()[k] = std::move(v);
}

Interpreter::~Interpreter() {
  for (auto& [id, obj] : changed_) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : obj.entries()) keys.push_back(k);
    for (const std::string& k : keys) obj.set(k, Value::none());
  }
}

void Interpreter::fail(std::size_t pos, const std::string& msg) const {
  throw Error(kPrefix + msg + " at " + describe_position(source_, pos));
}

std::string Interpreter::render(const Body& body) {
  const ComparisonBudget comparisons(limits_.max_compare_steps);
  std::string out;
  exec(body, out);
  return out;
}

void Interpreter::append(std::string& out, std::string_view s, std::size_t pos) {
  if (out.size() + s.size() > limits_.max_output_bytes) {
    fail(pos, "output exceeds the limit of " + std::to_string(limits_.max_output_bytes) + " bytes");
  }
  out.append(s);
}

Interpreter::Flow Interpreter::exec(const Body& body, std::string& out) {
  for (const NodePtr& n : body) {
    const Flow f = exec(*n, out);
    if (f != Flow::kNormal) return f;
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::exec(const Node& n, std::string& out) {
  switch (n.kind) {
    case Node::Kind::kText:
      append(out, n.text, n.pos);
      return Flow::kNormal;
    case Node::Kind::kOutput:
      append(out, eval(*n.expr).to_str(limits_.max_output_bytes), n.pos);
      return Flow::kNormal;
    case Node::Kind::kIf:
      for (const auto& [cond, body] : n.branches) {
        if (eval(*cond).truthy()) return exec(body, out);
      }
      return exec(n.else_body, out);
    case Node::Kind::kFor:
      return exec_for(n, out);
    case Node::Kind::kSet:
      exec_set(n);
      return Flow::kNormal;
    case Node::Kind::kSetBlock: {
      std::string captured;
      exec(n.body, captured);
      assign(n.targets[0], Value::string(std::move(captured)));
      return Flow::kNormal;
    }
    case Node::Kind::kBreak:
      return Flow::kBreak;
    case Node::Kind::kContinue:
      return Flow::kContinue;
    case Node::Kind::kMacro:
      macros_[n.text] = &n;
      return Flow::kNormal;
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::exec_for(const Node& n, std::string& out) {
  std::vector<Value> items;
  try {
    const Value seq = eval(*n.expr);
    items = seq.is_object() ? apply_filter("list", seq, {}, limits_).items() : iterate(seq);
  } catch (const Error& e) {
    if (std::string_view(e.what()).starts_with(kPrefix)) throw;
    fail(n.pos, e.what());
  }
  scopes_.emplace_back();
  if (n.cond) {  // `for x in xs if cond`: filter first, so loop.* counts kept items
    std::vector<Value> kept;
    for (Value& item : items) {
      if (n.targets.size() == 1) assign(n.targets[0], item);
      if (eval(*n.cond).truthy()) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  const auto len = static_cast<std::int64_t>(items.size());
  for (std::int64_t i = 0; i < len; ++i) {
    if (++iterations_ > limits_.max_loop_iterations) {
      fail(n.pos,
           "loop iterations exceed the limit of " + std::to_string(limits_.max_loop_iterations));
    }
    const Value& item = items[static_cast<std::size_t>(i)];
    if (n.targets.size() == 1) {
      assign(n.targets[0], item);
    } else {
      if (!item.is_array() || item.items().size() != n.targets.size()) {
        fail(n.pos, "cannot unpack loop item into " + std::to_string(n.targets.size()) + " names");
      }
      for (std::size_t k = 0; k < n.targets.size(); ++k) assign(n.targets[k], item.items()[k]);
    }
    Value loop = Value::object({
        {"index", Value::integer(i + 1)},
        {"index0", Value::integer(i)},
        {"revindex", Value::integer(len - i)},
        {"revindex0", Value::integer(len - i - 1)},
        {"first", Value::boolean(i == 0)},
        {"last", Value::boolean(i == len - 1)},
        {"length", Value::integer(len)},
        {"previtem", i > 0 ? items[static_cast<std::size_t>(i - 1)] : Value()},
        {"nextitem", i + 1 < len ? items[static_cast<std::size_t>(i + 1)] : Value()},
    });
    assign("loop", std::move(loop));
    if (exec(n.body, out) == Flow::kBreak) break;
  }
  scopes_.pop_back();
  if (len == 0) return exec(n.else_body, out);
  return Flow::kNormal;
}

void Interpreter::exec_set(const Node& n) {
  Value v = eval(*n.expr);
  if (!n.attr.empty()) {
    Value ns = lookup(n.targets[0]);
    if (!ns.is_object())
      fail(n.pos, "cannot set attribute '" + n.attr + "' on a " + ns.type_name());
    ns.set(n.attr, std::move(v));  // shared dict: visible from every scope, like namespace()
    changed_.emplace(&ns.entries(), ns);
    return;
  }
  if (n.targets.size() == 1) {
    assign(n.targets[0], std::move(v));
    return;
  }
  if (!v.is_array() || v.items().size() != n.targets.size()) {
    fail(n.pos, "cannot unpack value into " + std::to_string(n.targets.size()) + " names");
  }
  for (std::size_t k = 0; k < n.targets.size(); ++k) assign(n.targets[k], v.items()[k]);
}

Value Interpreter::lookup(const std::string& name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto f = it->find(name);
    if (f != it->end()) return f->second;
  }
  return Value();
}

// Adds the template position to errors raised by builtins and operators, and
// caps the size of every string value.
Value Interpreter::eval(const Expr& e) {
  if (eval_depth_ >= kMaxEvalDepth)
    fail(e.pos, "expressions nested too deeply (macro calls included)");
  struct Depth {
    int& d;
    explicit Depth(int& x) : d(x) { ++d; }
    ~Depth() { --d; }
    Depth(const Depth&) = delete;
    Depth& operator=(const Depth&) = delete;
  } depth(eval_depth_);
  Value v;
  try {
    v = eval_inner(e);
  } catch (const Error& err) {
    if (std::string_view(err.what()).starts_with(kPrefix)) throw;
    fail(e.pos, err.what());
  }
  if (v.is_string() && v.str().size() > limits_.max_output_bytes)
    fail(e.pos, "string value too large");
  return v;
}

Args Interpreter::eval_args(const Expr& e, std::size_t first) {
  Args a;
  for (std::size_t i = first; i < e.args.size(); ++i) a.pos.push_back(eval(*e.args[i]));
  for (const auto& [k, x] : e.kwargs) a.kw.emplace_back(k, eval(*x));
  return a;
}

Value Interpreter::eval_inner(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::kLiteral:
      return e.literal;
    case Expr::Kind::kName:
      return lookup(e.name);
    case Expr::Kind::kList: {
      Value::Array items;
      for (const auto& x : e.args) items.push_back(eval(*x));
      return e.name == "tuple" ? Value::tuple(std::move(items)) : Value::array(std::move(items));
    }
    case Expr::Kind::kDict: {
      Value d = Value::object();
      for (std::size_t i = 0; i + 1 < e.args.size(); i += 2) {
        const Value k = eval(*e.args[i]);
        if (!k.is_string()) throw Error("dict keys must be strings");
        d.set(k.str(), eval(*e.args[i + 1]));
      }
      return d;
    }
    case Expr::Kind::kAttr: {
      const Value obj = eval(*e.args[0]);
      if (obj.is_undefined())
        throw Error("cannot read attribute '" + e.name + "' of an undefined value");
      const Value* f = obj.find(e.name);
      return f ? *f : Value();
    }
    case Expr::Kind::kIndex:
      return subscript(eval(*e.args[0]), eval(*e.args[1]));
    case Expr::Kind::kSlice: {
      auto part = [&](std::size_t i) { return e.args[i] ? eval(*e.args[i]) : Value(); };
      return slice(eval(*e.args[0]), part(1), part(2), part(3));
    }
    case Expr::Kind::kCall:
      return eval_call(e);
    case Expr::Kind::kFilter: {
      const Value v = eval(*e.args[0]);
      return apply_filter(e.name, v, eval_args(e, 1), limits_);
    }
    case Expr::Kind::kTest: {
      const Value v = eval(*e.args[0]);
      return Value::boolean(apply_test(e.name, v, eval_args(e, 1)) != e.negate);
    }
    case Expr::Kind::kUnary: {
      const Value v = eval(*e.args[0]);
      if (e.name == "not") return Value::boolean(!v.truthy());
      if (!v.is_number())
        throw Error("bad operand type for unary " + e.name + ": '" + v.type_name() + "'");
      if (e.name == "+") return v.is_float() ? v : Value::integer(v.as_int());
      return v.is_float() ? Value::number(-v.as_double()) : arith("-", Value::integer(0), v);
    }
    case Expr::Kind::kBinary:
      return eval_binary(e);
    case Expr::Kind::kCompare: {
      // a < b < c is (a < b) and (b < c), each operand evaluated once.
      Value left = eval(*e.args[0]);
      for (std::size_t i = 0; i < e.ops.size(); ++i) {
        Value right = eval(*e.args[i + 1]);
        if (!compare(e.ops[i], left, right)) return Value::boolean(false);
        left = std::move(right);
      }
      return Value::boolean(true);
    }
    case Expr::Kind::kCond:
      if (eval(*e.args[0]).truthy()) return eval(*e.args[1]);
      return e.args[2] ? eval(*e.args[2]) : Value();
  }
  return Value();
}

Value Interpreter::eval_binary(const Expr& e) {
  const std::string& op = e.name;
  if (op == "and") {
    Value a = eval(*e.args[0]);
    return a.truthy() ? eval(*e.args[1]) : a;
  }
  if (op == "or") {
    Value a = eval(*e.args[0]);
    return a.truthy() ? a : eval(*e.args[1]);
  }
  const Value a = eval(*e.args[0]);
  const Value b = eval(*e.args[1]);
  if (op == "~") {
    std::string s = a.to_str(limits_.max_output_bytes);
    s += b.to_str(limits_.max_output_bytes);
    return Value::string(std::move(s));
  }
  if (op == "+") {
    if (a.is_string() && b.is_string()) return Value::string(a.str() + b.str());
    if (a.is_array() && b.is_array()) {
      // Capped like a range() (items) and like a string (the bytes of its
      // strings): `{% set ns.l = ns.l + ns.l %}` doubles a list per iteration.
      std::size_t bytes = 0;
      for (const Value* side : {&a, &b}) {
        for (const Value& x : side->items()) bytes += x.str().size();
      }
      if (a.items().size() + b.items().size() > limits_.max_loop_iterations ||
          bytes > limits_.max_output_bytes) {
        throw Error("list concatenation result too large");
      }
      Value::Array items = a.items();
      items.insert(items.end(), b.items().begin(), b.items().end());
      return Value::array(std::move(items));
    }
  }
  if (op == "*" && (a.is_string() || b.is_string())) {
    const Value& s = a.is_string() ? a : b;
    const Value& n = a.is_string() ? b : a;
    if (!n.is_int()) throw Error("can't multiply a string by a non-integer");
    const std::int64_t times = std::max<std::int64_t>(n.as_int(), 0);
    if (!s.str().empty() &&
        static_cast<std::uint64_t>(times) > limits_.max_output_bytes / s.str().size()) {
      throw Error("string repetition result too large");
    }
    std::string out;
    for (std::int64_t i = 0; i < times; ++i) out += s.str();
    return Value::string(std::move(out));
  }
  return arith(op, a, b);
}

Value Interpreter::eval_call(const Expr& e) {
  const Expr& callee = *e.args[0];
  if (callee.kind == Expr::Kind::kAttr) {  // method call: obj.name(...)
    const Value obj = eval(*callee.args[0]);
    return call_method(obj, callee.name, eval_args(e, 1), limits_);
  }
  if (callee.kind != Expr::Kind::kName) throw Error("this expression cannot be called");
  if (auto m = macros_.find(callee.name); m != macros_.end()) {
    return call_macro(*m->second, eval_args(e, 1), e.pos);
  }
  if (is_global_function(callee.name)) return call_global(callee.name, eval_args(e, 1), limits_);
  throw Error("unknown function '" + callee.name + "'");
}

Value Interpreter::call_macro(const Node& m, const Args& args, std::size_t pos) {
  if (++macro_depth_ > limits_.max_macro_depth) fail(pos, "macro calls nested too deeply");
  if (args.pos.size() > m.targets.size()) fail(pos, "too many arguments to macro '" + m.text + "'");
  // A macro sees the template's globals and its own parameters, not the caller's locals.
  std::vector<Scope> saved(scopes_.begin() + 1, scopes_.end());
  scopes_.resize(1);
  scopes_.emplace_back();
  for (std::size_t i = 0; i < m.targets.size(); ++i) {
    const Value* v = args.get(i, m.targets[i].c_str());
    assign(m.targets[i], v ? *v : m.defaults[i] ? eval(*m.defaults[i]) : Value());
  }
  std::string out;
  exec(m.body, out);
  scopes_.resize(1);
  scopes_.insert(scopes_.end(), saved.begin(), saved.end());
  --macro_depth_;
  return Value::string(std::move(out));
}

}  // namespace folio::chat
