#!/usr/bin/env bash
# bench/llama_cpp_python.sh -- build and install llama-cpp-python, the Python binding of the
# reference llama.cpp, into its own virtual environment for bench/python_api.py.
#
# It is the same pinned sdist bench/llama_cpp.sh builds its llama.cpp from (PyPI is the only
# package source reachable from the project's machines), so the Python-API comparison runs the
# same llama.cpp commit as the C++ one. The venv is separate from the project's .venv on
# purpose: folio and llama-cpp-python never share a process or a venv (python_api.py runs the
# llama-cpp-python side as a subprocess of this venv's python).
#
# Built for the host's best configuration, as bench/llama_cpp.sh does: Release, GGML_NATIVE=ON
# (every ISA extension of the host, AVX-512/VNNI/AMX included where present), no network
# features. The multimodal library (mtmd/llava) is not built (LLAVA_BUILD=OFF): text
# completion never loads it, and it would only add compile time. Flash attention is a run-time
# setting (Llama(flash_attn=...)), not a build one; python_api.py measures both and keeps the
# faster.
#
# Idempotent: does nothing when the venv already imports llama_cpp at the pinned version.
# Delete bench/.work/lcp-venv to rebuild. Progress goes to stderr; the last line on stdout is
# the venv's python.
#
# Environment knobs:
#   LLAMA_CPP_PYTHON_VERSION  sdist version (default: the pin in bench/llama_sdist.sh)
#   JOBS                      parallel compile jobs (default 2; the machine is shared)
#   LCP_VENV                  venv folder (default bench/.work/lcp-venv)
#   LCP_CMAKE_ARGS            extra CMake arguments appended to the defaults
#   PYTHON                    interpreter that creates the venv (default python3)
#   PIP                       pip used to download the sdist (default: the project venv's pip)
set -euo pipefail

JOBS="${JOBS:-2}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf '[llama_cpp_python.sh] %s\n' "$*" >&2; }
# The same pinned sdist as bench/llama_cpp.sh (VERSION, WORK, SDIST) and fetch_sdist.
source "$ROOT/bench/llama_sdist.sh"
VENV="${LCP_VENV:-$WORK/lcp-venv}"
VPY="$VENV/bin/python"
LOG="$WORK/lcp-venv.build.log"
cmake_args="-DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAVA_BUILD=OFF"
cmake_args+="${LCP_CMAKE_ARGS:+ $LCP_CMAKE_ARGS}"


installed_version() {
    [[ -x "$VPY" ]] || return 1
    "$VPY" -c 'import llama_cpp, sys; sys.stdout.write(llama_cpp.__version__)' 2>/dev/null
}


make_venv() {
    if [[ -x "$VPY" ]]; then
        log "venv present: $VENV"
    else
        log "creating venv $VENV ..."
        "${PYTHON:-python3}" -m venv "$VENV"
        "$VPY" -m pip install --quiet --upgrade pip >&2
    fi
}

install() {
    # GGML_NATIVE=ON: -march=native for ggml-cpu. LLAMA_CURL/OPENSSL off: nothing is fetched at
    # run time. LLAVA_BUILD=OFF: see the header.
    log "building llama-cpp-python $VERSION from $SDIST"
    log "  CMAKE_ARGS=\"$cmake_args\", $JOBS jobs at nice 10 (tens of minutes on 2 cores);" \
        "log: $LOG"
    # Build isolation fetches scikit-build-core (and cmake/ninja if the host's are too old)
    # from PyPI; -v so the compile log shows the flags actually used.
    if ! CMAKE_ARGS="$cmake_args" CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" \
        nice -n 10 "$VPY" -m pip install -v --no-cache-dir "$SDIST" >"$LOG" 2>&1; then
        tail -n 40 "$LOG" >&2
        log "build failed; full log in $LOG"
        exit 1
    fi
}

record_version() {
    local src="$WORK/llama_cpp_python-$VERSION/vendor/llama.cpp" commit
    commit="$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)"
    {
        echo "llama-cpp-python $(installed_version || echo '?')"
        echo "llama.cpp commit $commit"
        echo "cmake args $cmake_args"
        echo "compiler $(${CXX:-c++} --version | head -n1)"
        echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
        "$VPY" -c 'import llama_cpp; print("system info", llama_cpp.llama_print_system_info().decode())' 2>/dev/null
    } >"$VENV/VERSION.txt"
}

main() {
    mkdir -p "$WORK"
    local have
    if have="$(installed_version)" && [[ "$have" == "$VERSION" ]]; then
        log "llama-cpp-python $have already installed in $VENV"
    else
        [[ -n "${have:-}" ]] && log "installed version $have != $VERSION; reinstalling"
        fetch_sdist
        make_venv
        install
        have="$(installed_version)" || { log "installed, but 'import llama_cpp' fails"; exit 1; }
        record_version
        log "installed llama-cpp-python $have"
    fi
    [[ -f "$VENV/VERSION.txt" ]] || record_version
    cat "$VENV/VERSION.txt" >&2
    echo "$VPY"
}

main "$@"
