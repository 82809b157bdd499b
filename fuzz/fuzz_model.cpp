// fuzz/fuzz_model.cpp: the two fuzz ModelContexts (built once, on first use).
#include "fuzz_model.h"

#include "synthetic_vocab.h"

namespace folio::fuzz {
namespace {

// tests/server/server_fixture.h's kTestTemplate.
constexpr const char* kPlainTemplate =
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}";

// tests/data/chat/goldens.json's feature_tools_style (Qwen 2.5 / Hermes shape).
constexpr const char* kToolsTemplate = R"({%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are a helpful assistant.' }}
    {%- endif %}
    {{- '\n\n<tools>' }}
    {%- for tool in tools %}
        {{- '\n' }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- '\n</tools><|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
    {%- if message.role == 'user' or (message.role == 'system' and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == 'assistant' %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls | default([]) %}
            {{- '\n<tool_call>\n{"name": "' }}{{- tool_call.function.name }}
            {{- '", "arguments": ' }}{{- tool_call.function.arguments | tojson }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
)";

const tokenizer::Tokenizer& fuzz_tokenizer() {
  static const tokenizer::Tokenizer tok = synthetic_bpe();
  return tok;
}

server::ModelContext build(std::vector<std::string> names, const char* tmpl) {
  server::ModelContext m = server::make_model_context(fuzz_tokenizer(), std::move(names),
                                                      "/models/fuzz.gguf", kFuzzMaxModelLen, tmpl);
  m.hidden_size = kFuzzHiddenSize;
  return m;
}

}  // namespace

const server::ModelContext& fuzz_model_plain() {
  static const server::ModelContext m = build({"small", "fuzz-model"}, kPlainTemplate);
  return m;
}

const server::ModelContext& fuzz_model_tools() {
  static const server::ModelContext m = build({"large"}, kToolsTemplate);
  return m;
}

}  // namespace folio::fuzz
