#!/usr/bin/env bash
# bench/compare_llama.sh: folio vs llama.cpp on the same GGUF and thread count, in one run.
#
#   bench/compare_llama.sh [MODEL.gguf] [THREADS] [REPS] [ROUNDS]
#   env: FOLIO_ARGS="--activation-bits 8" (extra `folio bench` flags)
#
# Builds llama.cpp first if needed (bench/llama_cpp.sh, into the git-ignored bench/.work/),
# then alternates `folio bench` and `llama-bench` (pp512, tg128) for ROUNDS rounds so both see
# the same machine state, and prints each round's ratio folio / llama.cpp and their median.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-models/SmolLM2-135M-Instruct.Q4_1.gguf}
threads=${2:-2}
reps=${3:-3}
rounds=${4:-3}
llama=bench/.work/llama.cpp-build/bin/llama-bench
[[ -x build/release/folio ]] || scripts/setup
[[ -x $llama ]] || bench/llama_cpp.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in $(seq 1 "$rounds"); do
  echo "[compare] round $r/$rounds: folio" >&2
  # shellcheck disable=SC2086
  build/release/folio bench -m "$model" -p 512 -n 128 -t "$threads" -r "$reps" --json ${FOLIO_ARGS:-} \
    > "$tmp/folio.$r.json"
  echo "[compare] round $r/$rounds: llama.cpp" >&2
  "$llama" -m "$model" -t "$threads" -p 512 -n 128 -r "$reps" -o json > "$tmp/llama.$r.json" 2>/dev/null
done
.venv/bin/python - "$tmp" "$rounds" "$model" "$threads" <<'PY'
import json, statistics, sys
tmp, rounds, model, threads = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]

def folio(path):
    d = json.load(open(path))
    rows = d if isinstance(d, list) else d.get("results", d.get("tests", []))
    out = {}
    for row in rows:
        name = row.get("test") or row.get("name")
        out[name] = row.get("avg_ts") or row.get("tokens_per_s") or row.get("mean")
    return out

def llama(path):
    out = {}
    for row in json.load(open(path)):
        name = f"pp{row['n_prompt']}" if row["n_prompt"] else f"tg{row['n_gen']}"
        out[name] = row["avg_ts"]
    return out

print(f"model {model}, {threads} threads, folio flags: {__import__('os').environ.get('FOLIO_ARGS', '') or 'defaults'}")
print(f"{'round':>5} {'test':>6} {'folio t/s':>10} {'llama.cpp t/s':>14} {'ratio':>6}")
ratios = {}
for r in range(1, rounds + 1):
    f, l = folio(f"{tmp}/folio.{r}.json"), llama(f"{tmp}/llama.{r}.json")
    for t in ("pp512", "tg128"):
        ratio = f[t] / l[t]
        ratios.setdefault(t, []).append(ratio)
        print(f"{r:>5} {t:>6} {f[t]:>10.1f} {l[t]:>14.1f} {ratio:>6.2f}")
for t, v in ratios.items():
    print(f"median ratio {t}: {statistics.median(v):.2f}x")
PY
