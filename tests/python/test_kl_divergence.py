"""`folio perplexity` KL divergence: llama.cpp's base log-probability file and the comparison.

Run: FOLIO_BIN=build/release/folio .venv/bin/python -m pytest tests/python/test_kl_divergence.py

The file is read here by an independent numpy reader written from llama.cpp's format
(tools/perplexity/perplexity.cpp: "_logits_", u32 n_ctx, i32 n_vocab, i32 n_chunk, the i32 tokens,
then per chunk n_ctx - 1 - n_ctx/2 rows of [f32 scale][f32 min_log_prob][u16 q x n_vocab][pad to
even], log p = scale * q + min_log_prob). Checked against it:
  - the tokens are folio's `tokenize --add-special` ids, the rows HF transformers' fp32
    log-softmax of the same GGUF (as test_perplexity.py loads it) up to the fast path's error;
  - folio's KLD and same-top of a KV-int4 run against that file equal numpy's, computed as
    llama.cpp does from the base file and the int4 run's own base file (its logits compressed);
  - a run against its own file: KLD only compression noise, 100 % same top; lockstep against
    itself: exactly 0; lockstep against the base model agrees with the file route.
Kept quick: 2 chunks of 128 tokens (126 scored rows).
"""
import json
import math
import os
import struct
import subprocess

import numpy as np
import pytest

from test_perplexity import FOLIO, MODEL, TEXT, vocab_bos

CTX = 128
CHUNKS = 2
FIRST = CTX // 2
ROWS = CTX - 1 - FIRST


def run_folio(*args, timeout=300):
    return subprocess.run([FOLIO, *args], capture_output=True, text=True, timeout=timeout)


def perplexity_json(*args):
    r = run_folio("perplexity", "-m", MODEL, "-t", "1", "--json", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def read_base_file(path):
    """llama.cpp's base log-probability file -> (n_ctx, n_vocab, tokens, log-probs [chunk, row, vocab])."""
    data = open(path, "rb").read()
    assert data[:8] == b"_logits_"
    n_ctx, n_vocab, n_chunk = struct.unpack_from("<Iii", data, 8)
    off = 20
    tokens = np.frombuffer(data, dtype="<i4", count=n_ctx * n_chunk, offset=off)
    off += 4 * n_ctx * n_chunk
    nv = 2 * ((n_vocab + 1) // 2) + 4
    rows = n_ctx - 1 - n_ctx // 2
    assert len(data) == off + 2 * n_chunk * rows * nv, "the file size is exactly its contents"
    raw = np.frombuffer(data, dtype="<u2", offset=off).reshape(n_chunk, rows, nv)
    head = np.ascontiguousarray(raw[:, :, :4]).view("<f4")  # [chunk, row, 2]: scale, floor
    q = raw[:, :, 4:4 + n_vocab].astype(np.float64)
    logp = head[:, :, :1].astype(np.float32) * q.astype(np.float32) + head[:, :, 1:2]
    return n_ctx, n_vocab, tokens, logp.astype(np.float64)


def kld_like_llama(base_logp, cand_logp, targets):
    """llama.cpp's per-row statistics of a candidate against a stored base."""
    p = np.exp(base_logp)
    kld = np.where(base_logp > -16, p * (base_logp - cand_logp), 0).sum(-1)
    same = np.argmax(base_logp, -1) == np.argmax(cand_logp, -1)
    rows = np.arange(len(targets))
    nll = -cand_logp[rows, targets]
    nll_base = -base_logp[rows, targets]
    return kld, same, nll, nll_base


@pytest.fixture(scope="module")
def text_file(tmp_path_factory):
    assert os.path.exists(FOLIO), f"{FOLIO} not built (set FOLIO_BIN)"
    assert os.path.exists(MODEL), f"{MODEL} missing: run scripts/setup"
    path = tmp_path_factory.mktemp("kld") / "text.txt"
    path.write_text(TEXT, encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def base_file(text_file, tmp_path_factory):
    """The base run (f32 KV) writes its file; returns (path, its JSON)."""
    path = str(tmp_path_factory.mktemp("kld") / "base.bin")
    out = perplexity_json("-f", text_file, "-c", str(CTX), "--chunks", str(CHUNKS),
                          "--kl-divergence-base", path)
    assert out["kl_divergence_base"] == path
    return path, out


@pytest.fixture(scope="module")
def int4_file(text_file, tmp_path_factory):
    """The KV-int4 run's own file: its logits, compressed, for numpy's side of the comparison."""
    path = str(tmp_path_factory.mktemp("kld") / "int4.bin")
    perplexity_json("-f", text_file, "-c", str(CTX), "--chunks", str(CHUNKS),
                    "--kv-cache-dtype", "int4", "--kl-divergence-base", path)
    return path


def chunk_targets(tokens, c):
    return np.asarray(tokens[c * CTX + FIRST + 1:(c + 1) * CTX], dtype=np.int64)


def test_file_holds_the_tokens_and_hf_log_probs(base_file):
    import torch
    from transformers import AutoModelForCausalLM

    path, out = base_file
    n_ctx, n_vocab, tokens, logp = read_base_file(path)
    assert (n_ctx, logp.shape[:2]) == (CTX, (CHUNKS, ROWS))
    r = subprocess.run([FOLIO, "tokenize", "-m", MODEL, "--add-special"], input=TEXT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    ids = [int(x) for x in r.stdout.split()]
    assert list(tokens) == ids[:CTX * CHUNKS]  # as tokenized: chunk 1 starts mid-text, not BOS

    torch.set_num_threads(2)
    d, f = os.path.split(MODEL)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32)
    model.eval()
    assert model.config.vocab_size == n_vocab
    add_bos, bos = vocab_bos(MODEL)
    klds, gaps, same = [], [], 0
    nll = 0.0
    for c in range(CHUNKS):
        chunk = [int(t) for t in tokens[c * CTX:(c + 1) * CTX]]
        if add_bos:
            chunk[0] = bos
        with torch.no_grad():
            logits = model(torch.tensor([chunk])).logits[0].double()
        ref = torch.log_softmax(logits, -1)[FIRST:CTX - 1].numpy()
        got = logp[c]
        top = ref.max(-1, keepdims=True)
        keep = ref > top - 15  # above the file's floor (max - 16) in both
        gaps.append(np.abs(got - ref)[keep].max())
        p = np.exp(ref)
        klds.extend((p * (ref - got)).sum(-1))  # KL(HF || folio's stored rows)
        same += int((ref.argmax(-1) == got.argmax(-1)).sum())
        targets = chunk_targets(tokens, c)
        nll -= ref[np.arange(ROWS), targets].sum()
    hf_ppl = math.exp(nll / (CHUNKS * ROWS))
    print(f"\nbase file vs HF fp32: max |log p gap| {max(gaps):.4f} (top 15 nats), mean KLD "
          f"{np.mean(klds):.6f}, same top {same}/{CHUNKS * ROWS}, PPL folio {out['ppl']:.4f} "
          f"HF {hf_ppl:.4f}")
    # folio's fast path (Q4_1 x 16-bit activations) against fp32: the rows differ by that path's
    # error, not the format's (a misread layout gives KLDs of whole nats).
    assert abs(np.mean(klds)) < 0.01  # (stored rows sum to 1 only up to rounding: may be < 0)
    assert max(gaps) < 1.0
    assert same >= 0.95 * CHUNKS * ROWS
    assert out["ppl"] == pytest.approx(hf_ppl, rel=0.01)


def test_kld_matches_numpy(base_file, int4_file):
    path, _ = base_file
    out = perplexity_json("--kl-divergence-base", path, "--kl-divergence",
                          "--kv-cache-dtype", "int4")
    k = out["kl_divergence"]
    assert k["base"] == path and not k["lockstep"]
    assert out["ctx"] == CTX and out["chunks"] == CHUNKS
    assert k["scored_tokens"] == CHUNKS * ROWS
    _, _, tokens, base = read_base_file(path)
    _, _, _, cand = read_base_file(int4_file)
    kld, same, nll, nll_base = [], [], [], []
    for c in range(CHUNKS):
        a, b, x, y = kld_like_llama(base[c], cand[c], chunk_targets(tokens, c))
        kld += list(a)
        same += list(b)
        nll += list(x)
        nll_base += list(y)
    kld = np.array(kld)
    print(f"\nKV int4 vs f32: folio mean KLD {k['kld']['value']:.6f} +/- "
          f"{k['kld']['uncertainty']:.6f}, numpy {kld.mean():.6f}; same top folio "
          f"{k['same_top']['value']:.4f} numpy {np.mean(same):.4f}")
    # numpy sees the candidate's logits through the file's rounding (<= 1.2e-4 nats a value).
    assert k["kld"]["value"] == pytest.approx(kld.mean(), abs=3e-4)
    assert k["kld"]["value"] > 0.005  # int4 KV is measurably off
    assert abs(k["same_top"]["value"] - np.mean(same)) <= 1.5 / len(same)
    n = len(kld)
    assert k["kld"]["uncertainty"] == pytest.approx(kld.std() / math.sqrt(n - 1), rel=0.02)
    assert k["ppl_base"]["value"] == pytest.approx(math.exp(np.mean(nll_base)), rel=1e-5)
    assert k["ppl"]["value"] == pytest.approx(math.exp(np.mean(nll)), rel=1e-3)
    assert k["kld_quantiles"]["max"] == pytest.approx(kld.max(), abs=3e-4)
    assert k["kld_quantiles"]["median"] == pytest.approx(np.median(kld), abs=3e-4)
    assert len(k["running"]) == CHUNKS
    assert k["running"][-1]["kld"] == pytest.approx(k["kld"]["value"], rel=1e-12)


def test_own_file_is_only_compression_noise(base_file):
    path, base = base_file
    out = perplexity_json("--kl-divergence-base", path, "--kl-divergence")
    k = out["kl_divergence"]
    print(f"\nown file: mean KLD {k['kld']['value']:.3g}, max {k['kld_quantiles']['max']:.3g}, "
          f"RMS dp {k['rms_p_diff']['value']:.3g}")
    assert abs(k["kld"]["value"]) < 1e-5
    assert k["kld_quantiles"]["max"] < 1.2e-4
    assert k["same_top"]["value"] == 1.0
    assert k["rms_p_diff"]["value"] < 1e-4
    assert out["ppl"] == pytest.approx(base["ppl"], rel=1e-5)  # the candidate's own PPL


def test_lockstep(text_file, base_file):
    args = ["-f", text_file, "-c", str(CTX), "--chunks", str(CHUNKS),
            "--kl-divergence-base-model", MODEL]
    same = perplexity_json(*args)["kl_divergence"]
    assert same["lockstep"] and same["base"] == MODEL
    assert same["kld"]["value"] == 0 and same["kld_quantiles"]["max"] == 0
    assert same["same_top"]["value"] == 1.0
    assert same["ppl"]["value"] == same["ppl_base"]["value"]
    int4 = perplexity_json(*args, "--kv-cache-dtype", "int4")["kl_divergence"]
    path, base = base_file
    via_file = perplexity_json("--kl-divergence-base", path, "--kl-divergence",
                               "--kv-cache-dtype", "int4")["kl_divergence"]
    assert int4["kld"]["value"] == pytest.approx(via_file["kld"]["value"], abs=3e-4)
    assert int4["ppl_base"]["value"] == pytest.approx(base["ppl"], rel=1e-9)  # uncompressed
    # The file route sums f32 NLLs (llama.cpp's arithmetic), lockstep f64 ones.
    assert int4["ppl"]["value"] == pytest.approx(via_file["ppl"]["value"], rel=1e-6)


def test_text_output(base_file):
    path, _ = base_file
    r = run_folio("perplexity", "-m", MODEL, "-t", "1", "--kl-divergence-base", path,
                  "--kl-divergence", "--batch-size", "50")
    assert r.returncode == 0, r.stderr
    for label in ["Mean PPL(Q)", "Mean PPL(base)", "Cor(ln(PPL(Q)), ln(PPL(base)))",
                  "Mean ln(PPL(Q)/PPL(base))", "Mean PPL(Q)/PPL(base)", "Mean    KLD:",
                  "Maximum KLD:", "99.9%   KLD:", "99.0%   KLD:", "Median  KLD:", " 1.0%   KLD:",
                  "Minimum KLD:", "RMS Δp    :", "Same top p: 100.000"]:
        assert label in r.stdout, label
    table = [line for line in r.stdout.splitlines() if line[:4].strip().isdigit()]
    assert len(table) == CHUNKS
    assert "ETA" in r.stderr


def write_header(path, n_ctx, n_vocab, n_chunk, rows_bytes=None, tokens=None):
    nv = 2 * ((n_vocab + 1) // 2) + 4
    tokens = tokens if tokens is not None else [0] * (n_ctx * n_chunk)
    rows = n_ctx - 1 - n_ctx // 2
    size = 2 * n_chunk * rows * nv if rows_bytes is None else rows_bytes
    with open(path, "wb") as f:
        f.write(b"_logits_" + struct.pack("<Iii", n_ctx, n_vocab, n_chunk))
        f.write(struct.pack(f"<{len(tokens)}i", *tokens))
        f.write(b"\0" * size)


def test_bad_files_are_clear_errors(base_file, tmp_path):
    path, _ = base_file
    other = tmp_path / "other-vocab.bin"
    write_header(other, 16, 1000, 1)
    r = run_folio("perplexity", "-m", MODEL, "--kl-divergence-base", str(other), "--kl-divergence")
    assert r.returncode != 0
    assert "over 1000 tokens" in r.stderr and "has 49152" in r.stderr, r.stderr

    truncated = tmp_path / "truncated.bin"
    truncated.write_bytes(open(path, "rb").read()[:-10])
    r = run_folio("perplexity", "-m", MODEL, "--kl-divergence-base", str(truncated),
                  "--kl-divergence")
    assert r.returncode != 0 and "truncated (1 whole chunks of 2" in r.stderr, r.stderr

    huge = tmp_path / "huge.bin"  # a header promising terabytes: refused, nothing allocated
    write_header(huge, 1 << 30, 49152, 1 << 30, rows_bytes=0, tokens=[])
    r = run_folio("perplexity", "-m", MODEL, "--kl-divergence-base", str(huge), "--kl-divergence")
    assert r.returncode != 0 and "but its header" in r.stderr, r.stderr

    text = tmp_path / "text.txt"
    text.write_text(TEXT)
    r = run_folio("perplexity", "-m", MODEL, "--kl-divergence-base", str(text), "--kl-divergence")
    assert r.returncode != 0 and 'does not start with "_logits_"' in r.stderr, r.stderr

    r = run_folio("perplexity", "-m", MODEL, "--kl-divergence-base", path, "--kl-divergence",
                  "-c", "256")
    assert r.returncode != 0 and "--ctx-size 256 differs" in r.stderr, r.stderr


@pytest.mark.parametrize("args, message", [
    (["--kl-divergence"], "--kl-divergence needs --kl-divergence-base FILE"),
    (["--kl-divergence-base", "x.bin", "--kl-divergence-base-model", MODEL], "give one"),
])
def test_bad_flags_are_errors(text_file, args, message):
    r = run_folio("perplexity", "-m", MODEL, "-f", text_file, *args)
    assert r.returncode != 0
    assert message in r.stderr, r.stderr
