#!/usr/bin/env bash
# bench/multi_model.sh: does a busy model starve another's decodes?
#
#   bench/multi_model.sh [ROUNDS]
#
# Model A (SmolLM2, the small default) serves one request at a time while
# model B (Gemma 3 270M) is idle, then while B is saturated with SAT_CONC
# concurrent long requests. Two setups, in one run:
#   shared: one `folio serve -m A -m B` (one kernel pool, engines take steps
#           in turn, engine/step_gate.h)
#   split:  two `folio serve` processes, each with THREADS kernel threads of
#           its own (what one gets without folio's rule: pools over each other)
# It prints A's median ITL and TTFT (`folio bench serve`) per setup and load,
# medians over rounds, and B's output tok/s while saturated.
#
# Environment: THREADS [all cores] A_PROMPTS [8] A_IN [128] A_OUT [64]
#   SUMMARY_OF [a results folder]: print its table again without running
#   SAT_CONC [8] SAT_IN [512] SAT_OUT [128] FOLIO_BIN [build/release/folio]
# Results go to bench/.work/results/multi-model-<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/wait_health.sh
rounds=${1:-3}
threads=${THREADS:-$(nproc)}
a_prompts=${A_PROMPTS:-8}
a_in=${A_IN:-128}
a_out=${A_OUT:-64}
sat_conc=${SAT_CONC:-8}
sat_in=${SAT_IN:-512}
sat_out=${SAT_OUT:-128}
folio=${FOLIO_BIN:-build/release/folio}
model_a=models/SmolLM2-135M-Instruct.Q4_1.gguf
model_b=models/gemma-3-270m-q4_k_m.gguf
out=${SUMMARY_OF:-bench/.work/results/multi-model-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
cpu=$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)
echo "multi-model ITL: $cpu, $(nproc) cores, threads $threads; results in $out" >&2

pids=()
stop_servers() {
  for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
trap stop_servers EXIT

bench() {  # PORT MODEL PROMPTS IN OUT CONC FILE
  "$folio" bench serve --port "$1" --model "$2" --num-prompts "$3" --random-input-len "$4" \
    --random-output-len "$5" --max-concurrency "$6" --disable-progress --json 2>/dev/null >"$7"
}

# A's latency with B idle, then with B saturated; PORT_A PORT_B TAG ROUND
measure() {
  bench "$1" a "$a_prompts" "$a_in" "$a_out" 1 "$out/$3-idle-$4.json"
  bench "$2" b $((sat_conc * 4)) "$sat_in" "$sat_out" "$sat_conc" "$out/$3-sat-b-$4.json" &
  local sat=$!
  sleep 3  # B's queue fills
  bench "$1" a "$a_prompts" "$a_in" "$a_out" 1 "$out/$3-busy-$4.json"
  kill "$sat" 2>/dev/null || true
  wait "$sat" 2>/dev/null || true
}

common=(--max-model-len 2048 --max-num-seqs 16 --kv-cache-memory 1GiB -t "$threads")
[[ -n ${SUMMARY_OF:-} ]] && rounds_to_run=0 || rounds_to_run=$rounds
for r in $(seq 1 "$rounds_to_run"); do
  "$folio" serve -m "$model_a" -m "$model_b" --served-model-name a b --port 18611 "${common[@]}" \
    >"$out/shared-$r.log" 2>&1 &
  pids+=($!)
  wait_health 18611 "${pids[-1]}" "$out/shared-$r.log"
  measure 18611 18611 shared "$r"
  stop_servers
  "$folio" serve "$model_a" --served-model-name a --port 18612 "${common[@]}" >"$out/split-a-$r.log" 2>&1 &
  pids+=($!)
  wait_health 18612 "${pids[-1]}" "$out/split-a-$r.log"
  "$folio" serve "$model_b" --served-model-name b --port 18613 "${common[@]}" >"$out/split-b-$r.log" 2>&1 &
  pids+=($!)
  wait_health 18613 "${pids[-1]}" "$out/split-b-$r.log"
  measure 18612 18613 split "$r"
  stop_servers
  echo "round $r/$rounds done" >&2
done

.venv/bin/python - "$out" "$rounds" "$cpu" <<'PY'
import json, statistics, sys
out, rounds, cpu = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def med(setup, load, key):
    vals = []
    for r in range(1, rounds + 1):
        try:
            vals.append(json.load(open(f"{out}/{setup}-{load}-{r}.json"))[key])
        except (OSError, KeyError, ValueError):
            pass
    return statistics.median(vals) if vals else float("nan")
print(f"CPU: {cpu}; model A SmolLM2-135M Q4_1 (1 request at a time), model B Gemma 3 270M "
      f"saturated; medians of {rounds} rounds\n")
print("| setup | A ITL idle: median (ms) | A ITL, B busy: median / mean / p99 (ms) | median slowdown "
      "| A TTFT, B busy: median (ms) | B output tok/s |")
print("|---|---|---|---|---|---|")
for s in ("shared", "split"):
    idle, busy = med(s, "idle", "median_itl_ms"), med(s, "busy", "median_itl_ms")
    print(f"| {s} | {idle:.2f} | {busy:.2f} / {med(s, 'busy', 'mean_itl_ms'):.2f} / "
          f"{med(s, 'busy', 'p99_itl_ms'):.1f} | {busy / idle:.2f}x | "
          f"{med(s, 'busy', 'median_ttft_ms'):.1f} | {med(s, 'sat-b', 'output_throughput'):.1f} |")
PY
