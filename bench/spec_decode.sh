#!/usr/bin/env bash
# bench/spec_decode.sh -- speculative decoding, folio against plain decoding and against llama.cpp,
# on the same target (and draft) model, prompts and threads, in one run: n-gram, draft model (DRAFT,
# as llama-speculative's -md) and layer_skip.
#
#   1. folio bench spec (plain vs each folio method, alternating, medians of REPS runs): single-
#      stream decode tokens/s by prompt category (copy-heavy / open chat), acceptance by
#      position, aggregate throughput at CONCURRENCY.
#   2. llama.cpp on the prompts folio rendered (its chat template, special tokens parsed):
#      llama-lookup (its prompt lookup, the n-gram method) and llama-speculative (its draft-model
#      speculation with DRAFT), each with flash attention on and off (the faster is kept), REPS
#      runs per prompt; medians per category of its "decoded ... speed" (tokens/s after the
#      prompt), the same measure as folio's.
#   3. One table: method, category, folio t/s, llama.cpp t/s, ratio.
#
# Needs bench/llama_cpp.sh (builds llama-lookup, llama-speculative) and bench/quantize_models.sh
# (makes the Q8_0 target from the shipped Q4_1 file). Knobs: TARGET, DRAFT, K (drafts per step),
# THREADS, REPS, CONCURRENCY ('' skips), METHODS (folio's JSON configs, ';'-separated).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${LLAMA_CPP_BIN:-$ROOT/bench/.work/llama.cpp-build/bin}"
FOLIO="${FOLIO:-$ROOT/build/release/folio}"
TARGET="${TARGET:-$ROOT/models/SmolLM2-135M-Instruct.rq-Q8_0.gguf}"
DRAFT="${DRAFT:-$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf}"
K="${K:-4}"
THREADS="${THREADS:-2}"
REPS="${REPS:-3}"
CONCURRENCY="${CONCURRENCY-8,32}"
DATASET="${DATASET:-$ROOT/bench/spec_prompts.jsonl}"
# (A default with braces cannot sit inside ${METHODS:-...}: the first '}' would end the expansion.)
DEFAULT_METHODS="{\"method\": \"ngram\", \"num_speculative_tokens\": $K, \"prompt_lookup_min\": 2, \"prompt_lookup_max\": 4}"
DEFAULT_METHODS+=";{\"method\": \"ngram\", \"num_speculative_tokens\": $K, \"prompt_lookup_min\": 1, \"prompt_lookup_max\": 4}"
DEFAULT_METHODS+=";{\"method\": \"draft_model\", \"model\": \"$DRAFT\", \"num_speculative_tokens\": $K}"
DEFAULT_METHODS+=";{\"method\": \"layer_skip\", \"num_speculative_tokens\": $K}"
METHODS="${METHODS:-$DEFAULT_METHODS}"
PY="${PY:-$ROOT/.venv/bin/python}"
[[ -x "$PY" ]] || PY=python3
log() { printf '[spec_decode.sh] %s\n' "$*" >&2; }
for f in "$FOLIO" "$BIN/llama-lookup" "$BIN/llama-speculative"; do
    [[ -x "$f" ]] || { log "missing $f (cmake --build build/release; bench/llama_cpp.sh)"; exit 1; }
done
for f in "$TARGET" "$DRAFT"; do
    [[ -f "$f" ]] || { log "missing $f (scripts/setup; bench/quantize_models.sh)"; exit 1; }
done
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "target: $(basename "$TARGET")  draft: $(basename "$DRAFT")  K=$K  threads=$THREADS  reps=$REPS"
mkdir -p "$WORK/prompts"
"$FOLIO" bench spec -m "$TARGET" --dataset "$DATASET" --write-prompts "$WORK/prompts" \
    --speculative-config '{"method": "ngram", "num_speculative_tokens": 1}' >/dev/null 2>&1

IFS=';' read -r -a configs <<<"$METHODS"
for cfg in "${configs[@]}"; do
    log "folio: $cfg"
    "$FOLIO" bench spec -m "$TARGET" --dataset "$DATASET" -r "$REPS" -t "$THREADS" \
        --concurrency "$CONCURRENCY" --speculative-config "$cfg" --json \
        2>"$WORK/folio.err" | tee "$WORK/folio.out" | grep -v '^{' ||
        { log "folio bench spec failed:"; tail -n 5 "$WORK/folio.err" >&2; exit 1; }
    tail -n 1 "$WORK/folio.out" >>"$WORK/folio.jsonl"
done

# llama.cpp: tool, prompt file, fa -> "decoded" tokens/s
llama_rate() {
    local tool="$1" prompt="$2" fa="$3" extra=()
    [[ "$tool" == llama-speculative ]] && extra=(-md "$DRAFT")
    "$BIN/$tool" -m "$TARGET" "${extra[@]}" -f "$prompt" -n 128 -t "$THREADS" --temp 0 \
        --spec-draft-n-max "$K" -c 2048 -fa "$fa" 2>&1 |
        sed -n 's/.*decoded *[0-9]* tokens in .* speed: *\([0-9.]*\) t\/s.*/\1/p' | tail -n 1
}
for tool in llama-lookup llama-speculative; do
    for prompt in "$WORK"/prompts/*.txt; do
        cat="$(basename "$prompt" .txt)"
        cat="${cat#*.}"
        for fa in on off; do
            for ((r = 0; r < REPS; r++)); do
                log "$tool $(basename "$prompt") fa=$fa run $((r + 1))/$REPS"
                echo "$tool $cat $fa $(llama_rate "$tool" "$prompt" "$fa")" >>"$WORK/llama.txt"
            done
        done
    done
done

"$PY" - "$WORK/folio.jsonl" "$WORK/llama.txt" "$DRAFT" <<'PYEOF'
import json, statistics, sys
from collections import defaultdict
folio = [json.loads(l) for l in open(sys.argv[1])]
rates = defaultdict(list)
for line in open(sys.argv[2]):
    tool, cat, fa, rate = (line.split() + [""])[:4]
    if rate:
        rates[(tool, cat, fa)].append(float(rate))
def llama(tool, cat):
    best = [statistics.median(rates[(tool, cat, fa)]) for fa in ("on", "off") if rates[(tool, cat, fa)]]
    return max(best) if best else 0.0
print("\n== folio vs llama.cpp, single-stream decode tokens/s (medians; llama.cpp: faster of fa on/off) ==")
print(f"{'folio method':<34} {'category':<8} {'folio':>8} {'folio plain':>12} {'llama.cpp':>22} {'ratio':>7}")
for f in folio:
    name = f["speculative"].split(" max_batch_rows")[0].replace(" model=" + sys.argv[3], "")
    for cat, v in f["single"].items():
        for tool in ("llama-lookup", "llama-speculative"):
            l = llama(tool, cat)
            print(f"{name:<34} {cat:<8} {v['spec_tps']:8.1f} {v['plain_tps']:12.1f} {tool:>13} {l:8.1f} "
                  f"{(v['spec_tps'] / l if l else 0):6.2f}x")
PYEOF
