#!/usr/bin/env bash
# bench/overload.sh: does an overloaded `folio serve` shed load instead of slowing everyone down?
#
#   bench/overload.sh [ROUNDS]
#
# 1. Saturation: `folio bench serve` with all requests at once (--max-concurrency MAX_SEQS)
#    measures the requests/s the server sustains (R).
# 2. Offered 0.5 R and 2 R (Poisson arrivals, PROMPTS requests each), to a server with an
#    unbounded waiting queue and to one started with --max-waiting-requests WAITING.
#    For each: requests completed and refused, p50/p99 TTFT of the completed ones, and, timed
#    by curl probes sent during the 2 R run, how fast a refusal comes back (status, seconds).
# Medians over ROUNDS; everything in one run, so the ratios compare like with like.
#
# Environment: THREADS [all cores] MAX_SEQS [8] WAITING [MAX_SEQS] PROMPTS [96] IN [256]
#   OUT [32] FOLIO_BIN [build/release/folio]
# Results go to bench/.work/results/overload-<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/idle.sh
source bench/wait_health.sh
rounds=${1:-3}
threads=${THREADS:-$(nproc)}
max_seqs=${MAX_SEQS:-8}
waiting=${WAITING:-$max_seqs}
prompts=${PROMPTS:-96}
in_len=${IN:-256}
out_len=${OUT:-32}
folio=${FOLIO_BIN:-build/release/folio}
model=models/SmolLM2-135M-Instruct.Q4_1.gguf
out=bench/.work/results/overload-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
cpu=$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)
echo "overload: $cpu, $(nproc) cores, threads $threads, max-num-seqs $max_seqs; results in $out" >&2
echo "idle before: $(wait_for_idle)% busy" >&2

port=18631
pid=
stop_server() {
  [[ -n $pid ]] && { kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  pid=
}
trap stop_server EXIT
start_server() {  # TAG [flags...]
  local tag=$1
  shift
  "$folio" serve "$model" --served-model-name m --port "$port" --max-num-seqs "$max_seqs" \
    --max-model-len 1024 --kv-cache-memory 512MiB -t "$threads" "$@" >"$out/server-$tag.log" 2>&1 &
  pid=$!
  wait_health "$port" "$pid" "$out/server-$tag.log"
}
# Each run draws its own prompts (--seed): a run repeating the one before would find some of
# them in the prefix cache, and how many depends on how many the server refused (LRU).
runs=0
bench() {  # FILE RATE [flags...]
  local file=$1 rate=$2
  shift 2
  runs=$((runs + 1))
  "$folio" bench serve --port "$port" --model m --num-prompts "$prompts" --seed "$runs" \
    --random-input-len "$in_len" --random-output-len "$out_len" --request-rate "$rate" \
    --disable-progress --json "$@" 2>/dev/null >"$file"
}
probe() {  # FILE: 20 requests a second apart, each "status seconds"
  local body
  body=$(printf '{"model":"m","prompt":"hi","max_tokens":%d}' "$out_len")
  sleep 2
  for _ in $(seq 1 20); do
    curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -H 'Content-Type: application/json' \
      -d "$body" "http://127.0.0.1:$port/v1/completions" >>"$1" || true
    sleep 0.5
  done
}

for r in $(seq 1 "$rounds"); do
  start_server sat
  bench "$out/sat-$r.json" inf --max-concurrency "$max_seqs"
  stop_server
  rate=$(python3 -c "import json;print(json.load(open('$out/sat-$r.json'))['request_throughput'])")
  echo "round $r: saturation $rate req/s" >&2
  for setup in unbounded bounded; do
    flags=()
    [[ $setup == bounded ]] && flags=(--max-waiting-requests "$waiting")
    start_server "$setup" "${flags[@]}"
    bench "$out/$setup-half-$r.json" "$(python3 -c "print($rate*0.5)")"
    probe "$out/$setup-probe-$r.txt" &
    probe_pid=$!
    bench "$out/$setup-double-$r.json" "$(python3 -c "print($rate*2)")"
    wait "$probe_pid" || true
    stop_server
  done
done

python3 - "$out" "$rounds" "$cpu" "$waiting" <<'PY'
import json, statistics, sys
out, rounds, cpu, waiting = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def load(name):
    return [json.load(open(f"{out}/{name}-{r}.json")) for r in range(1, rounds + 1)]
med = lambda xs: statistics.median(xs)
sat = load("sat")
print(f"CPU: {cpu}; saturation {med([s['request_throughput'] for s in sat]):.2f} req/s "
      f"(median of {rounds})")
print(f"{'setup':<34}{'offered':>8}{'done':>7}{'refused':>9}{'p50 TTFT ms':>13}{'p99 TTFT ms':>13}")
for setup, label in [("unbounded", "unbounded queue"),
                     ("bounded", f"--max-waiting-requests {waiting}")]:
    for load_name, offered in [("half", "0.5 R"), ("double", "2 R")]:
        rs = load(f"{setup}-{load_name}")
        print(f"{label:<34}{offered:>8}{med([x['completed'] for x in rs]):>7.0f}"
              f"{med([x['failed'] for x in rs]):>9.0f}{med([x['median_ttft_ms'] for x in rs]):>13.0f}"
              f"{med([x['p99_ttft_ms'] for x in rs]):>13.0f}")
    probes = []
    for r in range(1, rounds + 1):
        try:
            probes += [l.split() for l in open(f"{out}/{setup}-probe-{r}.txt") if l.strip()]
        except FileNotFoundError:
            pass
    by = {}
    for code, t in probes:
        by.setdefault(code, []).append(float(t))
    print("  probes during 2 R: " + ", ".join(
        f"{code}: {len(ts)} (median {1000 * med(ts):.0f} ms)" for code, ts in sorted(by.items())))
PY
