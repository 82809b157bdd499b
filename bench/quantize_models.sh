#!/usr/bin/env bash
# bench/quantize_models.sh -- make the SmolLM2-135M quant variants the llama.cpp comparison uses.
#
# Source: models/SmolLM2-135M-Instruct.Q4_1.gguf (the only SmolLM2 weights reachable: PyPI
# carries no F16/BF16 SmolLM2 GGUF). Requantizing from Q4_1 is lossy twice over: every variant
# inherits Q4_1's rounding and adds its own, so these files are for SPEED comparisons only, never
# for quality (perplexity) comparisons. Speed depends only on the tensor types, which match what
# a from-F16 quantization would produce.
#
# Note: SmolLM2's hidden size 576 is not a multiple of the 256-wide K-quant super-block, so
# llama-quantize falls back to a legacy type for tensors whose rows are 576 long when asked for
# Q4_K_M; the tensor-type census printed at the end shows what each file really contains.
#
# Idempotent: existing outputs are kept. Writes models/SmolLM2-135M-Instruct.rq-<TYPE>.gguf and
# models/SHA256SUMS.bench (models/ is git-ignored).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${LLAMA_CPP_BIN:-$ROOT/bench/.work/llama.cpp-build/bin}"
SRC="$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf"
read -r -a TYPES <<<"${QUANT_TYPES:-Q4_0 Q8_0 Q4_K_M}"
THREADS="${THREADS:-2}"

log() { printf '[quantize_models.sh] %s\n' "$*" >&2; }

[[ -x "$BIN/llama-quantize" ]] || { log "no $BIN/llama-quantize; run bench/llama_cpp.sh first"; exit 1; }
[[ -f "$SRC" ]] || { log "no $SRC; run scripts/setup first"; exit 1; }

outputs=()
for type in "${TYPES[@]}"; do
    out="$ROOT/models/SmolLM2-135M-Instruct.rq-$type.gguf"
    outputs+=("$out")
    if [[ -f "$out" ]]; then
        log "exists: $(basename "$out")"
        continue
    fi
    log "quantizing Q4_1 -> $type ..."
    # Write to a temporary name and rename, so an interrupted run never leaves a half file
    # that the idempotence check would accept.
    nice -n 10 "$BIN/llama-quantize" --allow-requantize "$SRC" "$out.tmp" "$type" "$THREADS" \
        >"$out.log" 2>&1 || { tail -n 30 "$out.log" >&2; exit 1; }
    mv "$out.tmp" "$out"
done

(cd "$ROOT/models" && sha256sum "$(basename "$SRC")" "${outputs[@]##*/}") \
    | tee "$ROOT/models/SHA256SUMS.bench"

# Tensor-type census: which types each file really holds (fallbacks show up here).
PY="$ROOT/.venv/bin/python"
if [[ -x "$PY" ]]; then
    "$PY" - "$SRC" "${outputs[@]}" <<'PYEOF'
import collections, os, sys
from gguf import GGUFReader
for path in sys.argv[1:]:
    r = GGUFReader(path)
    count, size = collections.Counter(), collections.Counter()
    for t in r.tensors:
        count[t.tensor_type.name] += 1
        size[t.tensor_type.name] += int(t.n_bytes)
    total = sum(size.values())
    parts = ", ".join(f"{k} x{count[k]} {size[k] / 1e6:.1f} MB" for k in sorted(size))
    print(f"{os.path.basename(path)}: weights {total / 1e6:.2f} MB ({parts})")
PYEOF
fi
