#!/usr/bin/env bash
# bench/grammar.sh: constrained-decoding mask cost per token, folio vs xgrammar
# (bench/grammar_mask.py; inputs in bench/data/grammar/). A few minutes on a
# 2-core machine at the default -r 5; e.g.
#   bench/grammar.sh -r 3 --models smollm2 --cases schema,regex
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
export FOLIO_BIN=${FOLIO_BIN:-"$ROOT/build/release/folio"}
PY=${PY:-"$ROOT/.venv/bin/python"}
exec "$PY" "$ROOT/bench/grammar_mask.py" --folio "$FOLIO_BIN" "$@"
