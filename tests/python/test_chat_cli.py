"""`folio chat`: multi-turn conversation through the engine (history re-rendered per turn)."""
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLIO = os.environ.get("FOLIO_BIN", str(ROOT / "build/release/folio"))


def test_second_turn_uses_the_first():
    # "And of Italy?" is only answerable with the first turn in context.
    r = subprocess.run(
        [FOLIO, "chat", "--temp", "0", "-n", "30", "--max-model-len", "2048",
         "--kv-cache-memory", "64MiB", "-t", "2"],
        input="What is the capital of France?\nAnd of Italy?\n\n", capture_output=True,
        text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    replies = r.stdout.strip().split("\n")
    assert len(replies) == 2, r.stdout
    assert "Paris" in replies[0]
    assert "Rome" in replies[1]


def test_unusable_model_is_a_clear_error(tmp_path):
    vocab = ROOT.parent / "shared" / "tokenizer-vectors" / "ggml-vocab-gpt-2.gguf"
    r = subprocess.run([FOLIO, "chat", "-m", str(vocab)], input="hi\n\n", capture_output=True,
                       text=True, timeout=60)
    assert r.returncode != 0
    assert "error" in r.stderr
