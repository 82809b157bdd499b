"""`folio imatrix` and `folio quantize --imatrix` against independent references.

Run: FOLIO_BIN=build/release/folio .venv/bin/python -m pytest tests/python/test_imatrix.py

- The importance matrix: HF transformers (fp32, CPU) runs the same chunks with a forward pre-hook
  on every linear of the decoder blocks, summing each input column's squares; folio's file (read
  with gguf-py, llama.cpp's imatrix layout) must hold the same entries, counts and mean squares.
- What it is for: quantizing with it must lower each tensor's importance-weighted error
  sum_j imp_j * (w_ij - q_ij)^2 against round-to-nearest (gguf-py dequantizes both files).
  Byte-identity with llama-quantize --imatrix on the same imatrix is bench/quantize.sh's check.
"""
import os
import re
import subprocess

import numpy as np
import pytest

from test_perplexity import TEXT, vocab_bos

gguf = pytest.importorskip("gguf")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOLIO = os.environ.get("FOLIO_BIN", os.path.join(ROOT, "build", "release", "folio"))
MODEL = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
CTX = 128
CHUNKS = 2
HF_NAMES = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
            "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
            "mlp.down_proj": "ffn_down"}


def run_folio(*args, stdin=None, timeout=300):
    return subprocess.run([FOLIO, *args], input=stdin, capture_output=True, text=True,
                          timeout=timeout)


def read_imatrix(path):
    r = gguf.GGUFReader(path)
    t = {x.name: np.asarray(x.data, dtype=np.float64).ravel() for x in r.tensors}
    out = {}
    for name in t:
        if name.endswith(".in_sum2"):
            w = name[:-len(".in_sum2")]
            out[w] = (t[name], t[w + ".counts"][0])
    return r, out


@pytest.fixture(scope="module")
def folio_imatrix(tmp_path_factory):
    assert os.path.exists(FOLIO), f"{FOLIO} not built (set FOLIO_BIN)"
    d = tmp_path_factory.mktemp("imatrix")
    text = d / "calib.txt"
    text.write_text(TEXT, encoding="utf-8")
    out = str(d / "imatrix.gguf")
    r = run_folio("imatrix", "-m", MODEL, "-f", str(text), "--ctx-size", str(CTX), "--chunks",
                  str(CHUNKS), "-o", out)
    assert r.returncode == 0, r.stderr
    assert "ETA" in r.stderr  # progress
    return out


def hf_sums():
    import torch
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(2)
    d, f = os.path.split(MODEL)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32)
    model.eval()
    r = run_folio("tokenize", "-m", MODEL, "--add-special", stdin=TEXT)
    assert r.returncode == 0, r.stderr
    ids = [int(x) for x in r.stdout.split()]
    add_bos, bos = vocab_bos(MODEL)
    sums = {}

    def hook(name):
        def pre(_module, args):
            x = args[0].detach().double().reshape(-1, args[0].shape[-1])
            s, n = sums.get(name, (0.0, 0))
            sums[name] = (s + (x * x).sum(dim=0).numpy(), n + x.shape[0])
        return pre

    for i, layer in enumerate(model.model.layers):
        for hf, gg in HF_NAMES.items():
            module = layer.get_submodule(hf)
            module.register_forward_pre_hook(hook(f"blk.{i}.{gg}.weight"))
    for c in range(CHUNKS):
        chunk = list(ids[c * CTX:(c + 1) * CTX])
        if add_bos:
            chunk[0] = bos
        with torch.no_grad():
            model(torch.tensor([chunk]))
    return sums


def test_matches_hf_mean_squares(folio_imatrix):
    reader, got = read_imatrix(folio_imatrix)
    assert int(reader.fields["imatrix.chunk_count"].parts[-1][0]) == CHUNKS
    assert int(reader.fields["imatrix.chunk_size"].parts[-1][0]) == CTX
    want = hf_sums()
    assert set(got) == set(want)
    worst = 0.0
    for name, (s, n) in want.items():
        fs, fn = got[name]
        assert fn == n == CHUNKS * CTX, name
        a, b = fs / fn, s / n
        rel = np.abs(a - b) / np.maximum(b, 1e-6 * b.max())
        worst = max(worst, float(np.median(rel)))
        assert np.median(rel) < 2e-3 and np.quantile(rel, 0.99) < 0.05, (name, np.median(rel))
    print(f"worst per-tensor median relative difference: {worst:.2e}")


def weighted_error(base, out, imatrix, name, qtype):
    w = base[name]
    q = gguf.quants.dequantize(np.asarray(out[name].data), qtype).reshape(w.shape)
    s, n = imatrix[name]
    return float(((w - q) ** 2 * (s / n)).sum())


def test_quantizing_with_it_lowers_the_weighted_error(folio_imatrix, tmp_path):
    base = str(tmp_path / "base.gguf")
    assert run_folio("quantize", MODEL, base, "--type", "F32").returncode == 0
    _, imatrix = read_imatrix(folio_imatrix)
    files = {}
    for flag in ("rtn", "imatrix"):
        out = str(tmp_path / f"{flag}.gguf")
        extra = ["--imatrix", folio_imatrix] if flag == "imatrix" else []
        r = run_folio("quantize", base, out, "--type", "Q4_0", "--pure", *extra)
        assert r.returncode == 0, r.stderr
        files[flag] = {t.name: t for t in gguf.GGUFReader(out).tensors}
        if flag == "imatrix":
            meta = gguf.GGUFReader(out).fields
            assert bytes(meta["quantize.method"].parts[-1]).decode() == "imatrix"
            assert int(meta["quantize.imatrix.chunks_count"].parts[-1][0]) == CHUNKS
    weights = {t.name: np.asarray(t.data, dtype=np.float64).reshape(t.shape[::-1])
               for t in gguf.GGUFReader(base).tensors if t.name in imatrix}
    better = 0
    for name in imatrix:
        e_rtn = weighted_error(weights, files["rtn"], imatrix, name, gguf.GGMLQuantizationType.Q4_0)
        e_imp = weighted_error(weights, files["imatrix"], imatrix, name, gguf.GGMLQuantizationType.Q4_0)
        better += e_imp < e_rtn
    assert better == len(imatrix), f"only {better}/{len(imatrix)} tensors improved"


def test_bad_imatrix_is_a_clear_error(tmp_path):
    base = str(tmp_path / "base.gguf")
    assert run_folio("quantize", MODEL, base, "--type", "F32").returncode == 0
    r = run_folio("quantize", base, str(tmp_path / "o.gguf"), "--type", "Q4_0", "--imatrix", MODEL)
    assert r.returncode != 0 and "not an imatrix" in r.stderr, r.stderr
    r = run_folio("imatrix", "-m", MODEL, "-f", str(tmp_path / "missing.txt"))
    assert r.returncode != 0 and "cannot open text file" in r.stderr, r.stderr


def hf_inputs(names):
    """HF transformers' fp32 inputs X (rows x cols) of the named block linears on the test chunks."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(2)
    d, f = os.path.split(MODEL)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32)
    model.eval()
    r = run_folio("tokenize", "-m", MODEL, "--add-special", stdin=TEXT)
    ids = [int(x) for x in r.stdout.split()]
    add_bos, bos = vocab_bos(MODEL)
    xs = {}

    def hook(name):
        def pre(_module, args):
            xs.setdefault(name, []).append(args[0].detach().double().reshape(-1, args[0].shape[-1]))
        return pre

    for i, layer in enumerate(model.model.layers):
        for hf, gg in HF_NAMES.items():
            name = f"blk.{i}.{gg}.weight"
            if name in names:
                layer.get_submodule(hf).register_forward_pre_hook(hook(name))
    for c in range(CHUNKS):
        chunk = list(ids[c * CTX:(c + 1) * CTX])
        if add_bos:
            chunk[0] = bos
        with torch.no_grad():
            model(torch.tensor([chunk]))
    return {k: torch.cat(v).numpy() for k, v in xs.items()}


def test_gptq_lowers_every_layers_output_error(tmp_path):
    """||W X - Q X|| on HF's activations of the calibration chunks: GPTQ below RTN on every linear."""
    base = str(tmp_path / "base.gguf")
    assert run_folio("quantize", MODEL, base, "--type", "F32").returncode == 0
    text = tmp_path / "calib.txt"
    text.write_text(TEXT, encoding="utf-8")
    files = {}
    for method in ("rtn", "gptq"):
        out = str(tmp_path / f"{method}.gguf")
        extra = ["--calibration", str(text), "--calibration-ctx", str(CTX), "--calibration-chunks",
                 str(CHUNKS)] if method == "gptq" else []
        r = run_folio("quantize", base, out, "--type", "Q4_K_M", "--method", method, *extra)
        assert r.returncode == 0, r.stderr
        files[method] = {t.name: t for t in gguf.GGUFReader(out).tensors}
    meta = gguf.GGUFReader(str(tmp_path / "gptq.gguf")).fields
    assert bytes(meta["quantize.method"].parts[-1]).decode() == "gptq"
    assert int(meta["quantize.calibration.chunks"].parts[-1][0]) == CHUNKS
    weights = {t.name: np.asarray(t.data, dtype=np.float64).reshape(t.shape[::-1])
               for t in gguf.GGUFReader(base).tensors if t.name.startswith("blk.") and len(t.shape) == 2}
    X = hf_inputs(set(weights))
    assert set(X) == set(weights)
    ratios = []
    for name, w in weights.items():
        errs = {}
        for method, tensors in files.items():
            t = tensors[name]
            q = gguf.quants.dequantize(np.asarray(t.data), t.tensor_type).reshape(w.shape)
            errs[method] = float(np.linalg.norm((w - q) @ X[name].T))
        ratios.append(errs["gptq"] / errs["rtn"])
        assert errs["gptq"] < errs["rtn"], (name, errs)
    print(f"||WX - QX|| gptq / rtn: median {np.median(ratios):.3f}, worst {max(ratios):.3f}")


def test_gptq_flags_are_checked(tmp_path):
    r = run_folio("quantize", MODEL, str(tmp_path / "o.gguf"), "--type", "Q4_0", "--method", "gptq")
    assert r.returncode != 0 and "--calibration" in r.stderr, r.stderr
    r = run_folio("quantize", MODEL, str(tmp_path / "o.gguf"), "--type", "Q4_0", "--act-order")
    assert r.returncode != 0 and "--act-order" in r.stderr, r.stderr


def test_awq_transform_leaves_the_float_model_unchanged(tmp_path):
    """AWQ folds 1/s into the norms and ffn_up's rows: in fp32 (HF transformers) the transformed
    model's logits equal the base's to float noise, though most weights changed."""
    import torch
    from transformers import AutoModelForCausalLM

    base = str(tmp_path / "base.gguf")
    assert run_folio("quantize", MODEL, base, "--type", "F32").returncode == 0
    text = tmp_path / "calib.txt"
    text.write_text(TEXT, encoding="utf-8")
    out = str(tmp_path / "awq-f32.gguf")
    r = run_folio("quantize", base, out, "--type", "F32", "--method", "awq", "--awq-alpha", "0.5",
                  "--calibration", str(text), "--calibration-ctx", str(CTX), "--calibration-chunks",
                  str(CHUNKS))
    assert r.returncode == 0, r.stderr
    meta = gguf.GGUFReader(out).fields
    assert bytes(meta["quantize.method"].parts[-1]).decode() == "awq"
    a = {t.name: np.asarray(t.data) for t in gguf.GGUFReader(base).tensors}
    b = {t.name: np.asarray(t.data) for t in gguf.GGUFReader(out).tensors}
    changed = [n for n in a if not np.array_equal(a[n], b[n])]
    assert "blk.0.attn_norm.weight" in changed and "blk.0.ffn_up.weight" in changed
    assert "blk.0.attn_q.weight" in changed and "blk.0.ffn_down.weight" in changed

    torch.set_num_threads(2)
    r = run_folio("tokenize", "-m", MODEL, "--add-special", stdin=TEXT)
    ids = torch.tensor([[int(x) for x in r.stdout.split()][:CTX]])
    logits = []
    for path in (base, out):
        d, f = os.path.split(path)
        m = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32)
        with torch.no_grad():
            logits.append(m(ids).logits[0].double())
        del m
    diff = (logits[0] - logits[1]).abs().max().item()
    print(f"max |logit difference| {diff:.2e} (logits up to {logits[0].abs().max().item():.1f})")
    assert diff < 1e-3


def test_awq_flags_are_checked(tmp_path):
    r = run_folio("quantize", MODEL, str(tmp_path / "o.gguf"), "--type", "Q4_0", "--method", "awq")
    assert r.returncode != 0 and "--calibration" in r.stderr, r.stderr
    r = run_folio("quantize", MODEL, str(tmp_path / "o.gguf"), "--type", "Q4_0", "--awq-alpha", "0.5")
    assert r.returncode != 0 and "--awq-alpha" in r.stderr, r.stderr
    r = run_folio("quantize", MODEL, str(tmp_path / "o.gguf"), "--type", "Q4_0", "--awq-clip")
    assert r.returncode != 0 and "--awq-clip is a --method awq option" in r.stderr, r.stderr
    r = run_folio("quantize", MODEL, str(tmp_path / "o.gguf"), "--type", "Q4_0", "--method", "awq",
                  "--calibration", MODEL, "--awq-clip", "--no-awq-clip")
    assert r.returncode != 0 and "contradict" in r.stderr, r.stderr


def test_awq_clipping_search_lowers_the_block_error(tmp_path):
    """On by default for --method awq: on Q4_0 it clips some blocks, and by its own measure
    (sum of e^T H_b e over the clipped linears' blocks) never does worse than not clipping;
    --no-awq-clip gives different weights (the search changed something) and no clip line."""
    text = tmp_path / "calib.txt"
    text.write_text(TEXT, encoding="utf-8")
    common = ["--type", "Q4_0", "--method", "awq", "--calibration", str(text),
              "--calibration-ctx", str(CTX), "--calibration-chunks", str(CHUNKS)]
    clip, plain = str(tmp_path / "clip.gguf"), str(tmp_path / "plain.gguf")
    r = run_folio("quantize", MODEL, clip, *common)
    assert r.returncode == 0, r.stderr
    m = re.search(r"clipping search: (\d+) of (\d+) blocks clipped .*block error (\S+) vs (\S+) "
                  r"unclipped", r.stderr)
    assert m, r.stderr
    clipped, blocks, err, plain_err = int(m[1]), int(m[2]), float(m[3]), float(m[4])
    print(f"\nawq clip: {clipped}/{blocks} blocks clipped, block error {err:.4g} vs {plain_err:.4g}")
    assert 0 < clipped < blocks and err <= plain_err
    r = run_folio("quantize", MODEL, plain, *common, "--no-awq-clip")
    assert r.returncode == 0 and "clipping search" not in r.stderr, r.stderr
    a = {t.name: np.asarray(t.data) for t in gguf.GGUFReader(clip).tensors}
    b = {t.name: np.asarray(t.data) for t in gguf.GGUFReader(plain).tensors}
    assert not np.array_equal(a["blk.0.ffn_down.weight"], b["blk.0.ffn_down.weight"])
    assert np.array_equal(a["blk.0.attn_q.weight"], b["blk.0.attn_q.weight"])  # q is not clipped
