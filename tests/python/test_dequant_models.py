"""`folio dequant` on the real models vs gguf-py, bit for bit.

For every tensor type present in each model, whole tensors are dequantized by
folio (FOLIO_BIN, default build/release/folio) and by gguf-py
(GGUFReader + gguf.quants.dequantize), and compared as float32 bit patterns
(so NaN == NaN and -0 != +0).

Per (model, type) we check the smallest tensor, one mid-size tensor and, for
the SmolLM2 embedding, a 28M-element Q8_0 tensor. FOLIO_DEQUANT_ALL=1 checks
every tensor up to 64M elements instead (slow). Most of the run time is
GGUFReader parsing gemma's 262k-token vocabulary, once per session.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from gguf import GGUFReader
from gguf.quants import dequantize

ROOT = Path(__file__).resolve().parents[2]
SOURCE_DIR = Path(os.environ.get("FOLIO_SOURCE_DIR", ROOT))
FOLIO_BIN = Path(os.environ.get("FOLIO_BIN", ROOT / "build" / "release" / "folio"))
MODELS = ["SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf"]
MID_SIZE = 4 << 20  # elements
ALL_LIMIT = 64 << 20  # elements; gemma's 167M-element embedding would need ~2 GB here
EXTRA = {("SmolLM2-135M-Instruct.Q4_1.gguf", "token_embd.weight")}

_readers: dict[str, GGUFReader] = {}


def model_path(name: str) -> Path:
    path = SOURCE_DIR / "models" / name
    if not path.exists():
        pytest.fail(f"model {path} is missing: run scripts/setup to download it")
    return path


def reader(name: str) -> GGUFReader:
    if name not in _readers:
        _readers[name] = GGUFReader(model_path(name))
    return _readers[name]


def folio(*args: str) -> subprocess.CompletedProcess:
    if not FOLIO_BIN.exists():
        pytest.fail(f"folio binary {FOLIO_BIN} not found: build it or set FOLIO_BIN")
    return subprocess.run([str(FOLIO_BIN), *args], capture_output=True, timeout=300)


def selected_tensors() -> list[tuple[str, str, str]]:
    """(model, type name, tensor name) triples to check."""
    picks: list[tuple[str, str, str]] = []
    for m in MODELS:
        if not (SOURCE_DIR / "models" / m).exists():
            picks.append((m, "?", "?"))  # fails with the download hint
            continue
        by_type: dict[str, list] = {}
        for t in reader(m).tensors:
            by_type.setdefault(t.tensor_type.name, []).append(t)
        for type_name, ts in sorted(by_type.items()):
            if os.environ.get("FOLIO_DEQUANT_ALL") == "1":
                chosen = [t for t in ts if t.n_elements <= ALL_LIMIT]
            else:
                smallest = min(ts, key=lambda t: int(t.n_elements))
                mid = [t for t in ts if t is not smallest and t.n_elements <= MID_SIZE][:1]
                extra = [t for t in ts if (m, t.name) in EXTRA]
                chosen = [smallest, *mid, *extra]
            names = dict.fromkeys(t.name for t in chosen)  # ordered, without repeats
            picks += [(m, type_name, name) for name in names]
    return picks


def expected_bits(model: str, tensor: str) -> np.ndarray:
    t = next(t for t in reader(model).tensors if t.name == tensor)
    return np.ascontiguousarray(dequantize(t.data, t.tensor_type), dtype=np.float32).view(
        np.uint32).reshape(-1)


def assert_bits_equal(want: np.ndarray, got: np.ndarray, what: str) -> None:
    assert got.size == want.size, f"{what}: {got.size} floats, expected {want.size}"
    bad = np.flatnonzero(got != want)
    if bad.size:
        i = int(bad[0])
        pytest.fail(f"{what}: {bad.size} of {want.size} floats differ; first at {i}: "
                    f"want 0x{int(want[i]):08x} got 0x{int(got[i]):08x}")


@pytest.mark.parametrize("model,type_name,tensor", selected_tensors())
def test_dequant_matches_gguf_py(model: str, type_name: str, tensor: str, tmp_path: Path) -> None:
    out = tmp_path / "t.f32"
    r = folio("dequant", str(model_path(model)), tensor, "--out", str(out))
    assert r.returncode == 0, r.stderr.decode()
    got = np.fromfile(out, dtype="<u4")
    assert_bits_equal(expected_bits(model, tensor), got, f"{model} {tensor} ({type_name})")


def test_dequant_to_stdout() -> None:
    model, tensor = MODELS[1], "blk.0.attn_k.weight"  # Q5_0
    r = folio("dequant", str(model_path(model)), tensor)
    assert r.returncode == 0, r.stderr.decode()
    got = np.frombuffer(r.stdout, dtype="<u4")
    assert_bits_equal(expected_bits(model, tensor), got, f"{model} {tensor} via stdout")


@pytest.mark.parametrize("model", MODELS)
def test_list_matches_gguf_py(model: str) -> None:
    r = folio("dequant", str(model_path(model)), "--list")
    assert r.returncode == 0, r.stderr.decode()
    rows = [line.split("\t") for line in r.stdout.decode().splitlines()]
    want = [[t.name, t.tensor_type.name, "x".join(str(int(d)) for d in t.shape)]
            for t in reader(model).tensors]
    assert rows == want


def test_unknown_tensor_is_a_clear_error() -> None:
    r = folio("dequant", str(model_path(MODELS[0])), "no.such.tensor")
    assert r.returncode != 0
    assert b"no tensor named 'no.such.tensor'" in r.stderr
