"""`folio serve` holds 1,000 concurrent streaming connections and stays responsive.

Starts the real binary on a free port and opens 1,000 streaming /v1/completions requests at
once with `folio bench serve` (one socket each, all in flight together). While they are open,
the test reads /metrics until the engine reports (almost) all of them admitted — running or
waiting, so the connections really are held concurrently — and times /health, /v1/models and
/tokenize from a separate client: they must answer promptly (the bound is generous: this checks
that the server does not stall or queue other clients behind the streams, not its speed; a new
completion would rightly wait its turn in the engine's FCFS queue). Finally every one of the
1,000 streams must have completed with exactly the requested number of tokens.
"""
import json
import re
import subprocess
import time
import urllib.request

import pytest
from folio_server import FOLIO, running_server

STREAMS = 1000


@pytest.fixture(scope="module")
def server():
    with running_server("--max-model-len", "64", "--max-num-seqs", "64", "--max-queue", "2048",
                        "-t", "2") as srv:
        yield srv["base"]


def gauge(metrics, name):
    m = re.search(rf"^folio:{name}\{{[^}}]*\}} ([0-9.e+]+)$", metrics, re.M)
    return float(m.group(1)) if m else 0.0


def timed(fn):
    t0 = time.monotonic()
    out = fn()
    return out, time.monotonic() - t0


def test_thousand_open_streams_and_other_clients_still_served(server):
    load = subprocess.Popen(
        [FOLIO, "bench", "serve", "--base-url", server, "--num-prompts", str(STREAMS),
         "--max-concurrency", str(STREAMS), "--request-rate", "inf", "--random-input-len", "8",
         "--random-output-len", "4", "--no-warmup", "--disable-progress", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak, health_s, other_s = 0.0, [], []
    deadline = time.time() + 240
    while load.poll() is None and time.time() < deadline:
        with urllib.request.urlopen(server + "/metrics", timeout=30) as r:
            m = r.read().decode()
        held = gauge(m, "num_requests_running") + gauge(m, "num_requests_waiting")
        peak = max(peak, held)
        if held >= 0.9 * STREAMS and len(health_s) < 3:
            # Other clients while ~1,000 streams are open.
            status, dt = timed(lambda: urllib.request.urlopen(server + "/health", timeout=30).status)
            assert status == 200
            health_s.append(dt)
            _, dt = timed(lambda: urllib.request.urlopen(server + "/v1/models", timeout=30).read())
            other_s.append(dt)
            req = urllib.request.Request(server + "/tokenize", data=json.dumps(
                {"prompt": "Hello, world"}).encode(), headers={"Content-Type": "application/json"})
            tok, dt = timed(lambda: json.loads(urllib.request.urlopen(req, timeout=30).read()))
            assert tok["count"] > 0
            other_s.append(dt)
        time.sleep(0.2)
    out, err = load.communicate(timeout=max(1, deadline - time.time()))
    assert load.returncode == 0, err[-2000:]
    res = json.loads(out)
    assert res["completed"] == STREAMS, res["errors"]
    assert res["failed"] == 0
    assert res["output_lens"] == [4] * STREAMS
    assert peak >= 0.9 * STREAMS, f"only {peak} requests were open at once"
    assert health_s, "never saw the streams open at once"
    # Prompt answers while the streams are open (generous bound: no stall, not a speed test).
    assert max(health_s) < 5.0, health_s
    assert max(other_s) < 5.0, other_s
