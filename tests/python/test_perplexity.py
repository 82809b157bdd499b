"""`folio perplexity` against an independent reference: HF transformers (fp32, CPU) on the same GGUF.

Run: FOLIO_BIN=build/release/folio .venv/bin/python -m pytest tests/python/test_perplexity.py

The reference computes llama.cpp's llama-perplexity protocol itself (tools/perplexity/perplexity.cpp):
the whole text tokenized (BOS when the vocabulary adds one), non-overlapping chunks of ctx tokens,
each chunk's first token replaced by BOS when the vocabulary adds one, and in each chunk the NLL of
token j+1 under the logits of row j for j in [ctx/2, ctx-2], accumulated in f64; PPL = exp(mean),
uncertainty = PPL * sqrt((mean(nll^2) - mean^2) / (n - 1)). Both sides score the same ids: folio's
own `tokenize --add-special` output, which must also equal the HF `tokenizers` encoding (the builder
tools/gen_tokenizer_goldens.py checks against upstream vectors).

folio runs its fast path (quantized matmuls, 16-bit activations), HF dequantizes the weights to fp32:
the PPLs must agree within 1 % (measured: see test_matches_hf's message with -s).
"""
import importlib.util
import json
import math
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOLIO = os.environ.get("FOLIO_BIN", os.path.join(ROOT, "build", "release", "folio"))
MODEL = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
CTX = 128
CHUNKS = 2

# Written for this test (no third-party text): a little over 2 x 128 tokens.
TEXT = (
    "The old bridge over the river had stood for more than two hundred years. It was built of grey "
    "stone taken from the quarry above the village, and every spring the water rose almost to the "
    "top of its three arches. Children fished from its walls in the summer, and in the winter the "
    "farmers drove their carts across it to the market town on the other side of the valley.\n\n"
    "One autumn the council decided that the bridge was too narrow for the new lorries and that a "
    "concrete one should replace it. The village argued about the plan for months. Some people said "
    "that the old stones were part of their history; others pointed out that the lorries already "
    "had to wait for an hour at the crossing on market days, and that the delays cost everyone "
    "money.\n\n"
    "In the end an engineer from the city suggested a compromise. The new road would cross the river "
    "a little further downstream, where the banks were lower and the ground was firm, and the old "
    "bridge would be kept for people on foot and on bicycles. The work took two years. When the new "
    "bridge opened, the mayor cut a red ribbon, the school band played, and the baker sold more "
    "bread in one morning than he usually sold in a week.\n\n"
    "Today the old bridge is quieter than it has ever been. In the evenings people walk across it "
    "to watch the sun go down behind the hills, and on Sundays there is a small market on the "
    "cobbles where the carts used to pass. Nobody argues about it any more."
)


def run_folio(*args, stdin=None, timeout=120):
    return subprocess.run([FOLIO, *args], input=stdin, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def text_file(tmp_path_factory):
    assert os.path.exists(FOLIO), f"{FOLIO} not built (set FOLIO_BIN)"
    assert os.path.exists(MODEL), f"{MODEL} missing: run scripts/setup"
    path = tmp_path_factory.mktemp("ppl") / "text.txt"
    path.write_text(TEXT, encoding="utf-8")
    return str(path)


def vocab_bos(path):
    """(add_bos, bos id) as the GGUF's tokenizer metadata says."""
    import gguf
    r = gguf.GGUFReader(path)

    def get(key):
        f = r.fields.get(key)
        return None if f is None else f.contents()

    return bool(get("tokenizer.ggml.add_bos_token")), get("tokenizer.ggml.bos_token_id")


@pytest.fixture(scope="module")
def token_ids(text_file):
    """The ids both sides score: folio's tokenizer, checked against HF `tokenizers`."""
    r = run_folio("tokenize", "-m", MODEL, "--add-special", stdin=TEXT)
    assert r.returncode == 0, r.stderr
    ids = [int(x) for x in r.stdout.split()]
    spec = importlib.util.spec_from_file_location(
        "gen_tokenizer_goldens", os.path.join(ROOT, "tools", "gen_tokenizer_goldens.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    hf_tok = mod.build_byte_level_bpe(MODEL, digits_individual=True)
    add_bos, bos = vocab_bos(MODEL)
    want = ([bos] if add_bos else []) + hf_tok.encode(TEXT, add_special_tokens=False).ids
    assert ids == want
    assert len(ids) >= CTX * CHUNKS, f"the test text has only {len(ids)} tokens"
    return ids


def reference_ppl(ids):
    """llama.cpp's protocol over HF transformers' fp32 logits: (ppl, uncertainty, running, n)."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(2)
    d, f = os.path.split(MODEL)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32)
    model.eval()
    add_bos, bos = vocab_bos(MODEL)
    first = CTX // 2
    nll = nll2 = 0.0
    count = 0
    running = []
    for i in range(min(CHUNKS, len(ids) // CTX)):
        chunk = list(ids[i * CTX:(i + 1) * CTX])
        if add_bos:
            chunk[0] = bos
        with torch.no_grad():
            logits = model(torch.tensor([chunk])).logits[0].double()
        logp = torch.log_softmax(logits, dim=-1)
        for j in range(first, CTX - 1):
            v = -logp[j, chunk[j + 1]].item()
            nll += v
            nll2 += v * v
            count += 1
        running.append(math.exp(nll / count))
    mean = nll / count
    var = nll2 / count - mean * mean
    ppl = math.exp(mean)
    return ppl, math.sqrt(var / (count - 1)) * ppl, running, count


def folio_json(text_file, *extra):
    r = run_folio("perplexity", "-m", MODEL, "-f", text_file, "--ctx-size", str(CTX),
                  "--chunks", str(CHUNKS), "-t", "1", "--json", *extra)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def folio_result(text_file):
    return folio_json(text_file)


def test_json_has_the_keys(folio_result, token_ids, text_file):
    out = folio_result
    for key in ["model", "file", "n_tokens", "ctx", "chunks", "scored_tokens", "ppl",
                "ppl_uncertainty", "running_ppl", "seconds", "attention_window",
                "attention_sinks", "kv_cache_dtype"]:
        assert key in out, key
    assert out["n_tokens"] == len(token_ids)  # the same ids as `folio tokenize --add-special`
    assert out["file"] == text_file
    assert out["ctx"] == CTX and out["chunks"] == CHUNKS
    assert out["scored_tokens"] == CHUNKS * (CTX - CTX // 2 - 1)
    assert len(out["running_ppl"]) == CHUNKS
    assert out["running_ppl"][-1] == pytest.approx(out["ppl"], rel=1e-12)
    assert out["attention_window"] == 0 and out["attention_sinks"] == 0  # off: no policy
    assert out["kv_cache_dtype"] == "f32"


def test_matches_hf(folio_result, token_ids):
    ppl, unc, running, count = reference_ppl(token_ids)
    out = folio_result
    assert out["scored_tokens"] == count
    gap = out["ppl"] / ppl - 1
    print(f"\nperplexity ctx {CTX} x {CHUNKS} chunks: folio {out['ppl']:.6f} +/- "
          f"{out['ppl_uncertainty']:.5f}, HF fp32 {ppl:.6f} +/- {unc:.5f}, gap {gap:+.4%}")
    assert abs(gap) < 0.01
    for got, want in zip(out["running_ppl"], running):
        assert got == pytest.approx(want, rel=0.01)
    assert out["ppl_uncertainty"] == pytest.approx(unc, rel=0.05)


def test_text_output_and_small_steps_agree(folio_result, text_file):
    # --batch-size 50: each chunk fed in steps of 50, 50, 28 tokens over one cache; the
    # scored rows start inside the second step. Printed as llama-perplexity prints.
    r = run_folio("perplexity", "-m", MODEL, "-f", text_file, "--ctx-size", str(CTX),
                  "--chunks", str(CHUNKS), "--batch-size", "50", "-t", "1")
    assert r.returncode == 0, r.stderr
    running = [float(x) for x in re.findall(r"\[\d+\](\d+\.\d+),", r.stdout)]
    m = re.search(r"Final estimate: PPL = (\d+\.\d+) \+/- (\d+\.\d+)", r.stdout)
    assert m, r.stdout
    assert len(running) == CHUNKS
    assert float(m.group(1)) == pytest.approx(folio_result["ppl"], rel=1e-3)
    assert float(m.group(2)) == pytest.approx(folio_result["ppl_uncertainty"], rel=1e-2)
    assert "t/s" in r.stderr and "ETA" in r.stderr  # progress


def test_window_wider_than_the_chunk_changes_nothing(folio_result, text_file):
    # Every position of a chunk lies inside a window of ctx tokens, so the policy reads all.
    out = folio_json(text_file, "--attention-window", str(CTX))
    assert out["attention_window"] == CTX and out["attention_sinks"] == 4  # the default sinks
    assert out["ppl"] == pytest.approx(folio_result["ppl"], rel=1e-6)


@pytest.mark.parametrize("args, message", [
    (["--ctx-size", "127"], "--ctx-size must be even"),
    (["--ctx-size", "8"], "--ctx-size must be even and >= 16"),
    (["--chunks", "0"], "--chunks must be >= 1"),
    (["--attention-window", "-1"], "--attention-window must be >= 0"),
    (["--attention-sinks", "2"], "--attention-sinks needs --attention-window"),
    (["--attention-window", "8", "--attention-sinks", "9"],
     "--attention-sinks must be between 0 and --attention-window"),
])
def test_bad_flags_are_errors(text_file, args, message):
    r = run_folio("perplexity", "-m", MODEL, "-f", text_file, *args)
    assert r.returncode != 0
    assert message in r.stderr


def test_missing_file_is_an_error(tmp_path):
    missing = str(tmp_path / "no-such-file.txt")
    r = run_folio("perplexity", "-m", MODEL, "-f", missing)
    assert r.returncode != 0
    assert missing in r.stderr and "No such file" in r.stderr


def test_too_short_text_is_an_error(tmp_path):
    short = tmp_path / "short.txt"
    short.write_text("Only a few words here.", encoding="utf-8")
    r = run_folio("perplexity", "-m", MODEL, "-f", str(short), "--ctx-size", "512")
    assert r.returncode != 0
    m = re.search(r"has (\d+) tokens; --ctx-size 512 needs at least 512", r.stderr)
    assert m, r.stderr
    assert 0 < int(m.group(1)) < 20
