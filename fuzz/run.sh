#!/usr/bin/env bash
# fuzz/run.sh SECONDS: build the fuzzers with clang in build/fuzz, seed their
# corpora with small valid inputs, and fuzz: the GGUF reader for SECONDS, the
# safetensors / config.json readers and the output constraints (GBNF, JSON
# Schema, regex) for SECONDS / 2 each; print the numbers.
# Exits non-zero when a fuzzer finds a crash, leak, timeout or OOM (the input
# is saved as build/fuzz/artifacts/<target>-crash-* etc.).
set -euo pipefail
seconds=${1:?usage: fuzz/run.sh SECONDS}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/fuzz
jobs=${FUZZ_BUILD_JOBS:-2}

if [[ ! -f $build/build.ninja ]]; then
  CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFOLIO_FUZZ=ON -DFOLIO_BUILD_TESTS=OFF -DFOLIO_NATIVE=OFF
fi
ninja -C "$build" -j"$jobs" gguf_fuzz gguf_make_corpus safetensors_fuzz grammar_fuzz

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
exit "$status"
