#!/usr/bin/env bash
# bench/build_probes.sh -- compile the stand-alone roofline probe (bench/membw.cpp).
#
# The probe is deliberately outside the CMake tree: it has no folio dependency and must be
# built with -march=native for the machine it measures. Output: build/bench-probes/membw
# (build/ is git-ignored). Usage: bench/build_probes.sh && build/bench-probes/membw
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/build/bench-probes"
mkdir -p "$OUT"
CXX="${CXX:-g++}"
set -x
nice -n 10 "$CXX" -std=c++20 -O3 -march=native -pthread \
    -Wall -Wextra -Wpedantic -Wshadow -Werror \
    "$ROOT/bench/membw.cpp" -o "$OUT/membw"
