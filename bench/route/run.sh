#!/usr/bin/env bash
# bench/route/run.sh: the routing trade-off with the two models folio ships, in one run.
#
#   bench/route/run.sh [PER_KIND]
#
# 1. make_set.py: PER_KIND [20] seeded prompts per kind (seed 0);
# 2. one `folio serve --config bench/route/serve.json` holding SmolLM2-135M (small) and Gemma 3
#    270M (large, with a question/answer template: the shipped Gemma is the base model), and
#    the virtual models `auto` (score routing, default policy) and `auto-cascade` (the same
#    plus a cascade);
# 3. evaluate.py sends the set to smollm2, gemma3, auto and auto-cascade (greedy);
# 4. tradeoff.py prints accuracy vs the share of large-model calls beside the random-router
#    diagonal and the oracle;
# 5. `folio bench serve` at one offered load (RATE [2] req/s) with the same prompts, to
#    `auto` and to `gemma3` (always-large): throughput and p99 latency.
# Environment: THREADS [all cores], FOLIO_BIN [build/release/folio], RATE [2].
# Results go to bench/.work/results/route-<time>/.
set -euo pipefail
cd "$(dirname "$0")/../.."
per_kind=${1:-20}
folio=${FOLIO_BIN:-build/release/folio}
threads=${THREADS:-$(nproc)}
rate=${RATE:-2}
py=.venv/bin/python
out=bench/.work/results/route-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
cpu=$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)
echo "routing trade-off: $cpu, $(nproc) cores, threads $threads; results in $out" >&2
$py bench/route/make_set.py --per-kind "$per_kind" --seed 0 --out "$out/set.jsonl"
port=18631
"$folio" serve --config bench/route/serve.json --port $port -t "$threads" \
  --kv-cache-memory 1GiB >"$out/server.log" 2>&1 &
server=$!
trap 'kill -INT $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
  sleep 0.1
done
stops=(--stop $'\nQuestion:' --stop $'\nAnswer:')
$py bench/route/evaluate.py --url "http://127.0.0.1:$port" --models smollm2,gemma3,auto,auto-cascade \
  --set "$out/set.jsonl" --out "$out/results.jsonl" "${stops[@]}" 2>"$out/evaluate.log"
{
  echo "CPU: $cpu; prompts: $per_kind per kind x 6 kinds (seed 0); greedy"
  echo
  $py bench/route/tradeoff.py "$out/results.jsonl" --small smollm2 --large gemma3 \
    --routers auto,auto-cascade
} | tee "$out/tradeoff.md"
# The same prompts as a serving load (completions with the chat text as prompt).
$py - "$out/set.jsonl" "$out/load.jsonl" <<'PY'
import json, sys
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as o:
    for line in f:
        r = json.loads(line)
        o.write(json.dumps({"prompt": r["messages"][-1]["content"], "max_tokens": r["max_tokens"]}) + "\n")
PY
n=$(wc -l <"$out/load.jsonl")
for m in auto gemma3 smollm2; do
  "$folio" bench serve --port $port --model "$m" --dataset-path "$out/load.jsonl" \
    --num-prompts "$n" --request-rate "$rate" --disable-progress --json \
    >"$out/serve-$m.json" 2>/dev/null
done
$py - "$out" "$rate" <<'PY'
import json, sys
out, rate = sys.argv[1], sys.argv[2]
print(f"\n`folio bench serve` at {rate} req/s, the set's prompts (completions):\n")
print("| model | req/s | output tok/s | mean e2e (ms) | p99 e2e (ms) | p99 TTFT (ms) |")
print("|---|---|---|---|---|---|")
for m in ("auto", "gemma3", "smollm2"):
    j = json.load(open(f"{out}/serve-{m}.json"))
    print(f"| {m} | {j['request_throughput']:.2f} | {j['output_throughput']:.1f} | "
          f"{j['mean_e2el_ms']:.0f} | {j['p99_e2el_ms']:.0f} | {j['p99_ttft_ms']:.0f} |")
PY
