# bench/llama_env.sh: sourced by the bench/compare_*.sh scripts. Finds (and if needed builds)
# the llama.cpp flavor to compare with, and prints what both programs run on.
#
#   LLAMA_CPP_FLAVOR  native (default) | noamx: which bench/llama_cpp.sh build to use
#                     (noamx where llama.cpp's AMX path fails on the host; see llama_cpp.sh)
#
# After sourcing: $llama_bin (the build's bin/ folder), and machine_header prints the CPU
# model, its SIMD extensions, the ISA level and kernels folio uses (folio info) and the
# llama.cpp build (commit, flavor).
llama_flavor=${LLAMA_CPP_FLAVOR:-native}
case $llama_flavor in
  native) llama_build=bench/.work/llama.cpp-build ;;
  noamx) llama_build=bench/.work/llama.cpp-build-noamx ;;
  *) echo "LLAMA_CPP_FLAVOR=$llama_flavor: expected native or noamx" >&2; exit 2 ;;
esac
llama_bin=$llama_build/bin
# llama_need TOOL...: builds the flavor when a tool is missing.
llama_need() {
  local t
  for t in "$@"; do
    [[ -x $llama_bin/$t ]] || { LLAMA_CPP_FLAVOR=$llama_flavor bench/llama_cpp.sh >&2; return; }
  done
}

machine_header() {  # machine_header MODEL
  local cpu flags isa
  cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')
  flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
    grep -E '^(avx2|avx512f|avx512_vnni|avx512_bf16|avx_vnni|amx_int8|amx_bf16)$' | tr '\n' ' ')
  isa=$(build/release/folio info "$1" --json 2>/dev/null | .venv/bin/python -c '
import json, sys
l = json.load(sys.stdin).get("load", {})
print(l.get("isa", "?") + ": " + l.get("kernels", "?"))' || echo unknown)
  echo "cpu: $cpu ($(nproc) cores; ${flags% })"
  echo "folio: ISA level $isa${FOLIO_ISA:+ (FOLIO_ISA=$FOLIO_ISA)}"
  local v=$llama_build/VERSION.txt
  echo "llama.cpp: commit $(sed -n 's/^llama.cpp commit \([0-9a-f]\{12\}\).*/\1/p' "$v" 2>/dev/null)," \
    "flavor $llama_flavor $(sed -n 's/^flavor [a-z]* //p' "$v" 2>/dev/null)"
}
