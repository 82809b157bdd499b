"""`folio bench serve` end to end against the real `folio serve`.

Starts the binary (FOLIO_BIN, default build/release/folio) with the default model on a free
localhost port, runs a small load with --json and checks the counts and latency invariants
against what was asked: every request completes with exactly --random-output-len tokens
(ignore_eos), as the server's own usage reports them.
"""
import json
import subprocess

import pytest
from folio_server import FOLIO, free_port, running_server

@pytest.fixture(scope="module")
def server():
    with running_server("--served-model-name", "smollm2", "--max-model-len", "256",
                        "--max-num-seqs", "4", "--kv-cache-memory", "64MiB", "-t", "2") as srv:
        yield srv["base"]


def bench(base, *extra, timeout=60):
    return subprocess.run(
        [FOLIO, "bench", "serve", "--base-url", base, "--num-prompts", "6",
         "--random-input-len", "16", "--random-output-len", "8", "--max-concurrency", "3",
         "--disable-progress", *extra],
        capture_output=True, text=True, timeout=timeout)


def test_small_load_completes_with_exact_lengths(server):
    r = bench(server, "--json", "--goodput", "e2el:60000")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)  # --json: stdout holds only the JSON
    assert res["completed"] == 6
    assert res["failed"] == 0
    assert res["model_id"] == "smollm2"  # from GET /v1/models
    assert res["total_output_tokens"] == 48
    assert res["output_tokens_source"] == "usage"
    assert res["output_len_mismatches"] == 0
    assert res["total_input_tokens"] == 6 * 16
    assert res["output_lens"] == [8] * 6
    assert res["input_lens"] == [16] * 6
    assert res["max_concurrency"] == 3
    assert res["request_rate"] == "inf"
    for ttft, e2e in zip(res["ttfts"], res["e2els"]):
        assert 0 < ttft <= e2e
    assert 0 < res["median_ttft_ms"] <= res["p99_ttft_ms"]
    assert res["mean_ttft_ms"] <= res["mean_e2el_ms"]
    assert res["median_tpot_ms"] > 0 and res["median_itl_ms"] > 0
    assert res["duration"] >= max(res["e2els"])
    assert res["request_throughput"] == pytest.approx(6 / res["duration"])
    assert res["output_throughput"] == pytest.approx(48 / res["duration"])
    assert res["request_goodput"] == pytest.approx(res["request_throughput"])
    assert "Serving Benchmark Result" in r.stderr  # the table moves to stderr


def test_table_and_saved_result(server, tmp_path):
    out = tmp_path / "res.json"
    r = bench(server, "--request-rate", "50", "--burstiness", "2", "--no-warmup",
              "--save-result", "--result-filename", str(out))
    assert r.returncode == 0, r.stderr
    assert "Successful requests:" in r.stdout and "Mean TTFT (ms):" in r.stdout
    saved = json.loads(out.read_text())
    assert saved["completed"] == 6 and saved["request_rate"] == 50 and saved["burstiness"] == 2


def test_bad_flags_and_unreachable_server_fail_clearly(server):
    r = bench(server, "--request-rate", "fast")
    assert r.returncode != 0 and "--request-rate" in r.stderr
    r = bench(server, "--goodput", "ttft")
    assert r.returncode != 0 and "--goodput" in r.stderr
    r = bench(f"http://127.0.0.1:{free_port()}")
    assert r.returncode != 0 and "is the server up?" in r.stderr
