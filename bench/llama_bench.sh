#!/usr/bin/env bash
# bench/llama_bench.sh -- llama.cpp reference numbers on this machine (the bar folio must meet).
#
# Runs, with 2 threads:
#   * llama-bench pp512 / tg128, 5 repetitions, on SmolLM2-135M Q4_1 and every requantized
#     variant bench/quantize_models.sh made (models/SmolLM2-135M-Instruct.rq-*.gguf);
#   * llama-batched-bench on Q4_1: 128-token prompts, 128 generated tokens, 1 / 8 / 32 parallel
#     sequences (separate prompts, per-sequence KV), i.e. batched decode throughput.
# Raw JSON(L) goes to bench/.work/results/<UTC timestamp>/ together with the llama.cpp version
# and machine load; a markdown summary is printed at the end.
#
# The machine is shared (2 cores): before every measurement we wait until the CPUs are nearly
# idle, because a compile running beside the benchmark halves its numbers. The busy share seen
# just before each run is recorded next to the result so contaminated numbers can be spotted;
# the runs themselves use bench_run (nice -20 as root), see bench/idle.sh.
#
# Environment knobs: THREADS (2), REPS (5), NPL (1,8,32), IDLE_MAX_BUSY (percent, 15),
# IDLE_MAX_WAIT (seconds, 300), BENCH_NICE, BENCH_RT, MODELS (space-separated paths, overrides the list).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${LLAMA_CPP_BIN:-$ROOT/bench/.work/llama.cpp-build/bin}"
THREADS="${THREADS:-2}"
REPS="${REPS:-5}"
NPL="${NPL:-1,8,32}"
OUT="$ROOT/bench/.work/results/$(date -u +%Y%m%dT%H%M%SZ)"
PY="$ROOT/.venv/bin/python"

log() { printf '[llama_bench.sh] %s\n' "$*" >&2; }

for tool in llama-bench llama-batched-bench; do
    [[ -x "$BIN/$tool" ]] || { log "no $BIN/$tool; run bench/llama_cpp.sh first"; exit 1; }
done

if [[ -n "${MODELS:-}" ]]; then
    read -r -a models <<<"$MODELS"
else
    models=("$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf")
    for f in "$ROOT"/models/SmolLM2-135M-Instruct.rq-*.gguf; do [[ -f "$f" ]] && models+=("$f"); done
fi
mkdir -p "$OUT"
cp "$BIN/../VERSION.txt" "$OUT/" 2>/dev/null || true

source "$ROOT/bench/idle.sh"

for m in "${models[@]}"; do
    name="$(basename "$m" .gguf)"
    busy="$(wait_for_idle)"
    log "llama-bench $name (busy before: ${busy}%) ..."
    echo "$name busy_before=${busy}% nice=$BENCH_NICE rt=${BENCH_RT:-0}" >>"$OUT/load.txt"
    bench_run "$BIN/llama-bench" -m "$m" -t "$THREADS" -p 512 -n 128 -r "$REPS" -o json \
        >"$OUT/llama-bench.$name.json" 2>"$OUT/llama-bench.$name.log"
done

q41="$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf"
busy="$(wait_for_idle)"
log "llama-batched-bench Q4_1, npl $NPL (busy before: ${busy}%) ..."
echo "batched-bench busy_before=${busy}% nice=$BENCH_NICE rt=${BENCH_RT:-0}" >>"$OUT/load.txt"
# n_kv: 32 sequences x (128 + 128) = 8192 cells; per-sequence (non-unified) KV like a paged server.
bench_run "$BIN/llama-batched-bench" -m "$q41" -t "$THREADS" -tb "$THREADS" -c 8192 -b 2048 -ub 512 \
    -npp 128 -ntg 128 -npl "$NPL" -no-kvu --output-format jsonl \
    >"$OUT/batched-bench.jsonl" 2>"$OUT/batched-bench.log"

log "results in $OUT"
"$PY" - "$OUT" <<'PYEOF'
import glob, json, os, sys
out = sys.argv[1]
print("| model | test | t/s (mean ± sd) |")
print("|---|---|---|")
for path in sorted(glob.glob(os.path.join(out, "llama-bench.*.json"))):
    for r in json.load(open(path)):
        test = f"pp{r['n_prompt']}" if r["n_prompt"] else f"tg{r['n_gen']}"
        name = os.path.basename(r["model_filename"]).removesuffix(".gguf")
        print(f"| {name} | {test} | {r['avg_ts']:.1f} ± {r['stddev_ts']:.1f} |")
print()
print("| B (parallel seqs) | S_PP t/s | S_TG t/s | total S t/s |")
print("|---|---|---|---|")
for line in open(os.path.join(out, "batched-bench.jsonl")):
    line = line.strip()
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    print(f"| {r['pl']} | {r['speed_pp']:.1f} | {r['speed_tg']:.1f} | {r['speed']:.1f} |")
print()
print(open(os.path.join(out, "load.txt")).read().strip())
PYEOF
