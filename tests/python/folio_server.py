"""Shared by the tests that need a running `folio serve`: the binary, the default model, and a
context manager that starts the server on a free localhost port, waits for /health, and stops
it with SIGTERM afterwards (recording the exit code)."""
import contextlib
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLIO = os.environ.get("FOLIO_BIN", str(ROOT / "build/release/folio"))
MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_server(*flags, model=MODEL, tls=None):
    """Yields {"base", "port", "proc"}; after the block, "exit_code" holds the SIGTERM exit code.
    model=None: no positional model (the flags name them: -m, --config).
    tls: an ssl.SSLContext trusting the server's certificate when the flags turn HTTPS on
    (then "base" is https://...)."""
    assert model is None or model.exists(), f"{model} missing: run scripts/setup"
    port = free_port()
    positional = [] if model is None else [str(model)]
    proc = subprocess.Popen(
        [FOLIO, "serve", *positional, "--host", "127.0.0.1", "--port", str(port), *flags],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(base + "/health", timeout=1, context=tls) as r:
                if r.status == 200:
                    break
        except Exception:
            time.sleep(0.2)
        assert proc.poll() is None, proc.stdout.read()
    else:
        proc.kill()
        pytest.fail("folio serve did not become healthy")
    info = {"base": base, "port": port, "proc": proc, "exit_code": None}
    try:
        yield info
    finally:
        proc.terminate()
        try:
            info["exit_code"] = proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
