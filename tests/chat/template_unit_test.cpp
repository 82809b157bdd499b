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
