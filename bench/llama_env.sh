# bench/llama_env.sh: sourced by the bench/compare_*.sh scripts. Finds (and if needed builds)
# the llama.cpp flavor to compare with, and prints what both programs run on.
#
#   LLAMA_CPP_FLAVOR  native (default) | noamx: which bench/llama_cpp.sh build to use
#                     (noamx where llama.cpp's AMX path fails on the host; see llama_cpp.sh)
#   LLAMA_CPP_DIR     the build folder of a llama.cpp built by hand instead (a fork such as
#                     ik_llama.cpp: its tools in DIR/bin, its source named by DIR's CMakeCache);
#                     nothing here fetches or builds it. Its source commit (git HEAD, or a
#                     snapshot's COMMIT file) goes in the header.
#   LLAMA_NAME        that build's name in the header and tables (default: its source's git
#                     remote, else its source folder's name, which for an unpacked snapshot
#                     may say nothing, e.g. LLAMA_NAME=ik_llama.cpp)
#
# After sourcing: $llama_bin (the build's bin/ folder), and machine_header prints the CPU
# model, its SIMD extensions, the ISA level and kernels folio uses (folio info) and the
# llama.cpp build (commit, flavor).
llama_flavor=${LLAMA_CPP_FLAVOR:-native}
if [[ -n ${LLAMA_CPP_DIR:-} ]]; then
  llama_flavor=external
  llama_build=$LLAMA_CPP_DIR
else
  case $llama_flavor in
    native) llama_build=bench/.work/llama.cpp-build ;;
    noamx) llama_build=bench/.work/llama.cpp-build-noamx ;;
    *) echo "LLAMA_CPP_FLAVOR=$llama_flavor: expected native or noamx" >&2; exit 2 ;;
  esac
fi
llama_bin=$llama_build/bin
# llama_need TOOL...: builds the flavor when a tool is missing (an external build must have it).
llama_need() {
  local t
  for t in "$@"; do
    [[ -x $llama_bin/$t ]] && continue
    if [[ $llama_flavor == external ]]; then
      echo "LLAMA_CPP_DIR=$llama_build has no bin/$t; build it there first" >&2
      exit 1
    fi
    LLAMA_CPP_FLAVOR=$llama_flavor bench/llama_cpp.sh >&2
    return
  done
}

# An external build's (LLAMA_CPP_DIR) source, name and commit, read off its CMakeCache.
external_source() {
  sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$llama_build/CMakeCache.txt" 2>/dev/null
}
external_name() {
  local src
  if [[ -n ${LLAMA_NAME:-} ]]; then
    echo "$LLAMA_NAME"
    return
  fi
  src=$(external_source)
  basename "$(git -C "$src" remote get-url origin 2>/dev/null || echo "$src")" .git
}
# The commit: the source's git HEAD, or (a snapshot without .git) the first word of its COMMIT
# file, written by whoever unpacked it.
external_version() {
  local src commit
  src=$(external_source)
  commit=$(git -C "$src" rev-parse --short=12 HEAD 2>/dev/null ||
    awk 'NR == 1 { print $1 }' "$src/COMMIT" 2>/dev/null)
  echo "$(external_name) commit ${commit:-unknown}, built by hand in $llama_build"
}
# The peer's name in the scripts' tables.
llama_name=llama.cpp
[[ $llama_flavor == external ]] && llama_name=$(external_name)
export llama_name

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
  if [[ $llama_flavor == external ]]; then
    echo "peer: $(external_version)"
    return
  fi
  local v=$llama_build/VERSION.txt
  echo "llama.cpp: commit $(sed -n 's/^llama.cpp commit \([0-9a-f]\{12\}\).*/\1/p' "$v" 2>/dev/null)," \
    "flavor $llama_flavor $(sed -n 's/^flavor [a-z]* //p' "$v" 2>/dev/null)"
}
