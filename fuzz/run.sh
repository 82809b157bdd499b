#!/usr/bin/env bash
# fuzz/run.sh SECONDS: build the fuzzers with clang in build/fuzz, seed their
# corpora with small valid inputs, and fuzz: the GGUF reader for SECONDS, then
# for SECONDS / 2 each the safetensors / config.json readers, the output
# constraints (GBNF, JSON Schema, regex), hostile input to the server (the HTTP
# request path through route(), the OpenAI request parsers), chat templates
# and the tokenizer; print the numbers. (SECONDS=60: 5 minutes of fuzzing.)
# Exits non-zero when a fuzzer finds a crash, leak, timeout or OOM (the input
# is saved as build/fuzz/artifacts/<target>-crash-* etc.).
set -euo pipefail
seconds=${1:?usage: fuzz/run.sh SECONDS}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/fuzz
jobs=${FUZZ_BUILD_JOBS:-2}

if [[ ! -f $build/build.ninja ]]; then
  # Line tables only: a crash report needs file:line, and full -g costs compile time.
  CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
    -DFOLIO_FUZZ=ON -DFOLIO_BUILD_TESTS=OFF -DFOLIO_NATIVE=OFF
fi
ninja -C "$build" -j"$jobs" gguf_fuzz gguf_make_corpus safetensors_fuzz grammar_fuzz http_fuzz \
  openai_request_fuzz chat_template_fuzz tokenizer_fuzz

mkdir -p "$build/corpus" "$build/st_corpus" "$build/artifacts"
"$build/fuzz/gguf_make_corpus" "$build/corpus"
# safetensors seeds: a valid file (u64 header length, JSON header, data) and a config.json.
st_header='{"__metadata__":{"format":"pt"},"a":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]}}'
{
  printf "\\x$(printf %02x ${#st_header})\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
  printf '%s' "$st_header"
  printf '\x00\x3c\x00\x40\x00\x42\x00\x44'
} > "$build/st_corpus/seed.safetensors"
printf '%s' '{"architectures":["LlamaForCausalLM"],"hidden_size":64,"intermediate_size":128,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"vocab_size":100,"rope_parameters":{"rope_theta":10000.0,"rope_type":"default"},"quantization_config":{"quant_method":"gptq","bits":4,"group_size":32,"desc_act":true,"sym":false,"checkpoint_format":"gptq_v2"}}' \
  > "$build/st_corpus/config.json"

# grammar seeds: the first byte picks GBNF (0), JSON Schema (1), regex (2), choices (3).
mkdir -p "$build/grammar_corpus"
printf '\x00root ::= "{" ws ("\\"" [a-z]+ "\\"" ws ":" ws [0-9]{1,3})? "}"\nws ::= [ \\n]{0,2}\n' \
  > "$build/grammar_corpus/gbnf"
printf '\x01{"type":"object","properties":{"a":{"type":"integer","minimum":-5},"b":{"type":"array","items":{"type":"string","maxLength":4},"maxItems":3},"c":{"enum":["x",1,null]}},"required":["a"]}' \
  > "$build/grammar_corpus/schema"
# a number beyond a double (once an uncaught nlohmann out_of_range)
printf '\x01{"maximum":3E333}' > "$build/grammar_corpus/schema_overflow"
printf '\x02(ab|c)+[0-9]{2,4}\\.?[^x]*' > "$build/grammar_corpus/regex"
printf '\x03yes\nno\nmaybe' > "$build/grammar_corpus/choice"

# HTTP seeds: one connection's bytes each (http_fuzz.cpp; the API key is sk-fuzz).
mkdir -p "$build/http_corpus"
http_post() {  # http_post PATH BODY [HEADER LINES]: one POST with a Content-Length
  local LC_ALL=C
  printf 'POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-fuzz\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s' \
    "$1" "${3:-}" "${#2}" "$2"
}
chat='{"messages":[{"role":"user","content":"hello world"}],"max_tokens":4}'
http_post /v1/chat/completions "$chat" > "$build/http_corpus/chat"
http_post /v1/chat/completions '{"model":"auto","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"the name 123"}],"logprobs":true,"top_logprobs":2}' \
  > "$build/http_corpus/chat_stream_auto"
http_post /v1/chat/completions '{"model":"large","messages":[{"role":"user","content":"<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"integer"}}}}}]}' \
  > "$build/http_corpus/chat_tools"
http_post /v1/chat/completions '{"model":"cascade","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_object"}}' \
  > "$build/http_corpus/chat_cascade"
{
  http_post /v1/completions '{"model":"small","prompt":["hello","world"],"n":2,"stop":["o"],"echo":true}'
  http_post /v1/embeddings '{"input":["hello world","the name"],"encoding_format":"base64"}'
  http_post /tokenize '{"prompt":"hello world"}'
  printf 'GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-fuzz\r\n\r\n'
  printf 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
} > "$build/http_corpus/pipelined"
body='{"prompt":[1,2,3,4],"max_tokens":3,"stream":true}'
printf 'POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-fuzz\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n%x;ext=1\r\n%s\r\n0\r\n\r\n' \
  16 "${body:0:16}" $((${#body} - 16)) "${body:16}" > "$build/http_corpus/chunked"
printf 'OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: POST\r\n\r\nGET /metrics HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\nAuthorization: Bearer sk-fuzz\r\n\r\n' \
  > "$build/http_corpus/cors"

# OpenAI request seeds: byte 0 picks the parser (0 chat, 1 completion, 2
# embedding) and the model (+4: the tools template); the rest is the body.
mkdir -p "$build/openai_corpus"
printf '\x00%s' "$chat" > "$build/openai_corpus/chat"
printf '\x04%s' '{"messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},{"role":"tool","tool_call_id":"c1","content":"2"}],"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}}],"tool_choice":"required","parallel_tool_calls":false}' \
  > "$build/openai_corpus/chat_tools"
printf '\x00%s' '{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"type":"object","properties":{"b":{"type":"boolean"}}}}},"temperature":0.5,"top_p":0.9,"top_k":5,"seed":1,"logit_bias":{"5":-100},"stop_token_ids":[1]}' \
  > "$build/openai_corpus/chat_schema"
printf '\x01%s' '{"model":"fuzz-model","prompt":"the name","max_tokens":5,"logprobs":2,"stop":"x","guided_regex":"[a-z]+","min_tokens":1,"attention_window":64,"attention_sinks":4}' \
  > "$build/openai_corpus/completion"
printf '\x01%s' '{"prompt":[[1,2],[3,4]],"n":2,"stream":true,"stream_options":{"include_usage":true},"guided_choice":["a","b"]}' \
  > "$build/openai_corpus/completion_ids"
printf '\x02%s' '{"input":["hello","world"],"encoding_format":"float","dimensions":8}' \
  > "$build/openai_corpus/embedding"
printf '\x06%s' '{"messages":[{"role":"user","content":"hi"}],"add_generation_prompt":true}' \
  > "$build/openai_corpus/embedding_chat"

# Chat template seeds: the built-in templates, the golden-test templates
# (tests/data/chat/goldens.json) and a few that test the limits.
mkdir -p "$build/chat_corpus"
cp "$root"/src/chat/templates/*.jinja "$build/chat_corpus/"
if command -v python3 > /dev/null; then
  python3 - "$root/tests/data/chat/goldens.json" "$build/chat_corpus" <<'PY'
import json, sys
for name, text in json.load(open(sys.argv[1]))["templates"].items():
    open(f"{sys.argv[2]}/golden_{name}.jinja", "w").write(text)
PY
fi
printf '%s' "{% set ns = namespace(l=[1]) %}{% for i in range(3) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l | tojson(indent=2) }}" \
  > "$build/chat_corpus/shared_lists.jinja"
printf '%s' "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{% endif %}{{ n }}{% endmacro %}{{ f(3) }}{{ 'ab' * 3 }}{{ range(0, 10, 3) | list }}" \
  > "$build/chat_corpus/macro.jinja"

# Tokenizer seeds: byte 0 picks the tokenizer (0-7 BPE, 8-11 SentencePiece),
# byte 1 the options (1 add_special, 2 parse_special); the rest is the text.
mkdir -p "$build/tokenizer_corpus"
printf '\x00\x00Hello world, the "name": 123 \xc3\xa9\xe4\xb8\xad \xf0\x9f\x98\x80\n\n  x' > "$build/tokenizer_corpus/bpe"
printf '\x02\x03<|im_start|>user\nhi<|im_end|><tool_call>x</tool_call>\xff\xfe' > "$build/tokenizer_corpus/bpe_special"
printf '\x08\x00 the cat in  an inn, \xc3\xa9!\n' > "$build/tokenizer_corpus/spm"
printf '\x09\x02<s>the</s>  \xe4\xb8\xad\x80' > "$build/tokenizer_corpus/spm_special"

status=0
fuzz_one() {  # fuzz_one TARGET CORPUS SECONDS [libFuzzer flags...]
  local target=$1 corpus=$2 secs=$3
  shift 3
  local log=$build/$target.log rc
  set +e
  "$build/fuzz/$target" "$corpus" "$@" -max_total_time="$secs" -max_len=65536 \
    -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$build/artifacts/$target-" \
    -print_final_stats=1 2>&1 | tee "$log" |
    grep -E '^#[0-9]+[[:space:]]+(pulse|DONE)|^Done|ERROR|SUMMARY|stat::|Test unit written'
  rc=${PIPESTATUS[0]}
  set -e
  local execs speed
  execs=$(grep -Eo 'stat::number_of_executed_units: +[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo '?')
  speed=$(grep -Eo 'stat::average_exec_per_sec: +[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo '?')
  echo "$target: ${secs}s, ${execs} execs, ${speed} execs/s, corpus $(ls "$corpus" | wc -l) files, exit ${rc}"
  if [[ $rc -ne 0 ]]; then
    echo "$target: FINDING (see $log and $build/artifacts/)" >&2
    status=$rc
  fi
}
fuzz_one gguf_fuzz "$build/corpus" "$seconds" -dict="$root/fuzz/gguf.dict"
fuzz_one safetensors_fuzz "$build/st_corpus" "$(((seconds + 1) / 2))"
fuzz_one grammar_fuzz "$build/grammar_corpus" "$(((seconds + 1) / 2))"
fuzz_one http_fuzz "$build/http_corpus" "$(((seconds + 1) / 2))" -dict="$root/fuzz/http.dict"
fuzz_one openai_request_fuzz "$build/openai_corpus" "$(((seconds + 1) / 2))" \
  -dict="$root/fuzz/openai.dict"
fuzz_one chat_template_fuzz "$build/chat_corpus" "$(((seconds + 1) / 2))" -dict="$root/fuzz/jinja.dict"
fuzz_one tokenizer_fuzz "$build/tokenizer_corpus" "$(((seconds + 1) / 2))"
exit "$status"
