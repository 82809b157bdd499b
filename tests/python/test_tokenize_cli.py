"""`folio tokenize` / `folio detokenize` against Hugging Face `tokenizers`.

Run: FOLIO_BIN=build/release/folio .venv/bin/python -m pytest tests/python/test_tokenize_cli.py
The HF reference is built from the same GGUF as in tools/gen_tokenizer_goldens.py (whose builder
is checked there against the upstream reference vectors).
"""
import importlib.util
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOLIO = os.environ.get("FOLIO_BIN", os.path.join(ROOT, "build", "release", "folio"))
MODEL = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")

INPUTS = [
    "Hello world",
    "Hello world\n",
    "Hello world\n\n\n",
    "\n",
    "  leading spaces and trailing   ",
    "<|im_start|>user\nWhat is 12345 * 678?<|im_end|>\n",
    "def f(x):\n\treturn x ** 2  # 🚀 emoji\r\n",
    "中文和English混合，数字3.14159。\n",
]


def _gen_module():
    spec = importlib.util.spec_from_file_location(
        "gen_tokenizer_goldens", os.path.join(ROOT, "tools", "gen_tokenizer_goldens.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def hf():
    assert os.path.exists(FOLIO), f"{FOLIO} not built (set FOLIO_BIN)"
    assert os.path.exists(MODEL), f"{MODEL} missing: run scripts/setup"
    return _gen_module().build_byte_level_bpe(MODEL, digits_individual=True)


def folio(*args, stdin: bytes):
    return subprocess.run([FOLIO, *args], input=stdin, capture_output=True, timeout=60)


@pytest.mark.parametrize("text", INPUTS)
@pytest.mark.parametrize("parse_special", [False, True])
def test_tokenize_matches_hf(hf, text, parse_special):
    args = ["tokenize", "-m", MODEL] + (["--parse-special"] if parse_special else [])
    r = folio(*args, stdin=text.encode())
    assert r.returncode == 0, r.stderr.decode()
    out = r.stdout.decode()
    assert out.endswith("\n") and out.count("\n") == 1
    hf.encode_special_tokens = not parse_special
    want = hf.encode(text, add_special_tokens=False).ids
    hf.encode_special_tokens = False
    assert [int(x) for x in out.split()] == want


@pytest.mark.parametrize("text", INPUTS)
def test_detokenize_writes_exact_bytes(hf, text):
    ids = hf.encode(text, add_special_tokens=False).ids
    r = folio("detokenize", "-m", MODEL, stdin=" ".join(map(str, ids)).encode())
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == text.encode()  # trailing newlines included
    assert r.stdout.decode() == hf.decode(ids, skip_special_tokens=False)


def test_round_trip_of_arbitrary_bytes():
    data = bytes(range(32, 128)) + b"\xff\xfe caf\xc3\xa9 \xe4\xb8\xad\n\n"
    ids = folio("tokenize", "-m", MODEL, stdin=data)
    assert ids.returncode == 0
    back = folio("detokenize", "-m", MODEL, stdin=ids.stdout)
    # SmolLM2 has no token for the bytes 0xFE/0xFF: they are dropped, as HF does.
    assert back.stdout == data.replace(b"\xff", b"").replace(b"\xfe", b"")


def test_empty_input():
    r = folio("tokenize", "-m", MODEL, stdin=b"")
    assert r.returncode == 0 and r.stdout == b"\n"
    r = folio("detokenize", "-m", MODEL, stdin=b"")
    assert r.returncode == 0 and r.stdout == b""


@pytest.mark.parametrize("bad", [b"12 abc", b"-1", b"99999999", b"1.5"])
def test_invalid_id_is_a_clear_error(bad):
    r = folio("detokenize", "-m", MODEL, stdin=bad)
    assert r.returncode != 0
    assert b"invalid token id" in r.stderr


def test_add_special_uses_metadata():
    # SmolLM2 does not add BOS (tokenizer.ggml.add_bos_token = false).
    a = folio("tokenize", "-m", MODEL, "--add-special", stdin=b"Hi")
    b = folio("tokenize", "-m", MODEL, stdin=b"Hi")
    assert a.stdout == b.stdout
