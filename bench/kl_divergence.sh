#!/usr/bin/env bash
# bench/kl_divergence.sh: folio's KL divergence beside llama-perplexity's, each program reading
# the base log-probability file the other wrote (llama.cpp's format, both directions).
#
#   bash bench/kl_divergence.sh [CHUNKS] [THREADS]
#
# Base: models/SmolLM2-135M-Instruct.Q4_1.gguf; candidate: its requantization to Q4_0
# (bench/quantize_models.sh makes it; lossy twice, which is fine for comparing the tools).
# Text: the evaluation corpus (scripts/corpora), ctx 512, the first CHUNKS chunks (default 10).
#   1. folio and llama-perplexity each write a base file from the base model
#      (--kl-divergence-base FILE);
#   2. each program reads each file (--kl-divergence-base FILE --kl-divergence) with the base
#      model itself and with the candidate.
# Prints, per (file writer, reader, model): mean KLD +/- uncertainty, 99 % KLD, same top, and
# the reader's PPL(Q) and PPL(base). Expect: a program reading its own file with the base model
# ~0 KLD and 100 % same top (compression noise only); reading the other's file with the base
# model, the two programs' numerical difference; the candidate, the same numbers from both
# readers up to that difference. folio runs with --kv-cache-dtype f16, llama.cpp's default.
set -euo pipefail
cd "$(dirname "$0")/.."
chunks=${1:-10}
threads=${2:-2}
folio=${FOLIO_BIN:-build/release/folio}
llama=bench/.work/llama.cpp-build/bin/llama-perplexity
base=models/SmolLM2-135M-Instruct.Q4_1.gguf
cand=models/SmolLM2-135M-Instruct.rq-Q4_0.gguf
[[ -x $llama ]] || { echo "llama-perplexity not built: bash bench/llama_cpp.sh" >&2; exit 1; }
[[ -f $cand ]] || QUANT_TYPES=Q4_0 bench/quantize_models.sh >/dev/null
scripts/corpora
text=.cache/corpora/evaluation.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $threads threads; folio $(git rev-parse --short HEAD)," \
  "llama.cpp $(sed -n 's/^llama.cpp commit \([0-9a-f]\{12\}\).*/\1/p' bench/.work/llama.cpp-build/VERSION.txt 2>/dev/null)"
echo "text $text, ctx 512, $chunks chunks; base $(basename $base), candidate $(basename $cand)"

"$folio" perplexity -m "$base" -f "$text" -c 512 --chunks "$chunks" -t "$threads" \
  --kv-cache-dtype f16 --kl-divergence-base "$work/folio.kld" >"$work/folio.ppl" 2>/dev/null
"$llama" -m "$base" -f "$text" -c 512 -b 512 --chunks "$chunks" -t "$threads" \
  --kl-divergence-base "$work/llama.kld" >"$work/llama.ppl" 2>&1
ppl_of() { sed -n 's/.*Final estimate: PPL = \([0-9.]*\) +\/- \([0-9.]*\).*/\1 +\/- \2/p' "$1" | tail -1; }
echo "base PPL while writing: folio $(ppl_of "$work/folio.ppl"), llama.cpp $(ppl_of "$work/llama.ppl")"
cmp -s <(head -c 20 "$work/folio.kld") <(head -c 20 "$work/llama.kld") &&
  echo "headers: identical (magic, n_ctx, n_vocab, n_chunk)" || echo "headers: DIFFER"
tok_bytes=$((20 + 4 * 512 * chunks))
cmp -s <(head -c $tok_bytes "$work/folio.kld") <(head -c $tok_bytes "$work/llama.kld") &&
  echo "tokens: identical" || echo "tokens: DIFFER"
echo "file sizes: folio $(stat -c %s "$work/folio.kld"), llama.cpp $(stat -c %s "$work/llama.kld")"

# The statistics both programs print, by the labels they share.
stats() {
  .venv/bin/python - "$1" <<'PY'
import re, sys
t = open(sys.argv[1], encoding="utf-8", errors="replace").read()
def num(label, unc=False):
    m = re.search(re.escape(label) + r"\s*:?\s*(-?[0-9.]+)(?:\s*±\s*([0-9.]+))?", t)
    if not m:
        return "?"
    return f"{m.group(1)} ± {m.group(2)}" if unc and m.group(2) else m.group(1)
print(f"{num('Mean    KLD:', True):>22} {num('99.0%   KLD:'):>9} {num('Same top p:', True):>16} %"
      f" {num('Mean PPL(Q)', True).split(' ')[0]:>10} {num('Mean PPL(base)', True).split(' ')[0]:>10}")
PY
}
echo
printf '%-9s %-9s %-8s %22s %9s %18s %10s %10s\n' file reader model "mean KLD" "99% KLD" \
  "same top" "PPL(Q)" "PPL(base)"
for writer in folio llama; do
  for reader in folio llama; do
    for which in base cand; do
      m=$base; [[ $which == cand ]] && m=$cand
      out=$work/$writer.$reader.$which.out
      if [[ $reader == folio ]]; then
        "$folio" perplexity -m "$m" -t "$threads" --kv-cache-dtype f16 \
          --kl-divergence-base "$work/$writer.kld" --kl-divergence >"$out" 2>/dev/null
      else
        "$llama" -m "$m" -c 512 -b 512 -t "$threads" \
          --kl-divergence-base "$work/$writer.kld" --kl-divergence >"$out" 2>&1
      fi
      label=$([[ $which == base ]] && echo "Q4_1" || echo "rq-Q4_0")
      printf '%-9s %-9s %-8s %s\n' "${writer/llama/llama.cpp}" "${reader/llama/llama.cpp}" "$label" \
        "$(stats "$out")"
    done
  done
done
