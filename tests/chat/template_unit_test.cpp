// Behaviour the goldens cannot show: errors that name the unsupported feature
// and its position, resource limits against hostile templates, and the
// convenience API.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "chat/chat_template.h"

namespace folio::chat {
namespace {

std::string render(const std::string& src, Limits limits = {}) {
  ChatTemplate t(src, limits);
  return t.render(nlohmann::ordered_json::array({{{"role", "user"}, {"content", "hi"}}}),
                  RenderOptions{});
}

// Runs `fn`, expects folio::Error, returns its message.
template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ChatTemplate, UnsupportedFeaturesAreNamedWithPosition) {
  struct Case {
    std::string src, want;
  };
  for (const Case& c : std::vector<Case>{
           {"ok\n{% include 'x.j2' %}", "unsupported statement 'include' at line 2, column 4"},
           {"{{ x | xmlattr }}", "unsupported filter 'xmlattr' at line 1, column 6"},
           {"{% if x is escaped %}{% endif %}", "unsupported test 'escaped'"},
           {"{{ lipsum(3) }}", "unsupported function 'lipsum'"},
           {"{% for x in y recursive %}{% endfor %}", "unsupported feature 'recursive' loops"},
           {"{% extends 'base' %}", "unsupported statement 'extends'"},
           {"{% filter upper %}x{% endfilter %}", "unsupported statement 'filter'"},
       }) {
    const std::string msg = error_of([&] { ChatTemplate t(c.src); });
    EXPECT_NE(msg.find(c.want), std::string::npos) << c.src << " -> " << msg;
    EXPECT_EQ(msg.rfind("chat template: ", 0), 0u) << msg;
  }
  // Methods are resolved by type at render time, still by name.
  EXPECT_NE(
      error_of([] { render("{{ 'a'.zfill(3) }}"); }).find("unsupported method 'zfill' on string"),
      std::string::npos);
}

TEST(ChatTemplate, SyntaxErrorsArePositioned) {
  EXPECT_NE(error_of([] { ChatTemplate t("{% if x %}no end"); }).find("'if' without 'endif'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              ChatTemplate t("a\n  {{ 1 + }}");
            }).find("unexpected '}}' in expression at line 2, column 10"),
            std::string::npos);
  EXPECT_NE(error_of([] { ChatTemplate t("{{ 'abc }}"); }).find("unterminated string"),
            std::string::npos);
  EXPECT_NE(error_of([] { ChatTemplate t("{{ x "); }).find("unclosed '{{'"), std::string::npos);
  EXPECT_NE(error_of([] { ChatTemplate t("{# x"); }).find("unclosed comment"), std::string::npos);
  EXPECT_NE(error_of([] { ChatTemplate t("{{ a ? b }}"); }).find("unexpected character '?'"),
            std::string::npos);
}

TEST(ChatTemplate, RuntimeErrorsArePositioned) {
  EXPECT_NE(error_of([] {
              render("{{ raise_exception('bad roles') }}");
            }).find("raise_exception: bad roles at line 1, column 4"),
            std::string::npos);
  EXPECT_NE(error_of([] { render("\n{{ nothing.field }}"); }).find("undefined value at line 2"),
            std::string::npos);
  EXPECT_NE(error_of([] { render("{{ 1 + 'a' }}"); }).find("unsupported operand types for +"),
            std::string::npos);
  EXPECT_NE(error_of([] { render("{{ 1 // 0 }}"); }).find("division by zero"), std::string::npos);
  EXPECT_NE(error_of([] { render("{{ nothing | tojson }}"); }).find("undefined"),
            std::string::npos);
}

TEST(ChatTemplate, HostileTemplatesHitLimitsNotTheMachine) {
  Limits small;
  small.max_loop_iterations = 10'000;
  small.max_output_bytes = 1 << 16;
  // Nested loops: 10^12 iterations if unbounded.
  EXPECT_NE(
      error_of([&] {
        render("{% for a in range(1000000) %}{% for b in range(1000000) %}{% endfor %}{% endfor %}",
               small);
      }).find("too many items"),
      std::string::npos);
  EXPECT_NE(error_of([&] {
              render("{% for a in range(5000) %}{% for b in range(5000) %}{% endfor %}{% endfor %}",
                     small);
            }).find("loop iterations exceed the limit"),
            std::string::npos);
  EXPECT_NE(error_of([&] { render("{{ 'x' * 1000000000 }}", small); }).find("too large"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              render("{% for a in range(9000) %}{{ 'xxxxxxxxxx' }}{% endfor %}", small);
            }).find("output exceeds the limit"),
            std::string::npos);
  // Doubling a string: 2^40 bytes if unbounded.
  EXPECT_NE(error_of([&] {
              render(
                  "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ "
                  "ns.s %}{% endfor %}",
                  small);
            }).find("too large"),
            std::string::npos);
  // Deep nesting must not overflow the stack.
  const std::string deep =
      "{{ " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }}";
  EXPECT_NE(error_of([&] { ChatTemplate t(deep); }).find("nested too deeply"), std::string::npos);
  const std::string deep_if = [] {
    std::string s;
    for (int i = 0; i < 5000; ++i) s += "{% if true %}";
    return s;
  }();
  EXPECT_NE(error_of([&] { ChatTemplate t(deep_if); }).find("nested too deeply"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              render("{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", small);
            }).find("macro calls nested too deeply"),
            std::string::npos);
}

// Found by fuzz/chat_template_fuzz.cpp: lists and dicts are shared by
// reference, so values can double, repeat and hold themselves.
TEST(ChatTemplate, SharedValuesHitLimitsNotTheMachine) {
  Limits small;
  small.max_loop_iterations = 10'000;
  small.max_output_bytes = 1 << 16;
  // Doubling a list: 2^40 items if unbounded.
  EXPECT_NE(error_of([&] {
              render(
                  "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + "
                  "ns.l %}{% endfor %}",
                  small);
            }).find("list concatenation result too large"),
            std::string::npos);
  // ... or a list of long strings (each within the limit).
  EXPECT_NE(error_of([&] {
              render(
                  "{% set x = 'x' * 60000 %}{% set ns = namespace(l=[x]) %}{% for i in range(20) "
                  "%}{% set ns.l = ns.l + ns.l %}{% endfor %}",
                  small);
            }).find("list concatenation result too large"),
            std::string::npos);
  // Ten levels of ten references to the level below: 10^10 items to print.
  std::string dag = "{% set l0 = ['xxxxxxxxxx'] %}";
  for (int i = 1; i <= 10; ++i) {
    const std::string prev = "l" + std::to_string(i - 1);
    dag += "{% set l" + std::to_string(i) + " = [";
    for (int k = 0; k < 10; ++k) dag += (k ? ", " : "") + prev;
    dag += "] %}";
  }
  EXPECT_NE(error_of([&] { render(dag + "{{ l10 }}", small); }).find("value too large to print"),
            std::string::npos);
  EXPECT_NE(error_of([&] { render(dag + "{{ l10 ~ '' }}", small); }).find("too large"),
            std::string::npos);
  EXPECT_NE(error_of([&] { render(dag + "{{ l10 | tojson }}", small); }).find("too large"),
            std::string::npos);
  // An indent that alone passes the limit (and once overflowed an int).
  EXPECT_NE(error_of([&] {
              render("{{ [[1]] | tojson(indent=1073741824) }}", small);
            }).find("tojson: result too large"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              render("{{ [1, 2, 3, 4] | tojson(indent=100000000) }}", small);
            }).find("tojson: result too large"),
            std::string::npos);
  EXPECT_EQ(render("{{ [] | tojson(indent=100000000) }}", small), "[]");
  EXPECT_EQ(render("{{ [1] | tojson(indent=2) }}", small), "[\n  1\n]");
  // A namespace holding itself: printed, compared or dumped, it is an error,
  // not a stack overflow; and its cycle is freed after the render (the ASan
  // build's leak check would report it otherwise).
  const std::string cycle = "{% set ns = namespace(a=1) %}{% set ns.me = ns %}";
  EXPECT_NE(error_of([&] { render(cycle + "{{ ns }}"); }).find("nested too deeply to print"),
            std::string::npos);
  // (A namespace is itself, as in Python; two alike, each holding itself, are
  // compared inside until the nesting limit.)
  EXPECT_EQ(render(cycle + "{{ ns == ns }}"), "True");
  EXPECT_NE(error_of([&] {
              render(cycle +
                     "{% set other = namespace(a=1) %}{% set other.me = other %}"
                     "{{ ns == other }}");
            }).find("nested too deeply"),
            std::string::npos);
  EXPECT_NE(error_of([&] { render(cycle + "{{ ns | tojson }}"); }).find("nested too deeply"),
            std::string::npos);
  EXPECT_EQ(render(cycle + "{{ ns.a }}{{ ns.me.me.a }}"), "11");
  // Lists nested 100,000 levels deep (within the default loop limit): freed
  // without recursion, refused when printed or compared.
  const std::string deep =
      "{% set ns = namespace(l=[], m=[]) %}{% for i in range(100000) %}{% set ns.l = [ns.l] %}"
      "{% set ns.m = [ns.m] %}{% endfor %}";
  EXPECT_EQ(render(deep + "ok"), "ok");
  EXPECT_NE(error_of([&] { render(deep + "{{ ns.l }}"); }).find("nested too deeply to print"),
            std::string::npos);
  EXPECT_NE(error_of([&] { render(deep + "{{ ns.l == ns.m }}"); }).find("nested too deeply"),
            std::string::npos);
  // Two distinct lists, each 40 levels of [x, x] over the level below, are
  // equal, but only after 2^40 element comparisons: the render's comparison
  // budget stops it, however the comparisons are made.
  std::string twin;
  for (const char* name : {"a", "b"}) {
    twin += std::string("{% set ns") + name + " = namespace(l=[1]) %}{% for i in range(40) %}" +
            "{% set ns" + name + ".l = [ns" + name + ".l, ns" + name + ".l] %}{% endfor %}";
  }
  Limits budget;
  budget.max_compare_steps = 100'000;
  for (const char* use :
       {"{{ nsa.l == nsb.l }}", "{{ nsa.l in [nsb.l] }}",
        "{{ [nsa.l, nsb.l] | unique | list | length }}", "{{ [nsa.l, nsb.l] | sort | length }}"}) {
    SCOPED_TRACE(use);
    EXPECT_NE(error_of([&] {
                render(twin + use, budget);
              }).find("comparisons exceed the limit of 100000 element steps in one render"),
              std::string::npos);
  }
  EXPECT_EQ(render(twin + "{{ nsa.l == nsa.l }}", budget), "True");  // the same list: at once
  // Many cheap comparisons add up against the same budget.
  EXPECT_NE(error_of([&] {
              render("{% for i in range(200000) %}{% if i == -1 %}x{% endif %}{% endfor %}",
                     budget);
            }).find("comparisons exceed"),
            std::string::npos);
  // Macro recursion times a deep expression (found by the fuzzer: a stack
  // overflow): each is within its own limit, their product is an error.
  const std::string plus(150, '+');
  EXPECT_NE(error_of([&] {
              render("{% macro f(n) %}{% if n > 0 %}{{ " + plus +
                     "f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}");
            }).find("expressions nested too deeply"),
            std::string::npos);
  // unique() compares every pair: 5000 distinct items are 12.5M comparisons.
  EXPECT_NE(error_of([&] {
              render("{{ range(5000) | unique | length }}", small);
            }).find("unique(): too many items"),
            std::string::npos);
  EXPECT_EQ(render("{{ [1, 2, 1, 2.0, 3] | unique | list }}", small), "[1, 2, 3]");
  // range() near the end of int64 stops instead of overflowing.
  EXPECT_EQ(render("{% for i in range(9223372036854775800, 9223372036854775807, 5) %}{{ i }};{% "
                   "endfor %}"),
            "9223372036854775800;9223372036854775805;");
}

TEST(ChatTemplate, MessageVectorApiAndNullKeysDropped) {
  ChatTemplate t(
      "{% for m in messages %}{{ m.role }}:{{ m.content }}{% if 'name' in m %}({{ m.name }}){% "
      "endif %};"
      "{% endfor %}{{ bos_token }}{{ eos_token }}{% if add_generation_prompt %}>{% endif %}{{ "
      "extra_var }}");
  RenderOptions opts;
  opts.bos_token = "<s>";
  opts.eos_token = "</s>";
  opts.extra = {{"extra_var", 7}};
  EXPECT_EQ(t.render(std::vector<ChatMessage>{{"user", "a"}, {"assistant", "b"}}, opts),
            "user:a;assistant:b;<s></s>>7");
  const auto msgs =
      nlohmann::ordered_json::array({{{"role", "user"}, {"content", "x"}, {"name", nullptr}}});
  opts.add_generation_prompt = false;
  EXPECT_EQ(t.render(msgs, opts), "user:x;<s></s>7");
  EXPECT_THROW(t.render(nlohmann::ordered_json::object(), opts), Error);
}

TEST(ChatTemplate, TrailingNewlineAndLineEndings) {
  EXPECT_EQ(render("a\n"), "a");  // keep_trailing_newline=False drops one
  EXPECT_EQ(render("a\n\n"), "a\n");
  EXPECT_EQ(render("a\r\nb"), "a\nb");  // line endings normalized
}

}  // namespace
}  // namespace folio::chat
