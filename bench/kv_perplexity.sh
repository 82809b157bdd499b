#!/usr/bin/env bash
# bench/kv_perplexity.sh: what the KV cache's element type costs in quality,
# folio beside llama.cpp on the same file, text, chunks and threads.
#
#   bash bench/kv_perplexity.sh [CHUNKS] [THREADS] [MODEL...]
#
# For each model (default: SmolLM2 Q4_1 and Gemma 3 270M Q4_K_M) the
# perplexity on the evaluation text (scripts/corpora), --ctx-size 512, the
# first CHUNKS chunks (default 40), with K/V in f16, int8 and int4 (folio
# --kv-cache-dtype), and, when bench/llama_cpp.sh has built llama-perplexity,
# llama.cpp's with -ctk/-ctv f16, q8_0 and q4_0 (flash attention on, which
# quantized V needs). Prints PPL +/- uncertainty, the change against f16 of
# the same program, and folio / llama.cpp at f16 (llama-perplexity's
# protocol is folio's: the two should agree to well under 1 %).
set -euo pipefail
cd "$(dirname "$0")/.."
chunks=${1:-40}
threads=${2:-2}
shift $(($# < 2 ? $# : 2))
models=("$@")
((${#models[@]})) ||
  models=(models/SmolLM2-135M-Instruct.Q4_1.gguf models/gemma-3-270m-q4_k_m.gguf)
folio=${FOLIO_BIN:-build/release/folio}
llama=bench/.work/llama.cpp-build/bin/llama-perplexity
scripts/corpora
text=.cache/corpora/evaluation.txt
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $threads threads; folio $(git rev-parse --short HEAD);" \
  "text $text, ctx 512, $chunks chunks"
[[ -x $llama ]] || echo "(llama-perplexity not built: bash bench/llama_cpp.sh for the llama.cpp column)"
ppl_of() { sed -n 's/.*Final estimate: PPL = \([0-9.]*\) +\/- \([0-9.]*\).*/\1 \2/p' | tail -1; }
for m in "${models[@]}"; do
  echo
  echo "$(basename "$m")"
  printf '  %-6s %-26s %-26s\n' kv folio llama.cpp
  base_f= base_l=
  for pair in f16:f16 int8:q8_0 int4:q4_0; do
    fd=${pair%%:*} ld=${pair##*:}
    read -r fp fu < <("$folio" perplexity -m "$m" -f "$text" -c 512 --chunks "$chunks" \
      -t "$threads" --kv-cache-dtype "$fd" 2>/dev/null | ppl_of)
    lp="" lu=""
    if [[ -x $llama ]]; then
      read -r lp lu < <("$llama" -m "$m" -f "$text" -c 512 -b 512 --chunks "$chunks" \
        -t "$threads" -fa on -ctk "$ld" -ctv "$ld" 2>&1 | ppl_of) || true
    fi
    [[ -n $base_f ]] || { base_f=$fp; base_l=$lp; }
    .venv/bin/python - "$fd" "$fp" "$fu" "$base_f" "$ld" "$lp" "$lu" "$base_l" <<'PY'
import sys
fd, fp, fu, bf, ld, lp, lu, bl = sys.argv[1:]
f = "%.4f +/- %.4f (%+.2f %%)" % (float(fp), float(fu), 100 * (float(fp) / float(bf) - 1))
l = ("%s %.4f +/- %.4f (%+.2f %%)" % (ld, float(lp), float(lu), 100 * (float(lp) / float(bl) - 1))
     if lp else "-")
ratio = ("  folio/llama.cpp %.4f" % (float(fp) / float(lp))) if lp else ""
print("  %-6s %-26s %s%s" % (fd, f, l, ratio))
PY
  done
done
