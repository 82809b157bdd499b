# shellcheck shell=bash
# bench/llama_sdist.sh: sourced by bench/llama_cpp.sh (llama.cpp's tools) and
# bench/llama_cpp_python.sh (the Python bindings): the one pin of the llama-cpp-python sdist both
# build from, so the two can never compare different llama.cpp versions, and its download.
#
# Needs ROOT (the checkout) and a `log` function; sets VERSION, WORK, SDIST_DIR and SDIST.
#   LLAMA_CPP_PYTHON_VERSION  sdist version to fetch (default: the pinned one below)
#   PIP                       pip that downloads it (default: the project venv's pip, else pip3)

# Pinned: llama-cpp-python 0.3.36 vendors llama.cpp 0c1e57098bba (2026-10-01). Bump deliberately
# and re-record the reference numbers in docs/PERFORMANCE.md when changing it.
VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
WORK="$ROOT/bench/.work"
SDIST_DIR="$WORK/sdist"
SDIST="$SDIST_DIR/llama_cpp_python-$VERSION.tar.gz"

pick_pip() {
    if [[ -n "${PIP:-}" ]]; then echo "$PIP"
    elif [[ -x "$ROOT/.venv/bin/pip" ]]; then echo "$ROOT/.venv/bin/pip"
    else echo pip3
    fi
}

# Downloads the sdist into $SDIST_DIR unless it is there.
fetch_sdist() {
    if [[ -f "$SDIST" ]]; then
        log "sdist present: $SDIST"
    else
        log "downloading llama-cpp-python==$VERSION sdist from PyPI (~75 MB) ..."
        mkdir -p "$SDIST_DIR"
        "$(pick_pip)" download --quiet --no-deps --no-binary :all: \
            "llama-cpp-python==$VERSION" -d "$SDIST_DIR"
    fi
}
