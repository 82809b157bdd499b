#!/usr/bin/env bash
# bench/engine_bench.sh: the paged engine's comparison runs (issue #4 section 6)
# through `folio bench throughput`. Sizes default small enough for a shared
# 2-core machine; override with env vars for a full run, e.g.
#   N=64 IN=128 OUT=128 CONC=1,8,32 DEC_IN=128 DEC_OUT=128 bench/engine_bench.sh
set -euo pipefail
FOLIO=${FOLIO:-"$(dirname "$0")/../build/folio"}
MODEL=${MODEL:-}
THREADS=${THREADS:-2}
N=${N:-16} IN=${IN:-64} OUT=${OUT:-32} STATIC=${STATIC:-8}
CONC=${CONC:-1,8,32} DEC_IN=${DEC_IN:-128} DEC_OUT=${DEC_OUT:-64}
PREFIX=${PREFIX:-1000}
args=(bench throughput -t "$THREADS" --max-model-len 2048 --kv-cache-memory 512MiB)
[[ -n "$MODEL" ]] && args+=(-m "$MODEL")
"$FOLIO" "${args[@]}" -n "$N" --input-len "$IN" --output-len "$OUT" --static-batch-size "$STATIC" \
  --modes continuous,static,serial --kv-efficiency --prefix-ttft --prefix-len "$PREFIX" \
  --decode-concurrency "$CONC" --decode-input "$DEC_IN" --decode-output "$DEC_OUT" "$@"
