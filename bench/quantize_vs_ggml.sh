#!/usr/bin/env bash
# bench/quantize_vs_ggml.sh: compiles bench/quantize_vs_ggml.cpp against
# folio's quant library (build/release) and llama.cpp's libggml-base.a (built
# by bench/llama_cpp.sh), and runs it: folio's quantizers vs ggml's, byte for
# byte, every type, with and without importances. Exit status 0 when all
# rows are identical.
set -euo pipefail
cd "$(dirname "$0")/.."
B=build/release
GGML=${GGML_BASE:-bench/.work/llama.cpp-build/ggml/src/libggml-base.a}
[[ -f $GGML ]] || { echo "[quantize_vs_ggml] $GGML missing: run bench/llama_cpp.sh first" >&2; exit 2; }
ninja -C "$B" folio_quant >/dev/null
out=bench/.work/quantize_vs_ggml
mkdir -p "$(dirname "$out")"
g++ -std=c++20 -O2 -I"$B/include/quant" -I"$B/include/gguf" -I"$B/include/base" \
  bench/quantize_vs_ggml.cpp "$B/src/quant/libfolio_quant.a" "$B/src/gguf/libfolio_gguf.a" \
  "$B/src/base/libfolio_base.a" "$GGML" -fopenmp -lpthread -lfmt -lspdlog -o "$out"
echo "[quantize_vs_ggml] $(lscpu | sed -n 's/^Model name: *//p'), llama.cpp $(cat bench/.work/llama.cpp-build/VERSION.txt 2>/dev/null | head -1)" >&2
"$out"
