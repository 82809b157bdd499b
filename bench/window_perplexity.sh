#!/usr/bin/env bash
# bench/window_perplexity.sh: what the sink + window attention policy
# (--attention-window, docs/ARCHITECTURE.md) is for, on one long document.
#
#   bash bench/window_perplexity.sh [MODEL] [LEN] [WINDOW] [THREADS]
#
# Perplexity of MODEL (default: the default model) on the first LEN tokens
# (default 20480) of the evaluation text (scripts/corpora), one chunk, the
# second half scored (llama-perplexity's protocol), under:
#   full       full attention over the whole chunk (past the model's context
#              length when LEN exceeds it)
#   window     --attention-window WINDOW with 4 sinks
#   no-sinks   --attention-window WINDOW with 0 sinks (StreamingLLM's
#              ablation: why the sinks are kept)
# and, over the same text, plain truncation: chunks of WINDOW tokens each
# scored on its second half (every scored token sees WINDOW/2 .. WINDOW-1
# tokens), and full attention at the model's trained context.
# Prints one line per run with PPL, scored tokens and seconds, and the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-models/SmolLM2-135M-Instruct.Q4_1.gguf}
len=${2:-20480}
window=${3:-2048}
threads=${4:-2}
folio=${FOLIO_BIN:-build/release/folio}
scripts/corpora
text=.cache/corpora/evaluation.txt
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $threads threads; model $model; $(git rev-parse --short HEAD)"
ctx_train=$("$folio" info "$model" --json 2>/dev/null | .venv/bin/python -c \
  'import json,sys; print(json.load(sys.stdin)["model"]["context_length"])' 2>/dev/null || echo 8192)
run() {  # name, then folio perplexity flags
  local name=$1; shift
  local out
  out=$("$folio" perplexity -m "$model" -f "$text" -t "$threads" --kv-cache-dtype f16 --json "$@" \
    2>/dev/null)
  echo "$out" | .venv/bin/python -c '
import json, sys
r = json.load(sys.stdin)
print("%-30s ctx %6d x %2d  PPL %9.4f +/- %.4f  scored %6d  %7.1f s" % (
    sys.argv[1], r["ctx"], r["chunks"], r["ppl"], r["ppl_uncertainty"], r["scored_tokens"],
    r["seconds"]))' "$name"
}
run "window $window + 4 sinks" --ctx-size "$len" --chunks 1 --attention-window "$window"
run "window $window, no sinks" --ctx-size "$len" --chunks 1 --attention-window "$window" \
  --attention-sinks 0
run "truncation (chunks of $window)" --ctx-size "$window" --chunks $((len / window))
if ((len > ctx_train)); then
  run "full, trained ctx $ctx_train" --ctx-size "$ctx_train" --chunks $((len / ctx_train))
fi
run "full attention" --ctx-size "$len" --chunks 1
