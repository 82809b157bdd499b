#!/usr/bin/env bash
# bench/compare_serve.sh: folio serve vs llama.cpp's llama-server under the same
# serving load, in one run.
#
#   bench/compare_serve.sh [MODEL.gguf] [ROUNDS]
#
# Each round starts one server at a time on the same GGUF, thread count and
# slot count, waits for /health, runs `folio bench serve` against it once per
# request rate, and stops it; the order of the two servers alternates across
# rounds so neither always runs on a warmer (or busier) machine. At the end it
# prints a markdown table per rate (output tok/s, req/s, TTFT median/p99, TPOT
# median, ITL p99) with the folio / llama.cpp ratio, medians over rounds.
#
# The load: random token-id prompts of IN tokens (identical for both servers),
# OUT generated tokens each with ignore_eos (both generate exactly OUT), greedy.
#   llama-server -m MODEL -t THREADS -np SLOTS -c SLOTS*(IN+OUT+64) -fa (its faster setting)
#   folio serve MODEL --threads THREADS --max-num-seqs SLOTS --max-model-len IN+OUT+64
#
# Environment knobs (defaults in brackets):
#   SLOTS [8] THREADS [2] PROMPTS [64] IN [128] OUT [128]
#   RATES ["inf 1"]  request rates; "inf" is a burst capped at --max-concurrency SLOTS,
#                    a finite rate is open-loop Poisson arrivals with no cap
#   FOLIO_BIN [build/release/folio]   LLAMA_SERVER [bench/.work/llama.cpp-build/bin/llama-server]
#   FOLIO_ARGS [""]  extra `folio serve` flags, e.g. "--activation-bits 8"
#   LLAMA_FA [probe] on|off for llama-server; LLAMA_CPP_FLAVOR [native] (bench/llama_env.sh)
# Results (JSON per run, server logs, summary.md) go to bench/.work/results/serve-<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-models/SmolLM2-135M-Instruct.Q4_1.gguf}
rounds=${2:-3}
slots=${SLOTS:-8}
threads=${THREADS:-2}
prompts=${PROMPTS:-64}
in_len=${IN:-128}
out_len=${OUT:-128}
rates=${RATES:-inf 1}
folio=${FOLIO_BIN:-build/release/folio}
source bench/llama_env.sh
source bench/wait_health.sh
llama=${LLAMA_SERVER:-$llama_bin/llama-server}
py=.venv/bin/python
[[ -x $py ]] || py=python3

[[ -f $model ]] || { echo "compare_serve: no model $model (run scripts/setup)" >&2; exit 1; }
[[ -x $folio ]] || scripts/setup
[[ -x $llama ]] || LLAMA_CPP_EXTRA=1 llama_need llama-server llama-bench
out=bench/.work/results/serve-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
ctx_per_seq=$((in_len + out_len + 64))

log() { printf '[compare_serve] %s\n' "$*" >&2; }

free_port() {
  "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Flash attention: llama-server's faster setting on this machine, unless LLAMA_FA=on|off says.
# Serving is decode-bound, so a short llama-bench probe (-fa 0,1) picks the setting with the
# higher tg; it is printed with the machine header.
machine_header "$model"
if [[ -z ${LLAMA_FA:-} ]]; then
  LLAMA_FA=$("$llama_bin/llama-bench" -m "$model" -t "$threads" -p 0 -n 64 -r 3 -fa 0,1 -o json \
    2>/dev/null | "$py" -c '
import json, sys
rows = json.load(sys.stdin)
best = max(rows, key=lambda r: r["avg_ts"])
print("on" if best["flash_attn"] else "off")') || LLAMA_FA=on
  log "llama-server flash attention: $LLAMA_FA (the faster in a llama-bench tg64 probe)"
fi
fa=(-fa "$LLAMA_FA")

server_pid=
stop_server() {
  if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  server_pid=
}
trap stop_server EXIT
trap 'stop_server; exit 130' INT TERM

# start_server NAME PORT LOGFILE: starts it in the background and waits for /health.
start_server() {
  local name=$1 port=$2 logfile=$3
  if [[ $name == llama ]]; then
    "$llama" -m "$model" -t "$threads" -np "$slots" -c $((slots * ctx_per_seq)) --port "$port" \
      --host 127.0.0.1 "${fa[@]}" >"$logfile" 2>&1 &
  else
    # shellcheck disable=SC2086
    "$folio" serve "$model" --host 127.0.0.1 --port "$port" --threads "$threads" \
      --max-num-seqs "$slots" --max-model-len "$ctx_per_seq" ${FOLIO_ARGS:-} >"$logfile" 2>&1 &
  fi
  server_pid=$!
  wait_health "$port" "$server_pid" "$logfile" || { log "$name did not start"; exit 1; }
}

run_load() {  # run_load NAME PORT ROUND
  local name=$1 port=$2 round=$3 rate conc
  for rate in $rates; do
    conc=()
    [[ $rate == inf ]] && conc=(--max-concurrency "$slots")
    log "round $round: $name, request rate $rate ${conc[*]}"
    "$folio" bench serve --base-url "http://127.0.0.1:$port" --num-prompts "$prompts" \
      --random-input-len "$in_len" --random-output-len "$out_len" --random-range-ratio 0 \
      --seed 0 --request-rate "$rate" "${conc[@]}" --disable-progress \
      --result-filename "$out/$name.rate$rate.round$round.json" >"$out/$name.rate$rate.round$round.txt"
    grep -E 'Successful|Failed|Output token throughput' "$out/$name.rate$rate.round$round.txt" \
      | sed 's/^/    /' >&2
  done
}

log "model $model; $slots slots, $threads threads, $prompts prompts of $in_len -> $out_len tokens;"\
" rates: $rates; $rounds round(s); results in $out"
for r in $(seq 1 "$rounds"); do
  order=(llama folio)
  (( r % 2 == 0 )) && order=(folio llama)
  for name in "${order[@]}"; do
    port=$(free_port)
    start_server "$name" "$port" "$out/$name.round$r.log"
    run_load "$name" "$port" "$r"
    stop_server
  done
done

"$py" - "$out" "$rounds" "$rates" "$model" "$slots" "$threads" "$prompts" "$in_len" "$out_len" \
  <<'PY' | tee "$out/summary.md"
import json, statistics, sys
out, rounds, rates, model, slots, threads, prompts, n_in, n_out = sys.argv[1:]
rounds = int(rounds)
cols = [("output tok/s", "output_throughput", "{:.1f}"), ("req/s", "request_throughput", "{:.3f}"),
        ("TTFT med ms", "median_ttft_ms", "{:.0f}"), ("TTFT p99 ms", "p99_ttft_ms", "{:.0f}"),
        ("TPOT med ms", "median_tpot_ms", "{:.1f}"), ("ITL p99 ms", "p99_itl_ms", "{:.1f}")]
names = {"folio": "folio", "llama": "llama.cpp"}
print(f"folio serve vs llama-server: {model}, {slots} slots, {threads} threads, {prompts} prompts "
      f"{n_in} -> {n_out} tokens, median of {rounds} round(s)\n")
print("| rate | server | " + " | ".join(c[0] for c in cols) + " | completed | failed |")
print("|---" * (len(cols) + 4) + "|")
problems = []
for rate in rates.split():
    med = {}
    for s in ("folio", "llama"):
        runs = [json.load(open(f"{out}/{s}.rate{rate}.round{r}.json")) for r in range(1, rounds + 1)]
        med[s] = {k: statistics.median(x[k] for x in runs) for _, k, _ in cols}
        done = [x["completed"] for x in runs]
        failed = [x["failed"] for x in runs]
        for x in runs:
            if x["failed"] or x["completed"] != int(prompts):
                problems.append(f"{s} rate {rate}: {x['completed']} completed, {x['failed']} failed: "
                                f"{x['errors'][:2]}")
            if x["output_len_mismatches"]:
                problems.append(f"{s} rate {rate}: {x['output_len_mismatches']} requests not of "
                                f"{n_out} output tokens")
        label = f"{rate} (c={slots})" if rate == "inf" else f"{rate}/s"
        cells = [fmt.format(med[s][k]) for _, k, fmt in cols]
        print(f"| {label} | {names[s]} | " + " | ".join(cells) +
              f" | {min(done)} | {max(failed)} |")
    ratios = []
    for _, k, _ in cols:
        l = med["llama"][k]
        ratios.append(f"{med['folio'][k] / l:.2f}x" if l else "n/a")
    print(f"| | folio/llama | " + " | ".join(ratios) + " | | |")
print("\nHigher is better for tok/s and req/s; lower for the latencies.")
for p in problems:
    print(f"WARNING: {p}")
PY
log "results in $out"
