#!/usr/bin/env bash
# bench/probe.sh -- measure this machine's roofline and print the SmolLM2 / Gemma ceilings.
#
# Builds bench/membw.cpp if needed, waits for a quiet machine (bench/idle.sh), runs the probe
# (JSON to build/bench-probes/membw.json, a copy with the load seen beforehand under
# bench/.work/results/), then bench/roofline.py for each model in models/.
# Extra arguments go to membw (e.g. --runs 11); the buffers are in huge pages (--huge).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROBE="$ROOT/build/bench-probes/membw"
JSON="$ROOT/build/bench-probes/membw.json"
source "$ROOT/bench/idle.sh"

[[ -x "$PROBE" && "$PROBE" -nt "$ROOT/bench/membw.cpp" ]] || "$ROOT/bench/build_probes.sh"
busy="$(wait_for_idle)"
echo "membw: CPU busy before run: ${busy}%, niceness $BENCH_NICE"
# --huge: folio keeps its repacked weights in 2 MiB pages (src/base/huge_page_arena.h), so
# their read bandwidth is the decode ceiling.
bench_run "$PROBE" --huge --json "$JSON" "$@"
mkdir -p "$ROOT/bench/.work/results"
cp "$JSON" "$ROOT/bench/.work/results/membw-$(date -u +%Y%m%dT%H%M%SZ)-busy${busy}.json"
for m in "$ROOT"/models/*.gguf; do
    echo
    "$ROOT/.venv/bin/python" "$ROOT/bench/roofline.py" "$m" --membw "$JSON"
done
