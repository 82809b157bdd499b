#!/usr/bin/env python3
"""Generate chat-template golden files from transformers' apply_chat_template machinery.

Run:  /work/main/.venv/bin/python tools/gen_chat_goldens.py

Writes tests/data/chat/goldens.json: {"reference": ..., "templates": {name: source},
"cases": [{"name", "template", "messages", "add_generation_prompt", "bos_token", "eos_token",
"extra", "expected"} or {..., "error": substring folio's message must contain}]}.

The reference renderer is transformers.utils.chat_template_utils.render_jinja_template, the
function apply_chat_template calls: jinja2's ImmutableSandboxedEnvironment with trim_blocks,
lstrip_blocks, loopcontrols, raise_exception and transformers' tojson. Like apply_chat_template,
message keys whose value is None are dropped first.

Templates:
  * smollm2: read from models/SmolLM2-135M-Instruct.Q4_1.gguf (tokenizer.chat_template).
  * gemma3_builtin: src/chat/templates/gemma3.jinja, folio's own template for Gemma files
    without one (the Gemma 3 270M GGUF we use ships none; Google's published template is not
    used, since folio does not commit third-party text). Its output is also checked against
    llama.cpp's built-in "gemma" format (llama-chat.cpp), hand-written below.
  * feature_*: small templates written for folio that exercise each Jinja2 feature the
    interpreter supports (whitespace control, loops, filters, tests, expressions, namespaces,
    macros, string methods, tojson); jinja2 is the oracle for them too.
Error cases check that jinja2 also fails on the same input (raise_exception) or that the
feature is really outside folio's subset (folio must name it; jinja2's output is not used).
"""
import json
import os
import sys

import gguf
import jinja2  # noqa: F401  (required by transformers' renderer)
from transformers.utils.chat_template_utils import render_jinja_template

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "chat")
SMOL = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")


def gguf_chat_template(path):
    r = gguf.GGUFReader(path)
    f = r.fields["tokenizer.chat_template"]
    return bytes(f.parts[f.data[0]]).decode("utf-8")


FEATURES = {
    "feature_whitespace": (
        "{% for m in messages %}\n"
        "  {% if m.role == 'user' %}\n"
        "    User: {{ m.content }}\n"
        "  {% else %}\n"
        "    Other: {{ m.content }}\n"
        "  {% endif %}\n"
        "{% endfor %}\n"
        "{# a comment #}\n"
        "end {{- ' x ' -}} !\n"
        "  {%+ if true %}plus{% endif +%}\n"
        "keep {{ 'a' }}  {% if true %}same line{% endif %}\n"
        "\t{%- if true -%}  dash  {%- endif -%}\n"
        "{% raw %}{{ not rendered }} {% if %}{% endraw %}\n"
        "last line\n"
    ),
    "feature_loops": (
        "{% for m in messages %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.length }}/"
        "{{ loop.revindex }}/{{ loop.revindex0 }}{% if loop.first %}F{% endif %}"
        "{% if loop.last %}L{% endif %}{{ ',' if not loop.last }}{% endfor %}\n"
        "{% for x in [] %}a{% else %}empty{% endfor %}\n"
        "{% for m in messages if m.role != 'system' %}{{ loop.index }}{{ m.role[0] }} {% endfor %}\n"
        "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i > 5 %}{% break %}{% endif %}{{ i }}{% endfor %}\n"
        "{% for k, v in {'a': 1, 'b': [2]}.items() %}{{ k }}={{ v }};{% endfor %}\n"
        "{% for row in [[1, 2], [3]] %}{% for c in row %}{{ loop.index }}{{ c }}{% endfor %}|{{ loop.index }}{% endfor %}\n"
        "{% for ch in 'h\u00e9!' %}[{{ ch }}]{% endfor %}{% for k in {'x': 1, 'y': 2} %}{{ k }}{% endfor %}\n"
        "{{ range(2, 9, 3) | list }} {{ range(5, 0, -2) | list }}"
    ),
    "feature_filters": (
        "{{ '  hi  ' | trim }}|{{ messages | length }}|{{ 'Ab' | upper }}{{ 'Ab'|lower }}|"
        "{{ missing | default('d') }}|{{ none | default('d', true) }}|{{ '' | d('e', boolean=true) }}|"
        "{{ ['a','b'] | join('-') }}|{{ [1, 2] | join }}|{{ 'aXbX' | replace('X','y') }}|"
        "{{ messages | map(attribute='role') | join(',') }}|"
        "{{ messages | selectattr('role', 'equalto', 'user') | list | length }}|"
        "{{ messages | rejectattr('role', 'equalto', 'user') | map(attribute='role') | list }}|"
        "{{ [3, 1, 2] | sort | join }}|{{ [3, 1, 2] | sort(reverse=true) | join }}|"
        "{{ 'hello woRLD' | title }}|{{ 'abc' | first }}{{ [1, 2] | last }}|{{ '42' | int + 1 }}|"
        "{{ 3.7 | int }}|{{ 'x' | int }}|{{ [1, 2, 3] | reverse | list }}|{{ 'abc' | reverse }}|"
        "{{ {'b': 1, 'a': 2} | items | list }}|{{ 'hELLO' | capitalize }}|{{ -3 | abs }}|"
        "{{ 2.567 | round(2) }}|{{ 'a\\nb\\n\\nc' | indent(2) }}|{{ 'a\\nb' | indent(3, true) }}|"
        "{{ [1, 2, 1, 3] | unique | list }}|{{ [0, 1, '', 'a'] | select | list }}|"
        "{{ [1, 2, 3, 4] | reject('odd') | list }}|{{ ['a', 'b'] | map('upper') | join }}|"
        "{{ 5 | string ~ '!' }}|{{ '1.5' | float }}|{{ 'xx' | safe }}|{{ {'a': 1} | length }}|"
        "{{ -1 | abs }}{{ - 2 | abs }}|{{ (messages | first).attr_missing | default('no') }}"
    ),
    "feature_tojson": (
        "{{ messages | tojson }}\n"
        "{{ {'a': [1, 2.5, true, none, '\u00e9\"\\n\\t\\u0001'], 'b': {}} | tojson }}\n"
        "{{ {'z': 1, 'a': {'k': [], 'm': [1, {'q': 'r'}]}} | tojson(indent=2) }}\n"
        "{{ {'z': 1, 'a': 2} | tojson(sort_keys=true) }}\n"
        "{{ tools | tojson }} {{ 1e100 | tojson }} {{ 0.1 | tojson }} {{ 'it\\'s' | tojson }}"
    ),
    "feature_expressions": (
        "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7.5 % 2 }} {{ 7 / 2 }} {{ 6 / 3 }} {{ 2 ** 10 }} {{ 2 ** -1 }}\n"
        "{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 'a' ~ 1 ~ none ~ true }} {{ 'ab' * 3 }} {{ 3 > 2 > 1 }} {{ 1 < 3 < 2 }}\n"
        "{{ 'b' in 'abc' }} {{ 'x' not in ['x'] }} {{ 'role' in messages[0] }} {{ not false and true or false }}\n"
        "[{{ 1 if false }}] {{ 'yes' if 2 > 1 else 'no' }} {{ [1, 2, 3, 4, 5][1:3] }} {{ [1, 2, 3, 4, 5][::2] }}\n"
        "{{ 'hello'[::-1] }} {{ 'hello'[-3:] }} {{ 'h\u00e9llo'[1:3] }} {{ messages[-1]['content'] }} {{ messages[0].role }}\n"
        "{{ 1.0 }} {{ 1e20 }} {{ 1.5e-7 }} {{ 0.1 + 0.2 }} {{ 123456789.0 * 1000 }} {{ true }} {{ none }} {{ -0.0 }}\n"
        "{{ [1, 'a', none, true, 2.5] }} {{ {'k': 'v', 'n': [1]} }} {{ ('t', 1) | list }} {{ \"it's\" }} {{ ['it\\'s'] }}\n"
        "{{ 10 / 4 }} {{ 3 == 3.0 }} {{ true == 1 }} {{ [1, 2] == [1, 2] }} {{ 'a' < 'b' }} {{ [1, 2] + [3] }}\n"
        "{{ messages[9] is defined }} {{ messages[0]['nope'] is defined }} {{ -(3) }} {{ +4 }} {{ 1_000 + 1 }}\n"
        "{{ \"con\" 'cat' }} {{ 'x' if messages else 'y' }} {{ messages | length > 1 and messages[1].role == 'user' }}"
    ),
    "feature_methods": (
        "{{ 'Hello'.startswith('He') }} {{ 'Hello'.endswith(('x', 'lo')) }} [{{ '  a b  '.strip() }}]"
        " [{{ 'xxaxx'.strip('x') }}] {{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }}"
        " {{ 'a b c'.split(' ', 1) }} {{ 'abc'.upper() }} {{ 'ABC'.lower() }} {{ ','.join(['a', 'b']) }}"
        " {{ 'abcabc'.find('c') }} {{ 'abcabc'.count('bc') }} {{ 'aaa'.replace('a', 'b', 2) }}"
        " [{{ '  x'.lstrip() }}{{ 'x  '.rstrip() }}] {{ 'the cat'.title() }} {{ 'aBC'.capitalize() }}"
        " {{ {'a': 1}.get('a') }} {{ {'a': 1}.get('b', 'dflt') }} {{ {'a': 1}.get('b') }}"
        " {{ {'a': 1, 'b': 2}.keys() | list }} {{ {'a': 1, 'b': 2}.values() | list }}"
        " [{{ '\u3000 wide\u00a0 '.strip() }}] {{ 'a\\tb\\nc'.split() }}"
    ),
    "feature_scoping": (
        "{% set ns = namespace(found=false, n=0) %}{% set outer = 'o' %}"
        "{% for m in messages %}{% set outer = 'inner' %}{% if m.role == 'user' %}"
        "{% set ns.found = true %}{% set ns.n = ns.n + 1 %}{% endif %}{% endfor %}"
        "{{ outer }} {{ ns.found }} {{ ns.n }}{% set a, b = 1, 2 %} {{ a }}{{ b }}"
        "{% set captured %}cap {{ a }}{% endset %} [{{ captured }}]"
        "{% if true %}{% set in_if = 'leaks' %}{% endif %} {{ in_if }}"
        "{% set d = {'x': 1} %} {{ d.x }} {{ d['x'] }}"
        "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}"
        " {{ greet('A') }} {{ greet('B', '?') }} {{ greet(name='C') }} {{ greet('D', punct='.') }}"
    ),
    "feature_tests": (
        "{{ missing is defined }} {{ messages is defined }} {{ none is none }} {{ 'a' is string }}"
        " {{ 1 is number }} {{ 1.5 is float }} {{ 1 is integer }} {{ {} is mapping }} {{ [] is iterable }}"
        " {{ 'a' is iterable }} {{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }}"
        " {{ 9 is divisibleby(2) }} {{ 'a' is equalto 'a' }} {{ missing is not defined }}"
        " {{ true is boolean }} {{ 1 is boolean }} {{ missing is undefined }} {{ tools is none }}"
        " {{ 'abc' is lower }} {{ 2 is in [1, 2] }} {{ 3 is gt 2 }} {{ true is true }} {{ 0 is false }}"
    ),
    "feature_llama3_style": (
        "{% set loop_messages = messages %}{% for message in loop_messages %}"
        "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'"
        " + message['content'] | trim + '<|eot_id|>' %}"
        "{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}"
        "{% endfor %}{% if add_generation_prompt %}"
        "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
    ),
    "feature_tools_style": (
        "{%- if tools %}\n"
        "    {{- '<|im_start|>system\\n' }}\n"
        "    {%- if messages[0]['role'] == 'system' %}\n"
        "        {{- messages[0]['content'] }}\n"
        "    {%- else %}\n"
        "        {{- 'You are a helpful assistant.' }}\n"
        "    {%- endif %}\n"
        "    {{- '\\n\\n<tools>' }}\n"
        "    {%- for tool in tools %}\n"
        "        {{- '\\n' }}\n"
        "        {{- tool | tojson }}\n"
        "    {%- endfor %}\n"
        "    {{- '\\n</tools><|im_end|>\\n' }}\n"
        "{%- endif %}\n"
        "{%- for message in messages %}\n"
        "    {%- if message.role == 'user' or (message.role == 'system' and not loop.first) %}\n"
        "        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\n"
        "    {%- elif message.role == 'assistant' %}\n"
        "        {{- '<|im_start|>' + message.role }}\n"
        "        {%- if message.content %}\n"
        "            {{- '\\n' + message.content }}\n"
        "        {%- endif %}\n"
        "        {%- for tool_call in message.tool_calls | default([]) %}\n"
        "            {{- '\\n<tool_call>\\n{\"name\": \"' }}{{- tool_call.function.name }}\n"
        "            {{- '\", \"arguments\": ' }}{{- tool_call.function.arguments | tojson }}\n"
        "            {{- '}\\n</tool_call>' }}\n"
        "        {%- endfor %}\n"
        "        {{- '<|im_end|>\\n' }}\n"
        "    {%- endif %}\n"
        "{%- endfor %}\n"
        "{%- if add_generation_prompt %}\n"
        "    {{- '<|im_start|>assistant\\n' }}\n"
        "{%- endif %}\n"
    ),
}

CONVERSATIONS = {
    "single": [{"role": "user", "content": "Hello!"}],
    "system": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "What is 2+2?"},
    ],
    "multi_turn": [
        {"role": "user", "content": "Hi there"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "Write a haiku about C++.\nMake it rhyme."},
    ],
    "system_multi": [
        {"role": "system", "content": "  Be kind.  "},
        {"role": "user", "content": "  spaced out  \n"},
        {"role": "assistant", "content": "\tOK\n\n"},
        {"role": "user", "content": "\u4f60\u597d\uff0c\u4e16\u754c \U0001F600 <b>&amp;</b> {{ not a tag }}"},
    ],
    "unicode_space": [{"role": "user", "content": "\u3000 wide and nbsp\u00a0\u2003\n"}],
    "empty_content": [{"role": "user", "content": ""}],
    "parts": [
        {"role": "user", "content": [{"type": "text", "text": " Describe "}, {"type": "image"},
                                     {"type": "text", "text": "this. "}]},
    ],
}

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather \u00b0C",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                         "required": ["city"]}}}]
TOOL_CHAT = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
    {"role": "user", "content": "Thanks"},
]


def render(template, messages, add_gen, bos, eos, extra):
    kwargs = dict(extra)
    out, _ = render_jinja_template(
        conversations=[[{k: v for k, v in m.items() if v is not None} for m in messages]],
        chat_template=template, add_generation_prompt=add_gen, bos_token=bos, eos_token=eos,
        **kwargs)
    return out[0]


GEMMA_TEMPLATE = os.path.join(ROOT, "src", "chat", "templates", "gemma3.jinja")


def main():
    templates = {"smollm2": gguf_chat_template(SMOL)}
    with open(GEMMA_TEMPLATE, encoding="utf-8") as f:
        templates["gemma3_builtin"] = f.read()
    templates.update(FEATURES)
    cases = []

    def add(name, tname, messages, add_gen, bos="", eos="", extra=None, error=None):
        extra = extra or {}
        case = {"name": name, "template": tname, "messages": messages,
                "add_generation_prompt": add_gen, "bos_token": bos, "eos_token": eos,
                "extra": extra}
        try:
            expected = render(templates[tname], messages, add_gen, bos, eos, extra)
            if error:
                sys.exit(f"{name}: jinja2 rendered but an error was expected")
            case["expected"] = expected
        except jinja2.exceptions.TemplateError as e:
            if not error:
                sys.exit(f"{name}: jinja2 failed: {e}")
            case["error"] = error
        cases.append(case)

    for conv_name, conv in CONVERSATIONS.items():
        for add_gen in (True, False):
            suffix = "gen" if add_gen else "nogen"
            if conv_name != "parts":
                add(f"smollm2_{conv_name}_{suffix}", "smollm2", conv, add_gen, "", "<|im_end|>")
                add(f"gemma3_{conv_name}_{suffix}", "gemma3_builtin", conv, add_gen, "<bos>",
                    "<eos>")
    # llama.cpp's "gemma" format for a system + user turn: the system text, trimmed, heads
    # the first user turn, then a blank line; "assistant" is "model" (its BOS comes from the
    # tokenizer, here from the template).
    want = ("<bos><start_of_turn>user\nYou are terse.\n\nWhat is 2+2?<end_of_turn>\n"
            "<start_of_turn>model\n")
    got = render(templates["gemma3_builtin"], CONVERSATIONS["system"], True, "<bos>", "<eos>", {})
    if got != want:
        sys.exit(f"gemma3_builtin does not render llama.cpp's gemma format: {got!r}")
    add("gemma3_alternation", "gemma3_builtin",
        [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}], True, "<bos>",
        "<eos>", error="alternate user and assistant")
    for tname in FEATURES:
        conv = CONVERSATIONS["system_multi"]
        extra = {}
        if tname == "feature_tools_style":
            conv, extra = TOOL_CHAT, {"tools": TOOLS}
        add(tname, tname, conv, True, "<s>", "</s>", extra)
    add("feature_tools_style_no_tools", "feature_tools_style", CONVERSATIONS["multi_turn"], False)
    templates["feature_raise"] = (
        "{%- for m in messages %}{% if loop.index0 % 2 == 1 and m['role'] != 'assistant' %}"
        "{{ raise_exception('Conversation roles must alternate user/assistant') }}{% endif %}"
        "{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}")
    add("feature_raise_alternation", "feature_raise",
        [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}], True,
        error="Conversation roles must alternate")
    add("feature_raise_ok", "feature_raise",
        [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}], True)

    out = {
        "reference": "transformers %s render_jinja_template (jinja2 %s)" % (
            __import__("transformers").__version__, jinja2.__version__),
        "templates": templates,
        "cases": cases,
    }
    path = os.path.join(DATA, "goldens.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {path}: {len(cases)} cases, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
