#!/usr/bin/env bash
# bench/compare_batched.sh: aggregate decode throughput with many concurrent sequences,
# folio's paged engine vs llama.cpp's llama-batched-bench, same GGUF and threads, one run.
#
#   bench/compare_batched.sh [MODEL.gguf] [THREADS] [ROUNDS]
#   env: NPL=1,8,32 (concurrent sequences)  PP=128 (prompt tokens)  TG=128 (generated tokens)
#        FOLIO_ARGS="--activation-bits 8" (extra folio flags)  LLAMA_ARGS (extra llama flags)
#        LLAMA_CPP_FLAVOR=native|noamx, or LLAMA_CPP_DIR=BUILD for a fork built by hand
#        (bench/llama_env.sh)
#
# Both report decode tokens/s over the phase where every sequence generates (llama's S_TG:
# npl * TG / t_tg; folio's decode t/s after every sequence has its first token). The two
# programs alternate for ROUNDS rounds; llama.cpp runs with flash attention off and on in every
# round and, per sequence count, the setting with the higher median is its figure (printed).
# The script prints the CPU and the ISA levels both use, each round's ratio and the median.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-models/SmolLM2-135M-Instruct.Q4_1.gguf}
threads=${2:-2}
rounds=${3:-3}
npl=${NPL:-1,8,32}
pp=${PP:-128}
tg=${TG:-128}
source bench/llama_env.sh
llama=$llama_bin/llama-batched-bench
[[ -x build/release/folio ]] || scripts/setup
llama_need llama-batched-bench
max_npl=$(tr ',' '\n' <<<"$npl" | sort -n | tail -1)
ctx=$((max_npl * (pp + tg)))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
machine_header "$model"
for r in $(seq 1 "$rounds"); do
  echo "[compare_batched] round $r/$rounds: folio ${FOLIO_ARGS:-}" >&2
  # shellcheck disable=SC2086
  build/release/folio bench throughput -m "$model" -t "$threads" --modes '' \
    --decode-concurrency "$npl" --decode-input "$pp" --decode-output "$tg" \
    --max-model-len $((pp + tg)) --json ${FOLIO_ARGS:-} > "$tmp/folio.$r.out"
  for fa in off on; do
    echo "[compare_batched] round $r/$rounds: llama-batched-bench -fa $fa ${LLAMA_ARGS:-}" >&2
    # shellcheck disable=SC2086
    "$llama" -m "$model" -t "$threads" -tb "$threads" -c "$ctx" -b 2048 -ub 512 \
      -npp "$pp" -ntg "$tg" -npl "$npl" -fa "$fa" ${LLAMA_ARGS:-} --output-format jsonl \
      > "$tmp/llama.$r.$fa.jsonl" 2>/dev/null
  done
done
.venv/bin/python - "$tmp" "$rounds" "$model" "$threads" "$npl" <<'PY'
import json, os, statistics, sys
tmp, rounds, model, threads, npl = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
peer = os.environ.get("llama_name", "llama.cpp")
levels = [int(x) for x in npl.split(",")]

def folio(path):
    text = open(path).read()
    report = json.loads(text[text.index("\n{") + 1:] if not text.startswith("{") else text)
    return {int(k): v["decode_tokens_per_s"] for k, v in report["decode"].items()}

def llama(path):
    out = {}
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            row = json.loads(line)
            out[int(row["pl"])] = row["speed_tg"]
    return out

runs = [(folio(f"{tmp}/folio.{r}.out"),
         {fa: llama(f"{tmp}/llama.{r}.{fa}.jsonl") for fa in ("off", "on")})
        for r in range(1, rounds + 1)]
best = {}
for n in levels:
    med = {fa: statistics.median(l[fa][n] for _, l in runs) for fa in ("off", "on")}
    best[n] = max(med, key=med.get)
    print(f"{peer} at {n} sequences: best -fa {best[n]} "
          f"(medians off {med['off']:.1f}, on {med['on']:.1f} t/s)")
print(f"model {model}, {threads} threads, sequences {levels}")
print(f"{'round':>5} {'seqs':>5} {'folio t/s':>10} {peer + ' t/s':>17} {'ratio':>6}")
ratios = {}
for r, (f, l) in enumerate(runs, 1):
    for n in levels:
        ratio = f[n] / l[best[n]][n]
        ratios.setdefault(n, []).append(ratio)
        print(f"{r:>5} {n:>5} {f[n]:>10.1f} {l[best[n]][n]:>17.1f} {ratio:>6.2f}")
for n, v in ratios.items():
    print(f"median ratio at {n} sequences: {statistics.median(v):.2f}x")
PY
