"""Hugging Face checkpoint directories (safetensors, GPTQ, AutoAWQ) vs numpy and HF transformers.

Run: FOLIO_BIN=build/release/folio .venv/bin/python -m pytest -q tests/python/test_hf_checkpoint.py
(FOLIO_HF_ALL=1: every tensor also dequantized straight from the directory, and gguf-py on every
variant's converted file; slower.)

The checkpoints come from tools/gen_hf_checkpoints.py (tiny random llama / qwen2 / gemma3 models
with SmolLM2's tokenizer, packed by numpy in upstream's layouts), written once per session into a
pytest tmp dir and removed at the end. For each packed variant the generator also writes the numpy
reference: every packed linear dequantized to float32, as a checkpoint transformers loads.

  1. weights, every tensor of every variant against the reference (read here with the safetensors
     library, HF names mapped to llama.cpp's, Llama's q/k rows permuted as convert_hf_to_gguf.py's
     permute() does, Gemma's norms + 1): `folio dequant` of the GGUF `folio convert` wrote, and
     of the directory (`--list` and a permuted matrix; the same in-memory image). Bit-exact where
     the mapping is exact (F32/F16/BF16 carried, GPTQ sym -> Q4_0, 8-bit sym -> Q8_0); asym GPTQ
     and AWQ -> Q4_1 within the fp16 rounding of the block minimum -zero*scale; act-order groups
     that cross 32-column blocks -> F16 within fp16 rounding. gguf-py reads the written GGUF with
     those types, config.json's metadata and (gguf.quants.dequantize) the same values.
  2. logits: folio's log-probabilities (`perplexity --kl-divergence-base`, llama.cpp's file) on
     the packed checkpoint against HF transformers fp32 on the reference checkpoint (with the
     fp16 roundings that Q4_1 / F16 mappings promise put into HF's weights).
  3. broken checkpoints: exit status 1 and an error naming the file, tensor or field.
  4. tokenizer: `folio tokenize -m DIR` gives the ids of `-m` SmolLM2's GGUF.
A folio without checkpoint support fails every test (there is no skip).
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLIO = os.environ.get("FOLIO_BIN", str(ROOT / "build" / "release" / "folio"))
GGUF_MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def _load_generator():
    spec = importlib.util.spec_from_file_location(
        "gen_hf_checkpoints", ROOT / "tools" / "gen_hf_checkpoints.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


GEN = _load_generator()

# What each variant's packed linears become in the GGUF, and how they compare with the reference:
#   exact  float32 bit patterns equal
#   min16  Q4_1: d = scale (fp16, exact), m = -zero*scale rounded to fp16: per weight
#          |delta| <= 2^-11 |zero*scale| (the fp16 rounding of m) + 2^-22 (|w| + |zero*scale|)
#          (f32 rounding of d*q + m) + 2^-25 (fp16 subnormal spacing)
#   f16    the dequantized weight rounded to fp16: |delta| <= 2^-11 |w| + 2^-25
LINEAR = {
    "llama-f16": ("F16", "exact"),
    "llama-f16-sharded": ("F16", "exact"),
    "llama-bf16": ("BF16", "exact"),
    "llama-f32": ("F32", "exact"),
    "qwen2-f16": ("F16", "exact"),
    "llama-gptq-sym-g32": ("Q4_0", "exact"),
    "llama-gptq-sym-g128": ("Q4_0", "exact"),
    "llama-gptq-sym-gall": ("Q4_0", "exact"),
    "llama-gptq-asym-g64": ("Q4_1", "min16"),
    "llama-gptq-v2-asym-g32": ("Q4_1", "min16"),
    "llama-gptq-actorder-g64": ("F16", "f16"),
    "llama-gptq-actorder-static": ("Q4_0", "exact"),
    "llama-gptq-sym-g64-nogidx": ("Q4_0", "exact"),
    "llama-gptq-8bit-sym": ("Q8_0", "exact"),
    "llama-awq-g64": ("Q4_1", "min16"),
    "llama-awq-g128": ("Q4_1", "min16"),
    "qwen2-gptq-sym-g32": ("Q4_0", "exact"),
    "gemma3-bf16": ("BF16", "exact"),
    "gemma3-gptq-sym-g32": ("Q4_0", "exact"),
}
VARIANTS = list(LINEAR)

HF_TO_GGUF = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.o_proj.weight": "attn_output.weight",
    "self_attn.q_proj.bias": "attn_q.bias",
    "self_attn.k_proj.bias": "attn_k.bias",
    "self_attn.v_proj.bias": "attn_v.bias",
    "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
}
GEMMA3_TO_GGUF = dict(HF_TO_GGUF, **{  # llama.cpp's gemma3 names: a norm before and after each
    "post_attention_layernorm.weight": "post_attention_norm.weight",
    "pre_feedforward_layernorm.weight": "ffn_norm.weight",
    "post_feedforward_layernorm.weight": "post_ffw_norm.weight",
    "self_attn.q_norm.weight": "attn_q_norm.weight",
    "self_attn.k_norm.weight": "attn_k_norm.weight",
})


def gguf_block_name(arch: str, hf: str) -> str:
    """model.layers.N.<rest> -> blk.N.<llama.cpp's name>."""
    parts = hf.split(".")
    table = GEMMA3_TO_GGUF if arch == "gemma3" else HF_TO_GGUF
    return f"blk.{int(parts[2])}.{table['.'.join(parts[3:])]}"


def run_folio(*args, stdin: str | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    assert os.path.exists(FOLIO), f"{FOLIO} not built (set FOLIO_BIN)"
    return subprocess.run([FOLIO, *args], input=stdin, capture_output=True, text=True,
                          timeout=timeout)


# ---- the checkpoints and the reference -------------------------------------------------------

@pytest.fixture(scope="session")
def checkpoints(tmp_path_factory):
    """manifest["variants"][name] = {"dir", "ref", "arch", "config", ...}; removed at the end."""
    assert GGUF_MODEL.exists(), f"{GGUF_MODEL} missing: run scripts/setup"
    out = tmp_path_factory.mktemp("hf_checkpoints")
    manifest = GEN.generate(out)
    assert sorted(manifest["variants"]) == sorted(LINEAR), "every variant needs an expectation"
    yield manifest["variants"]
    shutil.rmtree(out, ignore_errors=True)  # ~450 MB


def llama_permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """convert_hf_to_gguf.py LlamaModel.permute(): HF rotate-half rows -> GGUF interleaved pairs."""
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def read_checkpoint(d: str) -> dict[str, np.ndarray]:
    """Every tensor of every *.safetensors in d, as float32 / int32 numpy (safetensors + torch)."""
    from safetensors import safe_open
    out = {}
    for f in sorted(Path(d).glob("*.safetensors")):
        with safe_open(str(f), "pt") as sf:
            for k in sf.keys():
                t = sf.get_tensor(k)
                out[k] = (t.float() if t.is_floating_point() else t).numpy()
    return out


def to_gguf(info: dict, hf: str, w: np.ndarray) -> tuple[str, np.ndarray]:
    """An HF tensor as llama.cpp's converter writes it: its GGUF name and values (Llama's q/k
    rows permuted; Gemma's norms + 1, added in float32 as HF's Gemma3RMSNorm does)."""
    cfg, arch = info["config"], info["arch"]
    if arch == "gemma3" and hf.endswith("norm.weight") and w.ndim == 1:
        w = w + np.float32(1)
    if hf == "model.embed_tokens.weight":
        return "token_embd.weight", w
    if hf == "lm_head.weight":
        return "output.weight", w
    if hf == "model.norm.weight":
        return "output_norm.weight", w
    if arch == "llama" and hf.endswith("self_attn.q_proj.weight"):
        w = llama_permute(w, cfg["num_attention_heads"])
    elif arch == "llama" and hf.endswith("self_attn.k_proj.weight"):
        w = llama_permute(w, cfg["num_key_value_heads"])
    return gguf_block_name(arch, hf), w


def expected_gguf(info: dict) -> dict[str, tuple[np.ndarray, str, str]]:
    """GGUF name -> (float32 values [rows, cols] or [n], type, comparison) from the reference."""
    plain = info["dtype"]  # F32, F16 or BF16: carried as stored
    packed = set(zero_scale(info)) if info["quantization_config"] is not None else set()
    out = {}
    for hf, w in read_checkpoint(info["ref"]).items():
        if hf.endswith("rotary_emb.inv_freq"):
            continue  # a buffer old transformers saved; converters drop it
        name, w = to_gguf(info, hf, w)
        if w.ndim == 1:
            out[name] = (w, "F32", "exact")
        elif hf in packed:
            out[name] = (w, *LINEAR[info["name"]])
        else:
            out[name] = (w, plain, "exact")
    if info["tied"]:
        # llama.cpp's converter writes no output.weight for tied embeddings; a copy must be equal.
        out["output.weight?"] = out["token_embd.weight"]
    return out


def match_names(want: dict, have) -> None:
    """Resolves the optional tied output.weight against the names folio wrote, then compares."""
    tied = want.pop("output.weight?", None)
    if tied is not None and "output.weight" in have:
        want["output.weight"] = tied
    assert sorted(have) == sorted(want), "tensor names differ from llama.cpp's"


_zero_scale_cache: dict[str, dict[str, np.ndarray]] = {}


def zero_scale(info: dict) -> dict[str, np.ndarray]:
    """{HF weight name of each packed linear: |zero * scale| per weight, float32 [out, in]}.

    Read from the packed checkpoint: scales (fp16) and zeros, unpacked here (GPTQ: low bits first
    along the output dim, + 1 for checkpoint_format gptq (v1); AWQ: nibble p holds column
    8c + [0 2 4 6 1 3 5 7][p]). Sets the Q4_1 tolerance and the mapped weights HF runs."""
    if info["dir"] in _zero_scale_cache:
        return _zero_scale_cache[info["dir"]]
    qc = info["quantization_config"]
    st = read_checkpoint(info["dir"])
    out = {}
    for key, qz in st.items():
        if not key.endswith(".qzeros"):
            continue
        prefix = key[: -len("qzeros")]
        scales = st[prefix + "scales"].astype(np.float32)          # [groups, out]
        words = qz.astype(np.int64) & 0xFFFFFFFF
        o = np.arange(scales.shape[1])
        if qc["quant_method"] == "awq":
            inv = np.argsort(GEN.AWQ_ORDER)  # output column 8c + k sits in nibble inv[k]
            zeros = (words[:, o // 8] >> (4 * inv[o % 8])) & 0xF
            g_of_col = np.arange(st[prefix + "qweight"].shape[0]) // qc["group_size"]
        else:
            bits = qc["bits"]
            pf = 32 // bits
            zeros = (words[:, o // pf] >> (bits * (o % pf))) & ((1 << bits) - 1)
            if qc.get("checkpoint_format", "gptq") == "gptq":
                zeros = zeros + 1
            n_in = st[prefix + "qweight"].shape[0] * pf
            g_idx = st.get(prefix + "g_idx")
            g_of_col = (np.arange(n_in) // (n_in if qc["group_size"] == -1 else qc["group_size"])
                        if g_idx is None else g_idx.astype(np.int64))
        out[prefix + "weight"] = np.abs(zeros.astype(np.float32) * scales)[g_of_col].T
    _zero_scale_cache[info["dir"]] = out
    return out


def gguf_zero_scale(info: dict) -> dict[str, np.ndarray]:
    return dict(to_gguf(info, hf, m) for hf, m in zero_scale(info).items())


def compare(name: str, got: np.ndarray, want: np.ndarray, kind: str,
            zs: np.ndarray | None) -> str | None:
    """None, or a description of the first mismatch."""
    want = np.ascontiguousarray(want, dtype=np.float32).reshape(-1)
    if got.size != want.size:
        return f"{name}: {got.size} floats, expected {want.size}"
    if kind == "exact":
        bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
        tol = None
    else:
        a = np.abs(want.astype(np.float64))
        if kind == "min16":
            z = zs.reshape(-1).astype(np.float64)
            tol = 2.0 ** -11 * z + 2.0 ** -22 * (a + z) + 2.0 ** -25
        else:
            tol = 2.0 ** -11 * a + 2.0 ** -25
        bad = np.flatnonzero(~(np.abs(got.astype(np.float64) - want) <= tol))
    if bad.size == 0:
        return None
    i = int(bad[0])
    return (f"{name} ({kind}): {bad.size} of {want.size} differ; first at {i}: "
            f"want {want[i]!r} got {got[i]!r}" + (f" (tolerance {tol[i]:.3g})" if tol is not None
                                                 else ""))


# ---- 1. weights ------------------------------------------------------------------------------

def folio_list(d: str) -> dict[str, tuple[str, list[int]]]:
    r = run_folio("dequant", d, "--list")
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    return {n: (t, [int(x) for x in dims.split("x")]) for n, t, dims in rows}


@pytest.fixture(scope="session")
def converted(checkpoints, tmp_path_factory):
    """variant -> the GGUF `folio convert` wrote for it (once per session)."""
    out = tmp_path_factory.mktemp("hf_converted")
    cache: dict[str, tuple[Path, subprocess.CompletedProcess]] = {}

    def get(variant: str) -> Path:
        if variant not in cache:
            path = out / f"{variant}.gguf"
            cache[variant] = path, run_folio("convert", checkpoints[variant]["dir"], str(path))
        path, r = cache[variant]
        assert r.returncode == 0, f"folio convert {variant}: {r.stderr}"
        return path

    yield get
    shutil.rmtree(out, ignore_errors=True)


# Converting a directory takes ~0.2 s (mostly its 3.5 MB tokenizer.json), so every tensor is
# dequantized from the GGUF `folio convert` wrote (the image every command builds in memory), and
# from the directory itself `--list` (all names, types, dims) and Llama's permuted k (q's
# permutation with the KV head count) must agree with it. FOLIO_HF_ALL=1: every tensor from the
# directory too.
FROM_DIR = ["blk.0.attn_k.weight"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_dequant_every_tensor_matches_numpy(checkpoints, converted, variant, tmp_path):
    info = dict(checkpoints[variant], name=variant)
    want = expected_gguf(info)
    zs = gguf_zero_scale(info) if LINEAR[variant][1] == "min16" else {}
    gguf_path = str(converted(variant))
    listed = folio_list(info["dir"])
    assert folio_list(gguf_path) == listed, "the directory and its converted GGUF differ"
    match_names(want, listed)
    problems = []
    for name, (w, typ, _) in want.items():
        got_type, dims = listed[name]
        if got_type != typ:
            problems.append(f"{name}: type {got_type}, expected {typ}")
        if dims != list(reversed(w.shape)):
            problems.append(f"{name}: dims {dims}, expected {list(reversed(w.shape))} (ggml order)")

    def one(job):
        k, (model, name) = job
        out = tmp_path / f"{k}.f32"
        r = run_folio("dequant", model, name, "--out", str(out))
        if r.returncode != 0:
            return f"{name}: folio dequant {model} failed: {r.stderr.strip()}"
        got = np.fromfile(out, dtype="<f4")
        out.unlink()  # pytest keeps tmp dirs; the embeddings alone are 25 MB a variant
        w, _, kind = want[name]
        p = compare(name, got, w, kind, zs.get(name))
        return p and f"{p} (from {'the directory' if model == info['dir'] else 'the GGUF'})"

    from_dir = want if os.environ.get("FOLIO_HF_ALL") == "1" else FROM_DIR
    jobs = [(gguf_path, n) for n in sorted(want)] + [(info["dir"], n) for n in from_dir]
    with ThreadPoolExecutor(max_workers=2) as pool:  # CI has 2 cores; each run is one process
        problems += [p for p in pool.map(one, enumerate(jobs)) if p]
    assert not problems, "\n".join(problems)


# gguf-py parses the 49152-token vocabulary in ~2 s per file, so the written GGUF is read for a
# subset covering every tensor type (Q4_1, F16, Q8_0, Q4_0, BF16, F32) and the three
# architectures' metadata (FOLIO_HF_ALL=1: every variant).
CONVERT_VARIANTS = VARIANTS if os.environ.get("FOLIO_HF_ALL") == "1" else [
    "llama-gptq-asym-g64", "llama-gptq-actorder-g64", "llama-gptq-8bit-sym",
    "qwen2-gptq-sym-g32", "gemma3-bf16"]


@pytest.mark.parametrize("variant", CONVERT_VARIANTS)
def test_convert_writes_a_gguf_that_gguf_py_reads(checkpoints, converted, variant):
    import gguf
    from gguf.quants import dequantize

    info = dict(checkpoints[variant], name=variant)
    reader = gguf.GGUFReader(str(converted(variant)))
def test_directory_and_converted_file_generate_the_same(checkpoints, converted):
    """`folio run` on the directory and on the GGUF `folio convert` wrote: the same greedy text."""
    d = checkpoints["llama-gptq-sym-g32"]["dir"]
    out = converted("llama-gptq-sym-g32")
    args = ["-p", "The old bridge over the river", "-n", "12", "--temp", "0", "--raw", "-t", "2"]
    a = run_folio("run", "-m", d, *args)
    b = run_folio("run", "-m", str(out), *args)
    assert a.returncode == 0, a.stderr
    assert b.returncode == 0, b.stderr
    assert a.stdout == b.stdout and a.stdout.strip()


# ---- 2. logits -------------------------------------------------------------------------------

CTX = 128
CHUNKS = 2
FIRST = CTX // 2
ROWS = CTX - 1 - FIRST
LOGIT_VARIANTS = ["llama-f16", "llama-gptq-sym-g32", "llama-gptq-asym-g64", "llama-awq-g128",
                  "qwen2-gptq-sym-g32", "gemma3-bf16"]


def mapped_model_weights(info: dict, model) -> None:
    """Puts into HF's model the weights folio's mapping promises, computed from the reference.

    Q4_1 keeps d = scale and rounds the block minimum m = -zero*scale to fp16, so a weight
    becomes w + (fp16(m) - m) (what d*q + fp16(m) gives, up to float32 rounding); the F16
    fallback rounds w to fp16. The exact mappings change nothing. test_dequant_* checks folio's
    weights against these same figures; here the runtime alone is compared."""
    import torch

    kind = LINEAR[info["name"]][1]
    if kind == "exact":
        return
    params = dict(model.named_parameters())
    with torch.no_grad():
        for hf, zs in zero_scale(info).items():
            w = params[hf]
            if kind == "min16":
                m = -torch.from_numpy(zs)
                w += m.half().float() - m
            else:
                w.copy_(w.half().float())


def read_logprob_file(path):
    """llama.cpp's base log-probability file (src/eval/logprob_file.h) -> (tokens, logp)."""
    data = open(path, "rb").read()
    assert data[:8] == b"_logits_"
    n_ctx, n_vocab, n_chunk = struct.unpack_from("<Iii", data, 8)
    assert (n_ctx, n_chunk) == (CTX, CHUNKS)
    off = 20
    tokens = np.frombuffer(data, dtype="<i4", count=n_ctx * n_chunk, offset=off)
    off += 4 * n_ctx * n_chunk
    nv = 2 * ((n_vocab + 1) // 2) + 4
    raw = np.frombuffer(data, dtype="<u2", offset=off).reshape(n_chunk, ROWS, nv)
    head = np.ascontiguousarray(raw[:, :, :4]).view("<f4")
    q = raw[:, :, 4:4 + n_vocab].astype(np.float32)
    return tokens, (head[:, :, :1] * q + head[:, :, 1:2]).astype(np.float64)


@pytest.fixture(scope="module")
def text_file(tmp_path_factory):
    from test_perplexity import TEXT  # the repo's own text, a little over 2 x 128 tokens
    path = tmp_path_factory.mktemp("hf_text") / "text.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def gguf_tokens(text_file):
    r = run_folio("tokenize", "-m", str(GGUF_MODEL), "--add-special",
                  stdin=text_file.read_text(encoding="utf-8"))
    assert r.returncode == 0, r.stderr
    return [int(x) for x in r.stdout.split()]


@pytest.mark.parametrize("variant", LOGIT_VARIANTS)
def test_logprobs_match_hf_transformers(checkpoints, variant, text_file, gguf_tokens, tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    info = checkpoints[variant]
    base = tmp_path / "base.bin"
    r = run_folio("perplexity", "-m", info["dir"], "-f", str(text_file), "-c", str(CTX),
                  "--chunks", str(CHUNKS), "-t", "2", "--kl-divergence-base", str(base), "--json")
    assert r.returncode == 0, r.stderr
    tokens, got = read_logprob_file(base)
    base.unlink()  # 12 MB
    # The directory's tokenizer gives the GGUF's ids (SmolLM2 adds no BOS, so chunks run as is).
    assert list(tokens) == gguf_tokens[:CTX * CHUNKS]

    torch.set_num_threads(2)
    model = AutoModelForCausalLM.from_pretrained(info["ref"], dtype=torch.float32).eval()
    mapped_model_weights(dict(info, name=variant), model)
    worst, klds, margin_rows, agree = 0.0, [], 0, 0
    for c in range(CHUNKS):
        chunk = torch.tensor([[int(t) for t in tokens[c * CTX:(c + 1) * CTX]]])
        with torch.no_grad():
            logits = model(chunk).logits[0].double()
        ref = torch.log_softmax(logits, -1)[FIRST:CTX - 1].numpy()
        g = got[c]
        keep = ref > ref.max(-1, keepdims=True) - 15  # above the file's floor (max - 16)
        worst = max(worst, float(np.abs(g - ref)[keep].max()))
        klds.extend((np.exp(ref) * (ref - g)).sum(-1))
        top2 = np.sort(ref, -1)[:, -2:]
        clear = top2[:, 1] - top2[:, 0] > 0.05  # a top-1 that 0.05 nats separate from the 2nd
        margin_rows += int(clear.sum())
        agree += int((ref.argmax(-1) == g.argmax(-1))[clear].sum())
    kld = float(np.mean(klds))
    print(f"\n{variant}: max |log p - HF| {worst:.4f} (top 15 nats), mean KL(HF||folio) {kld:.2e}, "
          f"same top {agree}/{margin_rows} clear rows of {CHUNKS * ROWS}")
    # Thresholds. folio runs its fast path (16-bit activations into the kernels, f32 KV); the
    # file stores log p to 2.4e-4. A wrong layout costs far more, measured on these models with HF
    # alone (reference vs reference with the fault put in): Llama's q/k rows left unpermuted
    # max |delta| 18 and KL 7; k permuted with n_head instead of n_head_kv in one layer 12 / 1.8;
    # AWQ's nibble order ignored in one down_proj 17 / 5.5; a zero off by one in one up_proj
    # 3.7 / 0.07; two input columns swapped in one v_proj 2.4 / 0.04; Qwen2's q bias dropped
    # 14 / 2.2; Gemma 3's sliding window ignored 5.1 / 0.31, its query_pre_attn_scalar taken as
    # head_dim 0.81 / 0.0095. folio's own error (printed with -s): max |delta| 2e-4 on the float
    # variants (the file's rounding), 5e-3 on the packed ones (16-bit activations), mean KL
    # within +-2e-5 (the file's rows sum to 1 only up to rounding). So 0.05 nats and |KL| 1e-4
    # sit ten times above the noise and 16 / 95 times below the smallest fault; a top-1 that
    # leads by 0.05 nats must always agree. (HF runs the weights the mapping promises: on the
    # exact reference, Q4_1's fp16 minimum alone moves these sensitive models' log p by 0.14.)
    assert worst < 0.05
    assert abs(kld) < 1e-4
    assert agree == margin_rows and margin_rows > CHUNKS * ROWS // 2


# ---- 3. broken checkpoints -------------------------------------------------------------------

def clone(src: str, dst: Path) -> Path:
    """A copy of a checkpoint directory made of hard links; edit only through replace()."""
    dst.mkdir()
    for f in Path(src).iterdir():
        try:
            os.link(f, dst / f.name)
        except OSError:
            shutil.copyfile(f, dst / f.name)
    return dst


def replace(path: Path, data: bytes | str) -> None:
    path.unlink()  # never write through a hard link into the shared checkpoint
    (path.write_bytes if isinstance(data, bytes) else path.write_text)(data)


def edit_config(d: Path, fn) -> None:
    cfg = json.loads((d / "config.json").read_text())
    fn(cfg)
    replace(d / "config.json", json.dumps(cfg, indent=2))


def st_parts(path: Path) -> tuple[dict, bytes]:
    data = path.read_bytes()
    (n,) = struct.unpack_from("<Q", data)
    return json.loads(data[8:8 + n]), data[8 + n:]


def st_join(header: dict, body: bytes) -> bytes:
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + body


def st_edit(d: Path, fname: str, fn) -> None:
    """Rewrites d/fname as fn(tensors) says; tensors: {name: (dtype, array as stored)}."""
    header, body = st_parts(d / fname)
    tensors = {}
    for name, info in header.items():
        if name != "__metadata__":
            a, b = info["data_offsets"]
            arr = np.frombuffer(body[a:b], dtype=GEN.ST_DTYPES[info["dtype"]])
            tensors[name] = (info["dtype"], arr.reshape(info["shape"]))
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name, (dtype, arr) in sorted(fn(tensors).items()):
        b = np.ascontiguousarray(arr).tobytes()
        header[name] = {"dtype": dtype, "shape": list(arr.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    replace(d / fname, st_join(header, b"".join(blobs)))


def no_config(d):
    (d / "config.json").unlink()


def bad_json(d):
    replace(d / "config.json", '{"architectures": ["LlamaForCausalLM"], ')


def unknown_arch(d):
    def f(c):
        c["architectures"] = ["FooBarForCausalLM"]
        c["model_type"] = "foobar"
    edit_config(d, f)


def truncated(d):
    data = (d / "model.safetensors").read_bytes()
    replace(d / "model.safetensors", data[: len(data) // 2])


def header_past_end(d):
    data = (d / "model.safetensors").read_bytes()
    replace(d / "model.safetensors", struct.pack("<Q", len(data)) + data[8:])


def header_huge(d):
    data = (d / "model.safetensors").read_bytes()
    replace(d / "model.safetensors", struct.pack("<Q", (1 << 64) - 1) + data[8:])


def offsets_out_of_range(d):
    header, body = st_parts(d / "model.safetensors")
    a, b = header["model.norm.weight"]["data_offsets"]
    header["model.norm.weight"]["data_offsets"] = [len(body) - 4, len(body) - 4 + (b - a)]
    replace(d / "model.safetensors", st_join(header, body))


def offsets_disagree_with_shape(d):
    header, body = st_parts(d / "model.safetensors")
    a, b = header["model.norm.weight"]["data_offsets"]
    header["model.norm.weight"]["data_offsets"] = [a, b - 2]  # one fp16 short of its shape
    replace(d / "model.safetensors", st_join(header, body))


def weight_wrong_shape(d):
    def f(t):
        dt, v = t["model.layers.1.mlp.up_proj.weight"]
        t["model.layers.1.mlp.up_proj.weight"] = (dt, v[:, :64])
        return t
    st_edit(d, "model.safetensors", f)


def extra_tensor(d):
    def f(t):
        t["model.layers.0.mlp.extra_proj.weight"] = ("F16", np.zeros((8, 8), np.float16))
        return t
    st_edit(d, "model.safetensors", f)


def missing_tensor(d):
    def f(t):
        del t["model.layers.1.mlp.gate_proj.weight"]
        return t
    st_edit(d, "model.safetensors", f)


def qweight_wrong_shape(d):
    def f(t):
        dt, v = t["model.layers.0.self_attn.q_proj.qweight"]
        t["model.layers.0.self_attn.q_proj.qweight"] = (dt, v[:, : v.shape[1] // 2])
        return t
    st_edit(d, "model.safetensors", f)


def scales_wrong_dtype(d):
    def f(t):
        _, v = t["model.layers.0.mlp.down_proj.scales"]
        t["model.layers.0.mlp.down_proj.scales"] = ("F32", v.astype(np.float32))
        return t
    st_edit(d, "model.safetensors", f)


def quant(**kw):
    def edit(d):
        edit_config(d, lambda c: c["quantization_config"].update(kw))
    return edit


def missing_shard(d):
    (d / "model-00002-of-00002.safetensors").unlink()


# (case, source variant, edit, text the error must contain)
BROKEN = [
    ("missing-config", "llama-f16", no_config, r"config\.json"),
    ("config-not-json", "llama-f16", bad_json, r"config\.json"),
    ("unknown-architecture", "llama-f16", unknown_arch, "FooBarForCausalLM"),
    ("truncated-safetensors", "llama-f16", truncated, r"model\.safetensors"),
    ("header-length-past-end", "llama-f16", header_past_end, r"model\.safetensors"),
    ("header-length-huge", "llama-f16", header_huge, r"model\.safetensors"),
    ("data-offsets-out-of-range", "llama-f16", offsets_out_of_range, r"model\.norm\.weight"),
    ("data-offsets-disagree-with-shape", "llama-f16", offsets_disagree_with_shape,
     r"model\.norm\.weight"),
    ("weight-shape-vs-config", "llama-f16", weight_wrong_shape,
     r"model\.layers\.1\.mlp\.up_proj\.weight"),
    ("unexpected-tensor", "llama-f16", extra_tensor, r"model\.layers\.0\.mlp\.extra_proj\.weight"),
    ("missing-tensor", "llama-f16", missing_tensor, r"model\.layers\.1\.mlp\.gate_proj\.weight"),
    ("qweight-shape", "llama-gptq-sym-g32", qweight_wrong_shape,
     r"model\.layers\.0\.self_attn\.q_proj\.qweight"),
    ("scales-dtype", "llama-gptq-sym-g32", scales_wrong_dtype,
     r"model\.layers\.0\.mlp\.down_proj\.scales"),
    ("quant-method-marlin", "llama-gptq-sym-g32", quant(quant_method="marlin"), "marlin"),
    ("quant-method-bitblas", "llama-gptq-sym-g32", quant(quant_method="bitblas"), "bitblas"),
    ("gptq-3-bit", "llama-gptq-sym-g32", quant(bits=3), r"(?i)\b3\b.*bit|bit.*\b3\b"),
    ("awq-gemv", "llama-awq-g64", quant(version="gemv"), "gemv"),
    ("index-names-missing-shard", "llama-f16-sharded", missing_shard,
     r"model-00002-of-00002\.safetensors"),
]


@pytest.mark.parametrize("case,variant,edit,needle", BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_checkpoint_is_a_clear_error(checkpoints, tmp_path, case, variant, edit, needle):
    d = clone(checkpoints[variant]["dir"], tmp_path / "ckpt")
    try:
        edit(d)
        r = run_folio("info", str(d))
    finally:
        shutil.rmtree(d)  # its hard links would keep the session's checkpoints on disk
    # 1 is folio's error exit (main catches and prints); a signal or an abort is a crash.
    assert r.returncode == 1, f"exit {r.returncode}\n{r.stderr}"
    assert r.stderr.startswith("folio: error:"), r.stderr
    message = r.stderr.replace(str(tmp_path), "TMP")  # the needle must not come from the path
    assert re.search(needle, message), f"the error does not name {needle!r}: {r.stderr}"


# ---- 4. tokenizer ----------------------------------------------------------------------------

TEXTS = [
    "Hello world",
    "  leading spaces and trailing   \n\n",
    "<|im_start|>user\nWhat is 12345 * 678?<|im_end|>\n",
    "def f(x):\n\treturn x ** 2  # 🚀 emoji\r\n",
    "中文和English混合，数字3.14159。\n",
]


@pytest.mark.parametrize("variant", ["llama-f16", "qwen2-f16"])  # pair / string merges
@pytest.mark.parametrize("flags", [[], ["--parse-special"], ["--add-special"]])
def test_tokenize_matches_the_gguf(checkpoints, variant, flags):
    text = "\n".join(TEXTS)  # one run per flag: a conversion costs ~0.2 s
    a = run_folio("tokenize", "-m", checkpoints[variant]["dir"], *flags, stdin=text)
    b = run_folio("tokenize", "-m", str(GGUF_MODEL), *flags, stdin=text)
    assert a.returncode == 0, a.stderr
    assert b.returncode == 0, b.stderr
    assert len(b.stdout.split()) > 50
    assert a.stdout == b.stdout


# ---- 5. `folio quantize --format gptq` writes a GPTQ checkpoint that loads back ----------------

@pytest.mark.parametrize("variant,qtype,bits", [("llama-f16", "Q4_0", 4), ("qwen2-f16", "Q8_0", 8)])
def test_quantize_format_gptq_round_trips(checkpoints, tmp_path, variant, qtype, bits):
    """The GPTQ checkpoint folio writes, read back by the numpy reference unpacker (AutoGPTQ's
    reading rules), holds exactly the weights of the GGUF folio quantizes with the same choices
    (--pure, embeddings/head kept in F16), and loading it gives back the same block bytes."""
    import gguf
    from safetensors.numpy import load_file

    v = checkpoints[variant]
    out = tmp_path / "gptq"
    r = run_folio("quantize", v["dir"], str(out), "--type", qtype, "--format", "gptq")
    assert r.returncode == 0, r.stderr
    qc = json.loads((out / "config.json").read_text())["quantization_config"]
    assert qc["quant_method"] == "gptq" and qc["bits"] == bits and qc["group_size"] == 32
    assert qc["sym"] is True and qc["desc_act"] is False and qc["checkpoint_format"] == "gptq"
    assert (out / "tokenizer.json").read_bytes() == (Path(v["dir"]) / "tokenizer.json").read_bytes()

    ref = tmp_path / "ref.gguf"
    r = run_folio("quantize", v["dir"], str(ref), "--type", qtype, "--pure",
                  "--output-tensor-type", "F16", "--token-embedding-type", "F16")
    assert r.returncode == 0, r.stderr
    back = tmp_path / "back.gguf"
    r = run_folio("convert", str(out), str(back))
    assert r.returncode == 0, r.stderr
    assert "linears mapped exactly" in r.stderr

    want = {t.name: t for t in gguf.GGUFReader(str(ref)).tensors}
    got = {t.name: t for t in gguf.GGUFReader(str(back)).tensors}
    linears = [n for n in want if n.startswith("blk.") and want[n].tensor_type.name == qtype]
    assert len(linears) == 7 * v["config"]["num_hidden_layers"]
    for n in linears:
        assert got[n].tensor_type.name == qtype, n
        assert np.array_equal(np.asarray(got[n].data), np.asarray(want[n].data)), n

    # The packed tensors, unpacked by numpy, against the reference GGUF's dequantized blocks.
    st = load_file(str(out / "model.safetensors"))
    cfg = v["config"]
    for hf in sorted(k[: -len(".qweight")] for k in st if k.endswith(".qweight")):
        t = {s: st[f"{hf}.{s}"] for s in ("qweight", "qzeros", "scales", "g_idx")}
        w = GEN.unpack_gptq(t, bits, True, 32)
        name = gguf_block_name(v["arch"], hf + ".weight")
        if v["arch"] == "llama" and name.split(".")[2] in ("attn_q", "attn_k"):
            heads = cfg["num_attention_heads"] if "attn_q" in name else cfg["num_key_value_heads"]
            w = llama_permute(w, heads)
        g = want[name]
        deq = gguf.quants.dequantize(np.asarray(g.data), g.tensor_type).reshape(w.shape)
        assert np.array_equal(w, deq), name


# ---- 6. Gemma 3 with a vision tower: the language model loads, the tower is left out -----------

@pytest.mark.parametrize("layout", ["model.language_model.", "language_model.model."])
def test_gemma3_multimodal_checkpoint_loads_its_language_model(checkpoints, converted, tmp_path,
                                                               layout):
    """Gemma3ForConditionalGeneration (Gemma 3 4B and up): the text-only variant's tensors renamed
    to either of transformers' layouts, a vision tower and projector added, config.json nested
    under text_config. folio must load exactly the text model's tensors and say what it left."""
    import gguf
    import torch
    from safetensors.torch import load_file, save_file

    v = checkpoints["gemma3-bf16"]
    src = Path(v["dir"])
    d = tmp_path / "mm"
    d.mkdir()
    for f in src.iterdir():
        if f.suffix != ".safetensors" and f.name != "config.json":
            shutil.copy(f, d / f.name)
    tensors = {}
    for f in sorted(src.glob("*.safetensors")):
        tensors.update(load_file(str(f)))
    head = "lm_head." if layout == "model.language_model." else "language_model.lm_head."
    renamed = {(head + k[len("lm_head."):] if k.startswith("lm_head.") else layout + k[len("model."):]): t
               for k, t in tensors.items()}
    vision = "model." if layout == "model.language_model." else ""
    renamed[vision + "vision_tower.vision_model.embeddings.patch_embedding.weight"] = torch.ones(8, 3, 2, 2)
    renamed[vision + "multi_modal_projector.mm_input_projection_weight"] = torch.ones(8, 16)
    save_file(renamed, str(d / "model.safetensors"), metadata={"format": "pt"})
    text_config = dict(v["config"])
    text_config.pop("architectures", None)
    text_config["model_type"] = "gemma3_text"
    (d / "config.json").write_text(json.dumps({
        "architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
        "text_config": text_config, "vision_config": {"model_type": "siglip_vision_model"},
        "tie_word_embeddings": text_config.get("tie_word_embeddings", True)}))

    out = tmp_path / "mm.gguf"
    r = run_folio("convert", str(d), str(out))
    assert r.returncode == 0, r.stderr
    assert "vision tower and projector: 2 tensors not loaded" in r.stderr
    want = {t.name: t for t in gguf.GGUFReader(str(converted("gemma3-bf16"))).tensors}
    got = {t.name: t for t in gguf.GGUFReader(str(out)).tensors}
    assert sorted(got) == sorted(want)
    for n, t in want.items():
        assert got[n].tensor_type == t.tensor_type, n
        assert np.array_equal(np.asarray(got[n].data), np.asarray(t.data)), n
    r = run_folio("run", "-m", str(d), "-p", "Hello", "-n", "4", "--temp", "0")
    assert r.returncode == 0, r.stderr
