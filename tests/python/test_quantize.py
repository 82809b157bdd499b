"""`folio quantize` against independent references.

Run: FOLIO_BIN=build/release/folio .venv/bin/python -m pytest tests/python/test_quantize.py

- Bytes: gguf-py's numpy quantizers (gguf.quants.quantize: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, F16, BF16,
  written to mirror ggml's reference C) on random matrices with awkward rows (zeros, constants,
  outliers, exact halves). gguf-py has no k-quant quantizer: Q4_K / Q5_K / Q6_K are dequantized with
  gguf-py and held to error bounds here, and compared byte for byte with llama-quantize in
  bench/quantize.sh (which needs a llama.cpp build).
- Files: the output is read by gguf-py's GGUFReader (types, shapes, metadata) and by folio itself:
  a quantize -> load -> perplexity round trip on the default model, whose quality must move the way
  the bits say (Q8_0 within 0.5 % of the float base, Q4_K_M within 10 %).
"""
import os
import re
import subprocess

import numpy as np
import pytest
from test_perplexity import TEXT  # a short English text written for the tests

gguf = pytest.importorskip("gguf")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOLIO = os.environ.get("FOLIO_BIN", os.path.join(ROOT, "build", "release", "folio"))
MODEL = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
Q = gguf.GGMLQuantizationType


def run_folio(*args, timeout=300):
    return subprocess.run([FOLIO, *args], capture_output=True, text=True, timeout=timeout)


def random_matrices(seed):
    """Tensors named like model weights, rows of 512 (whole blocks of every type)."""
    rng = np.random.default_rng(seed)
    a = rng.normal(0, 0.05, size=(24, 512)).astype(np.float32)
    a[0] = 0.0                                   # all zero
    a[1] = 0.125                                 # constant
    a[2, 7] = 3.0                                # one outlier
    a[3] = np.round(a[3] * 64) / 64 + 1 / 128    # many exact halves of a step
    a[4, :32] = -a[4, :32].max()                 # ties in magnitude
    b = rng.standard_t(3, size=(16, 1024)).astype(np.float32) * 0.02  # heavy tails
    c = rng.uniform(-1, 1, size=(8, 256)).astype(np.float32)
    return {"blk.0.attn_q.weight": a, "blk.0.ffn_up.weight": b, "blk.1.ffn_down.weight": c,
            "blk.0.attn_norm.weight": rng.normal(1, 0.1, size=512).astype(np.float32)}


@pytest.fixture(scope="module")
def f32_file(tmp_path_factory):
    assert os.path.exists(FOLIO), f"{FOLIO} not built (set FOLIO_BIN)"
    path = str(tmp_path_factory.mktemp("quant") / "random-f32.gguf")
    w = gguf.GGUFWriter(path, "llama")
    w.add_block_count(2)
    for name, arr in random_matrices(1).items():
        w.add_tensor(name, arr)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def tensors_of(path):
    r = gguf.GGUFReader(path)
    return r, {t.name: t for t in r.tensors}


@pytest.mark.parametrize("qtype", ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "F16", "BF16"])
def test_bytes_equal_gguf_py(f32_file, tmp_path, qtype):
    out = str(tmp_path / f"{qtype}.gguf")
    r = run_folio("quantize", f32_file, out, "--type", qtype, "--pure")
    assert r.returncode == 0, r.stderr
    _, got = tensors_of(out)
    for name, arr in random_matrices(1).items():
        t = got[name]
        if arr.ndim == 1:
            assert t.tensor_type == Q.F32, name  # norms are never quantized
            np.testing.assert_array_equal(np.asarray(t.data), arr)
            continue
        assert t.tensor_type == Q[qtype], name
        want = gguf.quants.quantize(arr, Q[qtype])
        have = np.asarray(t.data).reshape(want.shape) if qtype in ("F16", "BF16") else np.asarray(t.data)
        assert have.tobytes() == want.tobytes(), f"{name} {qtype}: bytes differ from gguf-py"


@pytest.mark.parametrize("qtype,bound", [("Q4_K", 0.13), ("Q5_K", 0.065), ("Q6_K", 0.035)])
def test_kquants_decode_with_gguf_py_within_bounds(f32_file, tmp_path, qtype, bound):
    out = str(tmp_path / f"{qtype}.gguf")
    r = run_folio("quantize", f32_file, out, "--type", "Q4_K_M", "--pure", "--tensor-type",
                  f".*={qtype}")
    assert r.returncode == 0, r.stderr
    _, got = tensors_of(out)
    for name, arr in random_matrices(1).items():
        if arr.ndim == 1:
            continue
        t = got[name]
        assert t.tensor_type == Q[qtype], name
        deq = gguf.quants.dequantize(np.asarray(t.data), Q[qtype]).reshape(arr.shape)
        for i, (x, y) in enumerate(zip(arr, deq)):
            rms = float(np.sqrt(np.mean(x.astype(np.float64) ** 2)))
            err = float(np.sqrt(np.mean((x.astype(np.float64) - y) ** 2)))
            assert err <= bound * rms + 1e-9, f"{name} row {i}: relative RMS error {err / rms:.4f}"


def test_mix_rules_and_metadata_on_the_default_model(tmp_path):
    base = str(tmp_path / "smol-f32.gguf")
    r = run_folio("quantize", MODEL, base, "--type", "F32")
    assert r.returncode == 0, r.stderr
    assert "compounds" in r.stderr  # a quantized input warns
    out = str(tmp_path / "smol-q4km.gguf")
    r = run_folio("quantize", base, out, "--type", "Q4_K_M")
    assert r.returncode == 0, r.stderr
    assert "compounds" not in r.stderr
    reader, got = tensors_of(out)
    fields = reader.fields
    assert int(fields["general.file_type"].parts[-1][0]) == 15
    assert int(fields["general.quantization_version"].parts[-1][0]) == 2
    assert bytes(fields["quantize.method"].parts[-1]).decode() == "rtn"
    # llama-quantize's Q4_K_M on 30 layers with rows of 576 (not whole 256-blocks) and tied embeddings.
    more = {i for i in range(30) if i < 3 or i >= 26 or (i - 3) % 3 == 2}
    assert got["token_embd.weight"].tensor_type == Q.Q8_0
    assert got["output_norm.weight"].tensor_type == Q.F32
    for i in range(30):
        assert got[f"blk.{i}.attn_q.weight"].tensor_type == Q.Q5_0
        assert got[f"blk.{i}.attn_v.weight"].tensor_type == (Q.Q8_0 if i in more else Q.Q5_0)
        assert got[f"blk.{i}.ffn_down.weight"].tensor_type == (Q.Q6_K if i in more else Q.Q4_K)
    src = gguf.GGUFReader(MODEL)
    for f in src.fields.values():  # every other key is carried over
        if f.name.startswith("general.file_type") or f.name.startswith("general.quantization"):
            continue
        assert f.name in fields, f.name


def perplexity(model, text_file):
    r = run_folio("perplexity", "-m", model, "-f", text_file, "--ctx-size", "128", "--json")
    assert r.returncode == 0, r.stderr
    import json
    return json.loads(r.stdout)["ppl"]


def test_round_trip_quality(tmp_path):
    text = str(tmp_path / "text.txt")
    with open(text, "w") as f:
        f.write(TEXT)
    base = str(tmp_path / "base.gguf")
    assert run_folio("quantize", MODEL, base, "--type", "F32").returncode == 0
    ppl = {"F32": perplexity(base, text)}
    for qtype in ("Q8_0", "Q4_K_M"):
        out = str(tmp_path / f"{qtype}.gguf")
        r = run_folio("quantize", base, out, "--type", qtype)
        assert r.returncode == 0, r.stderr
        ppl[qtype] = perplexity(out, text)
    print(ppl)
    assert abs(ppl["Q8_0"] / ppl["F32"] - 1) < 0.005, ppl
    assert abs(ppl["Q4_K_M"] / ppl["F32"] - 1) < 0.10, ppl
    # and it generates
    r = run_folio("run", "-m", str(tmp_path / "Q4_K_M.gguf"), "-p", "The capital of France is",
                  "-n", "8", "--temp", "0")
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.strip()) > 0


@pytest.mark.parametrize("args,message", [
    (["--type", "Q3_K_M"], "unknown quantization type 'Q3_K_M'"),
    (["--type", "Q4_0", "--tensor-type", "attn"], "PATTERN=TYPE"),
    (["--type", "Q4_0", "--tensor-type", "(=Q8_0"], "not a valid regular expression"),
    (["--type", "Q4_0", "--tensor-type", "attn=Q2_K"], "unknown tensor type 'Q2_K'"),
    (["--type", "Q4_0", "--method", "gptq"], "--method gptq"),
    (["--type", "Q4_0", "--threads", "-1"], "--threads"),
])
def test_bad_flags_are_clear_errors(f32_file, tmp_path, args, message):
    out = str(tmp_path / "x.gguf")
    r = run_folio("quantize", f32_file, out, *args)
    assert r.returncode != 0
    assert message in r.stderr, r.stderr
    assert not os.path.exists(out)


def test_missing_or_bad_input(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\xff" * 20)
    for path in (str(tmp_path / "none.gguf"), str(bad)):
        r = run_folio("quantize", path, str(tmp_path / "o.gguf"), "--type", "Q4_0")
        assert r.returncode != 0 and "error" in r.stderr.lower(), r.stderr
    r = run_folio("quantize", str(bad), str(bad), "--type", "Q4_0")
    assert r.returncode != 0
