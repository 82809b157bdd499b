"""`folio bench throughput` flag handling: a bad --decode-concurrency list is rejected with a
message naming the flag and the bad item (before the model loads), and a good one reports one
JSON entry per sequence count."""
import json
import subprocess

import pytest
from folio_server import FOLIO


def run(*args, timeout=120):
    return subprocess.run([FOLIO, "bench", "throughput", "--modes", "", *args],
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("value,item", [("abc", "abc"), ("0", "0"), ("8,x", "x"), ("1,,2", ""),
                                        ("99999", "99999"), ("-3", "-3")])
def test_bad_decode_concurrency_is_a_clear_error(value, item):
    r = run("--decode-concurrency", value)
    assert r.returncode == 1
    assert f"--decode-concurrency '{value}': '{item}' is not a sequence count" in r.stderr
    assert "engine:" not in r.stderr  # rejected before the model loaded


def test_decode_concurrency_reports_each_count():
    r = run("--decode-concurrency", "1,3", "--decode-input", "8", "--decode-output", "4",
            "--max-model-len", "64", "--kv-cache-memory", "16MiB", "-t", "2", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout[r.stdout.index("{"):])
    assert sorted(report["decode"]) == ["1", "3"]
    for entry in report["decode"].values():
        assert entry["decode_tokens_per_s"] > 0


@pytest.mark.parametrize("dtype", ["int8", "int4"])
def test_quantized_kv_caches_run(dtype):
    r = run("--decode-concurrency", "2", "--decode-input", "8", "--decode-output", "4",
            "--max-model-len", "64", "--kv-cache-memory", "16MiB", "-t", "2", "--json",
            "--kv-cache-dtype", dtype)
    assert r.returncode == 0, r.stderr
    assert dtype in r.stderr  # the engine summary names the cache type
    assert json.loads(r.stdout[r.stdout.index("{"):])["decode"]["2"]["decode_tokens_per_s"] > 0


def test_unknown_kv_cache_dtype_is_refused():
    r = run("--decode-concurrency", "2", "--kv-cache-dtype", "fp8")
    assert r.returncode == 1
    assert "--kv-cache-dtype fp8" in r.stderr and "int4" in r.stderr
