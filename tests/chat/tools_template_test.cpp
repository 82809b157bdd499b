// tests/chat/tools_template_test.cpp: whether a template reads `tools`
// (ChatTemplate::uses_tools), which decides native vs generic tool prompts.
#include <gtest/gtest.h>

#include "chat/builtin_templates.h"
#include "chat/chat_template.h"

namespace folio::chat {
namespace {

// SmolLM2-135M-Instruct's template (from its GGUF): no tools.
constexpr const char* kSmolLM2 =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + "
    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}";

TEST(ChatTemplateTools, DetectsTemplatesThatReadTools) {
  EXPECT_FALSE(ChatTemplate(kSmolLM2).uses_tools());
  const auto gemma = builtin_template("gemma3");
  ASSERT_TRUE(gemma);
  EXPECT_FALSE(ChatTemplate(std::string(gemma->source)).uses_tools());
  EXPECT_TRUE(ChatTemplate("{% if tools %}{{ tools | tojson }}{% endif %}").uses_tools());
  EXPECT_TRUE(
      ChatTemplate("{%- for t in tools -%}{{ t.function.name }}{%- endfor -%}").uses_tools());
  EXPECT_TRUE(ChatTemplate("{% if tools is defined and tools %}x{% endif %}").uses_tools());
  // Text, string literals, comments and attributes are not reads of the variable.
  EXPECT_FALSE(ChatTemplate("tools are great {{ 'tools' }}{# tools #}").uses_tools());
  EXPECT_FALSE(ChatTemplate("{{ message.tools }}{{ toolset }}").uses_tools());
}

TEST(ChatTemplateTools, ToolsVariableIsNoneUnlessGiven) {
  const ChatTemplate t("{% if tools is none %}none{% else %}{{ tools | length }}{% endif %}");
  const nlohmann::ordered_json msgs = nlohmann::ordered_json::array();
  EXPECT_EQ(t.render(msgs, RenderOptions{}), "none");
  RenderOptions ro;
  ro.extra["tools"] = nlohmann::ordered_json::array({{{"type", "function"}}});
  EXPECT_EQ(t.render(msgs, ro), "1");
}

}  // namespace
}  // namespace folio::chat
