// chat/builtins.h: filters, tests, methods and global functions.
//
// The subset chat templates on the Hugging Face hub use. Anything else is
// an error naming it ("unsupported filter 'xmlattr'"), never a silent no-op.
// Errors thrown here carry no position; the interpreter adds it.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "chat/value.h"

namespace folio::chat {

struct Limits {
  std::size_t max_output_bytes = std::size_t{16} << 20;  // also caps any one string value
  std::size_t max_loop_iterations = 1'000'000;           // all loops of one render together
  int max_macro_depth = 64;
  // Element comparisons (==, <, in, sort, unique; every nested item counts)
  // of one render together: shared lists make [x, x] of [y, y] ... compare
  // in 2^depth steps (ComparisonBudget, chat/value.h).
  std::size_t max_compare_steps = 10'000'000;
};

struct Args {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;

  // Argument `i` by position, or by keyword `name`; nullptr when absent.
  const Value* get(std::size_t i, const char* name) const;
};

Value apply_filter(const std::string& name, const Value& v, const Args& args, const Limits& lim);
bool apply_test(const std::string& name, const Value& v, const Args& args);
// obj.name(args) for str, dict and list methods.
Value call_method(const Value& obj, const std::string& name, const Args& args, const Limits& lim);
bool is_global_function(const std::string& name);
bool is_known_filter(const std::string& name);
bool is_known_test(const std::string& name);
Value call_global(const std::string& name, const Args& args, const Limits& lim);

// Python-style helpers shared with the interpreter.
Value subscript(const Value& obj, const Value& key);
Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step);
std::vector<Value> iterate(const Value& v);  // list items, dict keys, string characters

}  // namespace folio::chat
