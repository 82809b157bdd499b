#!/usr/bin/env bash
# bench/compare_llama.sh: folio vs llama.cpp on the same GGUF and thread count, in one run,
# against llama.cpp's best configuration on the machine at hand.
#
#   bench/compare_llama.sh [MODEL.gguf] [THREADS] [REPS] [ROUNDS]
#   env: FOLIO_ARGS="--activation-bits 8" (extra `folio bench` flags)
#        LLAMA_ARGS="--repack 0" (extra llama-bench flags)  LLAMA_CPP_FLAVOR=native|noamx
#        LLAMA_CPP_DIR=BUILD (a fork built by hand, e.g. ik_llama.cpp with LLAMA_ARGS="-rtr 1";
#        see bench/llama_env.sh)
#
# Builds llama.cpp first if needed (bench/llama_cpp.sh, into the git-ignored bench/.work/),
# then alternates `folio bench` and `llama-bench` (pp512, tg128) for ROUNDS rounds so both see
# the same machine state. llama-bench runs with flash attention off and on (-fa 0,1) in every
# round, its repacked weights on (its default); per test the setting with the higher median is
# llama.cpp's figure, and the script says which. It prints the CPU, the ISA levels both use,
# each round's ratio folio / llama.cpp and their median.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-models/SmolLM2-135M-Instruct.Q4_1.gguf}
threads=${2:-2}
reps=${3:-3}
rounds=${4:-3}
source bench/llama_env.sh
[[ -x build/release/folio ]] || scripts/setup
llama_need llama-bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
machine_header "$model"
for r in $(seq 1 "$rounds"); do
  echo "[compare] round $r/$rounds: folio" >&2
  # shellcheck disable=SC2086
  build/release/folio bench -m "$model" -p 512 -n 128 -t "$threads" -r "$reps" --json ${FOLIO_ARGS:-} \
    > "$tmp/folio.$r.json"
  echo "[compare] round $r/$rounds: llama.cpp -fa 0,1 ${LLAMA_ARGS:-}" >&2
  # shellcheck disable=SC2086
  if ! "$llama_bin/llama-bench" -m "$model" -t "$threads" -p 512 -n 128 -r "$reps" -fa 0,1 \
      ${LLAMA_ARGS:-} -o json > "$tmp/llama.$r.json" 2> "$tmp/llama.$r.err"; then
    tail -n 5 "$tmp/llama.$r.err" >&2
    echo "[compare] llama-bench failed on $model (flavor $llama_flavor${LLAMA_ARGS:+, $LLAMA_ARGS});" \
      "where its AMX path crashes, LLAMA_CPP_FLAVOR=noamx builds and runs its best working one" >&2
    exit 1
  fi
done
.venv/bin/python - "$tmp" "$rounds" "$model" "$threads" <<'PY'
import json, os, statistics, sys
tmp, rounds, model, threads = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
peer = os.environ.get("llama_name", "llama.cpp")

def folio(path):
    d = json.load(open(path))
    rows = d if isinstance(d, list) else d.get("results", d.get("tests", []))
    out = {}
    for row in rows:
        name = row.get("test") or row.get("name")
        out[name] = row.get("avg_ts") or row.get("tokens_per_s") or row.get("mean")
    return out

def llama(path):  # {test: {fa: t/s}}
    out = {}
    for row in json.load(open(path)):
        name = f"pp{row['n_prompt']}" if row["n_prompt"] else f"tg{row['n_gen']}"
        out.setdefault(name, {})[int(row["flash_attn"])] = row["avg_ts"]
    return out

runs = [(folio(f"{tmp}/folio.{r}.json"), llama(f"{tmp}/llama.{r}.json")) for r in range(1, rounds + 1)]
best = {}
for t in ("pp512", "tg128"):
    med = {fa: statistics.median(l[t][fa] for _, l in runs) for fa in runs[0][1][t]}
    best[t] = max(med, key=med.get)
    others = ", ".join(f"-fa {fa}: {v:.1f} t/s" for fa, v in sorted(med.items()))
    print(f"{peer} {t}: best -fa {best[t]} (medians {others})")
print(f"model {model}, {threads} threads, folio flags: {os.environ.get('FOLIO_ARGS', '') or 'defaults'}"
      f", {peer} flags: {os.environ.get('LLAMA_ARGS', '') or 'defaults'}")
print(f"{'round':>5} {'test':>6} {'folio t/s':>10} {peer + ' t/s':>17} {'ratio':>6}")
ratios = {}
for r, (f, l) in enumerate(runs, 1):
    for t in ("pp512", "tg128"):
        ratio = f[t] / l[t][best[t]]
        ratios.setdefault(t, []).append(ratio)
        print(f"{r:>5} {t:>6} {f[t]:>10.1f} {l[t][best[t]]:>17.1f} {ratio:>6.2f}")
for t, v in ratios.items():
    print(f"median ratio {t}: {statistics.median(v):.2f}x")
PY
