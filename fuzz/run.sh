#!/usr/bin/env bash
# fuzz/run.sh SECONDS: build the GGUF fuzzer with clang in build/fuzz, seed
# build/fuzz/corpus with small valid files, fuzz for SECONDS, print the numbers.
# Exits non-zero when the fuzzer finds a crash, leak, timeout or OOM (the input
# is saved as build/fuzz/artifacts/crash-* etc.).
set -euo pipefail
seconds=${1:?usage: fuzz/run.sh SECONDS}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/fuzz
jobs=${FUZZ_BUILD_JOBS:-2}

if [[ ! -f $build/build.ninja ]]; then
  CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFOLIO_FUZZ=ON -DFOLIO_BUILD_TESTS=OFF -DFOLIO_NATIVE=OFF
fi
ninja -C "$build" -j"$jobs" gguf_fuzz gguf_make_corpus

mkdir -p "$build/corpus" "$build/artifacts"
"$build/fuzz/gguf_make_corpus" "$build/corpus"

log=$build/fuzz.log
set +e
"$build/fuzz/gguf_fuzz" "$build/corpus" -dict="$root/fuzz/gguf.dict" \
  -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
  -artifact_prefix="$build/artifacts/" -print_final_stats=1 2>&1 | tee "$log" |
  grep -E '^#[0-9]+[[:space:]]+(pulse|DONE)|^Done|ERROR|SUMMARY|stat::|Test unit written'
status=${PIPESTATUS[0]}
set -e

execs=$(grep -Eo 'stat::number_of_executed_units: +[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo '?')
speed=$(grep -Eo 'stat::average_exec_per_sec: +[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo '?')
echo "gguf_fuzz: ${seconds}s, ${execs} execs, ${speed} execs/s, corpus $(ls "$build/corpus" | wc -l) files, exit ${status}"
if [[ $status -ne 0 ]]; then
  echo "gguf_fuzz: FINDING (see $log and $build/artifacts/)" >&2
fi
exit "$status"
