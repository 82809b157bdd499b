"""The metrics the Gateway API Inference Extension's endpoint picker (EPP) scrapes from a
vLLM-style model server, read from a live `folio serve` the way the EPP reads them: the exact
names deploy/k8s/gie/values.yaml maps, of the right type, moving as their meaning says under
concurrent load.

The EPP (GIE v1.5.0, core-metrics-extractor) reads, per pod, the latest sample of:
  queue length        vllm:num_requests_waiting   gauge  requests waiting for a sequence slot
  running requests    vllm:num_requests_running   gauge  requests in the running batch
  KV-cache usage      vllm:kv_cache_usage_perc    gauge  used fraction of the KV blocks, 0..1
  LoRA adapters       vllm:lora_requests_info     gauge  (labels; folio serves no adapters: "")
  cache config        vllm:cache_config_info      gauge  (labels block_size, num_gpu_blocks;
                                                          folio does not export it: "")
folio exports the first three under its own prefix; gie/values.yaml names them.

Run: FOLIO_BIN=$PWD/build/release/folio .venv/bin/python -m pytest -q tests/python/test_gie_metrics.py
"""
import json
import threading
import time
import urllib.request

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from folio_server import ROOT, running_server

# The EPP's built-in mapping for vLLM (GIE v1.5.0, defaultEngineConfigs "vllm"), the reference.
VLLM = {
    "queuedRequestsSpec": "vllm:num_requests_waiting",
    "runningRequestsSpec": "vllm:num_requests_running",
    "kvUsageSpec": "vllm:kv_cache_usage_perc",
    "loraSpec": "vllm:lora_requests_info",
    "cacheInfoSpec": "vllm:cache_config_info",
}
MAX_NUM_SEQS = 2


def folio_engine_config():
    values = yaml.safe_load((ROOT / "deploy/k8s/gie/values.yaml").read_text())
    ext = values["inferenceExtension"]
    cfg = yaml.safe_load(ext["pluginsCustomConfig"][ext["pluginsConfigFile"]])
    extractor = next(p for p in cfg["plugins"] if p["type"] == "core-metrics-extractor")
    engine, = [e for e in extractor["parameters"]["engineConfigs"] if e["name"] == "folio"]
    return engine


def scrape(base):
    """{family name: (type, [(labels, value)])} as a Prometheus text parser reads /metrics."""
    with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = r.read().decode()
    out = {}
    for fam in text_string_to_metric_families(text):
        out[fam.name] = (fam.type, [(s.labels, s.value) for s in fam.samples])
    return out


def gie_values(base, engine):
    """The three values the EPP takes from one scrape, checked to be one gauge series each."""
    fams = scrape(base)
    got = {}
    for key in ("queuedRequestsSpec", "runningRequestsSpec", "kvUsageSpec"):
        name = engine[key]
        assert name in fams, f"{name} missing from /metrics"
        kind, samples = fams[name]
        assert kind == "gauge", (name, kind)
        assert len(samples) == 1 and "model_name" in samples[0][0], samples
        got[key] = samples[0][1]
    return got


def test_folio_config_is_vllms_under_folios_prefix():
    engine = folio_engine_config()
    for key in ("queuedRequestsSpec", "runningRequestsSpec", "kvUsageSpec"):
        assert engine[key] == VLLM[key].replace("vllm:", "folio:"), key
    # Not exported by folio, so disabled rather than scraped and missing on every poll.
    assert engine["loraSpec"] == "" and engine["cacheInfoSpec"] == ""


@pytest.fixture(scope="module")
def server():
    with running_server("--max-num-seqs", str(MAX_NUM_SEQS), "--max-model-len", "1024") as s:
        yield s


def test_idle_server_reports_an_empty_queue(server):
    v = gie_values(server["base"], folio_engine_config())
    assert v == {"queuedRequestsSpec": 0, "runningRequestsSpec": 0, "kvUsageSpec": 0}


def test_metrics_follow_concurrent_load(server):
    engine = folio_engine_config()
    n = MAX_NUM_SEQS + 4
    errors = []

    def one(i):
        body = {"prompt": f"Story {i}: once upon a time", "max_tokens": 48, "ignore_eos": True}
        req = urllib.request.Request(server["base"] + "/v1/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                r.read()
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    seen = []
    while any(t.is_alive() for t in threads):
        seen.append(gie_values(server["base"], engine))
        time.sleep(0.05)
    for t in threads:
        t.join()
    assert not errors, errors
    waiting = [v["queuedRequestsSpec"] for v in seen]
    running = [v["runningRequestsSpec"] for v in seen]
    usage = [v["kvUsageSpec"] for v in seen]
    # More requests than sequence slots: some wait while MAX_NUM_SEQS run.
    assert max(waiting) >= 1 and max(waiting) <= n - 1, waiting
    assert max(running) == MAX_NUM_SEQS and min(running) >= 0, running
    assert all(w + r <= n for w, r in zip(waiting, running))
    assert all(0.0 <= u <= 1.0 for u in usage) and max(usage) > 0.0, usage
    # Everything finished: the queue drains and the blocks go back (cached ones count as free).
    # The engine publishes its counters at the end of a step: allow it that step.
    deadline = time.time() + 5
    after = gie_values(server["base"], engine)
    while after["runningRequestsSpec"] != 0 and time.time() < deadline:
        time.sleep(0.05)
        after = gie_values(server["base"], engine)
    assert after["queuedRequestsSpec"] == 0 and after["runningRequestsSpec"] == 0
    assert after["kvUsageSpec"] == 0.0
