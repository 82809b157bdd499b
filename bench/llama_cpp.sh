#!/usr/bin/env bash
# bench/llama_cpp.sh -- fetch and build the reference llama.cpp that folio benchmarks against.
#
# llama.cpp is never committed: PyPI is the only package source reachable from the project's
# machines, and the llama-cpp-python sdist vendors a complete llama.cpp checkout (with its git
# metadata), so we download that sdist, unpack it under bench/.work/ (git-ignored) and build
# only the command-line tools with CMake + Ninja.
#
# Idempotent: every stage is skipped when its output already exists. Delete bench/.work/ to
# start over. Progress goes to stderr; the last line on stdout is the build's bin/ directory.
#
# Environment knobs:
#   LLAMA_CPP_PYTHON_VERSION  sdist version to fetch (default: the pin in bench/llama_sdist.sh)
#   JOBS                      ninja parallelism (default 2; the machine is shared)
#   LLAMA_CPP_EXTRA           0 skips llama-server and llama-cli (default 1)
#   LLAMA_CPP_SPEC            0 skips llama-speculative and llama-lookup, the speculative-decoding
#                             examples bench/spec_decode.sh compares with (default 1)
#   PIP                       pip to use (default: the project venv's pip, else pip3)
#   LLAMA_CPP_FLAVOR          "native" (default: GGML_NATIVE, every ISA extension of the host,
#                             AMX included) or "noamx" (the same AVX-512 extensions with AMX off,
#                             into bench/.work/llama.cpp-build-noamx): on a host where llama.cpp's
#                             AMX path fails (seen: a segfault in ggml_backend_amx_mul_mat on a
#                             KVM Xeon at 0c1e570), its best working configuration is this build
#                             with its repacked (CPU_REPACK) weights
set -euo pipefail

JOBS="${JOBS:-2}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf '[llama_cpp.sh] %s\n' "$*" >&2; }
# The pinned sdist (VERSION, WORK, SDIST) and fetch_sdist, shared with llama_cpp_python.sh.
source "$ROOT/bench/llama_sdist.sh"
SRC_PARENT="$WORK/llama_cpp_python-$VERSION"
SRC="$SRC_PARENT/vendor/llama.cpp"
FLAVOR="${LLAMA_CPP_FLAVOR:-native}"
case "$FLAVOR" in
    native) BUILD="$WORK/llama.cpp-build"; ISA_ARGS=(-DGGML_NATIVE=ON) ;;
    noamx)  BUILD="$WORK/llama.cpp-build-noamx"
            ISA_ARGS=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
                      -DGGML_BMI2=ON -DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON
                      -DGGML_AVX512_BF16=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF
                      -DGGML_AMX_BF16=OFF) ;;
    *) echo "[llama_cpp.sh] LLAMA_CPP_FLAVOR=$FLAVOR: expected native or noamx" >&2; exit 2 ;;
esac
# Built in two rounds so the benchmark tools are usable before the slow server/CLI finish.
CORE_TARGETS=(llama-bench llama-batched-bench llama-quantize llama-perplexity llama-imatrix)
EXTRA_TARGETS=(llama-server llama-cli)
[[ "${LLAMA_CPP_EXTRA:-1}" == 0 ]] && EXTRA_TARGETS=()
SPEC_TARGETS=(llama-speculative llama-lookup)
[[ "${LLAMA_CPP_SPEC:-1}" == 0 ]] && SPEC_TARGETS=()

fetch() {
    fetch_sdist
    if [[ -f "$SRC/CMakeLists.txt" ]]; then
        log "sources present: $SRC"
    else
        log "unpacking sdist ..."
        tar -xzf "$SDIST" -C "$WORK"
    fi
}

record_version() {
    # The sdist keeps the submodule's git dir, so git can name the exact commit.
    local commit date subject
    commit="$(git -C "$SRC" rev-parse HEAD 2>/dev/null || echo unknown)"
    date="$(git -C "$SRC" log -1 --format=%cI 2>/dev/null || echo unknown)"
    subject="$(git -C "$SRC" log -1 --format=%s 2>/dev/null || echo unknown)"
    mkdir -p "$BUILD"
    {
        echo "llama-cpp-python $VERSION"
        echo "llama.cpp commit $commit"
        echo "llama.cpp commit date $date"
        echo "llama.cpp commit subject $subject"
        echo "flavor $FLAVOR (${ISA_ARGS[*]})"
        echo "compiler $(${CXX:-c++} --version | head -n1)"
        echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    } >"$BUILD/VERSION.txt"
    log "llama.cpp commit $commit ($date)"
}

configure() {
    # A build configured before the examples were wanted is reconfigured (same directory, so
    # what is built stays built).
    if [[ -f "$BUILD/build.ninja" ]] && grep -q 'LLAMA_BUILD_EXAMPLES:BOOL=ON' "$BUILD/CMakeCache.txt"; then
        log "already configured: $BUILD"
        return
    fi
    log "configuring (Release, $FLAVOR ISA flags: ${ISA_ARGS[*]}, static, no network features) ..."
    # LLAMA_CURL is deprecated upstream (HTTPS now goes through LLAMA_OPENSSL); both off since
    # nothing is downloaded at run time. The server's prebuilt web UI would be fetched from a
    # hub at build time, so it is disabled too.
    cmake -S "$SRC" -B "$BUILD" -G Ninja \
        -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=OFF \
        "${ISA_ARGS[@]}" \
        -DLLAMA_CURL=OFF \
        -DLLAMA_OPENSSL=OFF \
        -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_EXAMPLES=ON \
        -DLLAMA_BUILD_TOOLS=ON \
        -DLLAMA_BUILD_SERVER=ON \
        -DLLAMA_BUILD_UI=OFF \
        -DLLAMA_USE_PREBUILT_UI=OFF \
        >"$BUILD.configure.log" 2>&1 || { tail -n 40 "$BUILD.configure.log" >&2; exit 1; }
}

build() {
    local missing=()
    for t in "$@"; do
        [[ -x "$BUILD/bin/$t" ]] || missing+=("$t")
    done
    if [[ ${#missing[@]} -eq 0 ]]; then
        log "already built: $*"
        return
    fi
    log "building ${missing[*]} with ninja -j$JOBS at nice 10 (tens of minutes on 2 cores) ..."
    nice -n 10 ninja -C "$BUILD" -j "$JOBS" "${missing[@]}"
}

main() {
    mkdir -p "$WORK"
    fetch
    configure
    record_version
    build "${CORE_TARGETS[@]}"
    [[ ${#SPEC_TARGETS[@]} -eq 0 ]] || build "${SPEC_TARGETS[@]}"
    [[ ${#EXTRA_TARGETS[@]} -eq 0 ]] || build "${EXTRA_TARGETS[@]}"
    log "done; binaries in $BUILD/bin"
    cat "$BUILD/VERSION.txt" >&2
    echo "$BUILD/bin"
}

main "$@"
