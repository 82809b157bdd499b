"""`folio serve` driven by the official openai client (the independent reference for the API).

Starts the real binary with the default model on a free localhost port, once per module.
"""
import http.client
import json
import os
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

import openai
import pytest
from folio_server import FOLIO, running_server
from prometheus_client.parser import text_string_to_metric_families

NAME = "smollm2"
KEY = "test-key-123"


@pytest.fixture(scope="module")
def server():
    with running_server("--served-model-name", NAME, "--api-key", KEY, "--max-model-len", "1024",
                        "--max-num-seqs", "32", "--kv-cache-memory", "256MiB", "-t", "2") as srv:
        yield srv
    assert srv["exit_code"] == 0, "SIGTERM must exit 0"


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server["base"] + "/v1", api_key=KEY, max_retries=0, timeout=120)


def metrics(server):
    with urllib.request.urlopen(server["base"] + "/metrics", timeout=10) as r:
        text = r.read().decode()
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out.setdefault(s.name, []).append(s)
    return out


def metric_value(server, name):
    return sum(s.value for s in metrics(server).get(name, []))


def test_models_lists_served_name(client):
    assert [m.id for m in client.models.list().data] == [NAME]


def test_chat_completion_greedy(client):
    r = client.chat.completions.create(
        model=NAME, messages=[{"role": "user", "content": "What is the capital of France?"}],
        max_tokens=24, temperature=0)
    c = r.choices[0]
    assert c.message.role == "assistant"
    assert "Paris" in c.message.content
    assert c.finish_reason in ("stop", "length")
    assert r.usage.prompt_tokens > 0
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens


def test_completion_max_tokens_and_length(client):
    r = client.completions.create(model=NAME, prompt="Once upon a time", max_tokens=5,
                                  temperature=0, extra_body={"ignore_eos": True})
    assert r.choices[0].finish_reason == "length"
    assert r.usage.completion_tokens == 5


def test_streaming_matches_non_streaming(client):
    kw = dict(model=NAME, prompt="The three primary colors are", max_tokens=16, temperature=0)
    full = client.completions.create(**kw).choices[0].text
    chunks = list(client.completions.create(stream=True, **kw))
    assert "".join(c.choices[0].text for c in chunks if c.choices) == full


def test_chat_streaming_with_usage(client):
    stream = client.chat.completions.create(
        model=NAME, messages=[{"role": "user", "content": "Say hello."}], max_tokens=8,
        temperature=0, stream=True, stream_options={"include_usage": True})
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0


def test_n_samples_and_seed_reproducible(client):
    kw = dict(model=NAME, prompt="My favourite animal is", max_tokens=12, temperature=1.0,
              n=3, seed=1234)
    a = client.completions.create(**kw)
    b = client.completions.create(**kw)
    assert len(a.choices) == 3
    assert [c.text for c in a.choices] == [c.text for c in b.choices]
    assert sorted(c.index for c in a.choices) == [0, 1, 2]


def test_stop_string(client):
    r = client.completions.create(model=NAME, prompt="1, 2, 3, 4,", max_tokens=30,
                                  temperature=0, stop=[" 7"])
    assert r.choices[0].finish_reason == "stop"
    assert " 7" not in r.choices[0].text


def test_logprobs(client):
    r = client.chat.completions.create(
        model=NAME, messages=[{"role": "user", "content": "Hi"}], max_tokens=4, temperature=0,
        logprobs=True, top_logprobs=3)
    content = r.choices[0].logprobs.content
    assert len(content) == r.usage.completion_tokens
    for tok in content:
        assert tok.logprob <= 0
        assert len(tok.top_logprobs) == 3
        # greedy: the chosen token is the most likely one
        assert abs(tok.logprob - max(t.logprob for t in tok.top_logprobs)) < 1e-4


def test_prefix_cache_counts_cached_tokens(client, server):
    system = "You are a careful assistant. " * 20
    msgs = [{"role": "system", "content": system}, {"role": "user", "content": "Hi"}]
    client.chat.completions.create(model=NAME, messages=msgs, max_tokens=2, temperature=0)
    r = client.chat.completions.create(model=NAME, messages=msgs, max_tokens=2, temperature=0)
    assert r.usage.prompt_tokens_details.cached_tokens >= 64
    assert metric_value(server, "folio:prefix_cache_hits_total") >= 64


@pytest.mark.parametrize("body,status", [
    (b"{not json", 400),
    (json.dumps({"model": NAME, "prompt": ""}).encode(), 400),
    (json.dumps({"model": NAME, "prompt": "x", "temperature": -1}).encode(), 400),
    (json.dumps({"model": NAME, "prompt": "x", "max_tokens": 5000}).encode(), 400),
    (json.dumps({"model": "nope", "prompt": "x"}).encode(), 404),
    (json.dumps({"model": NAME, "prompt": "x", "suffix": "y"}).encode(), 400),
])
def test_errors_have_openai_shape(server, body, status):
    conn = http.client.HTTPConnection("127.0.0.1", server["port"], timeout=30)
    conn.request("POST", "/v1/completions", body=body,
                 headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"})
    r = conn.getresponse()
    payload = json.loads(r.read())
    assert r.status == status
    assert set(payload["error"]) >= {"message", "type", "param", "code"}
    assert payload["error"]["message"]


def test_api_key_required(server):
    bad = openai.OpenAI(base_url=server["base"] + "/v1", api_key="wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        bad.models.list()


def test_unknown_route_and_method(server):
    conn = http.client.HTTPConnection("127.0.0.1", server["port"], timeout=10)
    conn.request("GET", "/v1/nothing", headers={"Authorization": f"Bearer {KEY}"})
    assert conn.getresponse().status == 404
    conn = http.client.HTTPConnection("127.0.0.1", server["port"], timeout=10)
    conn.request("GET", "/v1/completions", headers={"Authorization": f"Bearer {KEY}"})
    assert conn.getresponse().status == 405


def test_body_too_large(server):
    conn = http.client.HTTPConnection("127.0.0.1", server["port"], timeout=30)
    conn.request("POST", "/v1/completions", body=b"x" * (9 << 20),
                 headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"})
    assert conn.getresponse().status == 413


def test_concurrent_clients(client):
    results, errors = [], []

    def one(i):
        try:
            r = client.completions.create(model=NAME, prompt=f"Number {i}:", max_tokens=4,
                                          temperature=0, extra_body={"ignore_eos": True})
            results.append(r.usage.completion_tokens)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(64)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert results == [4] * 64


def test_disconnect_frees_kv_blocks(server):
    body = json.dumps({"model": NAME, "prompt": "Tell a very long story.", "max_tokens": 900,
                       "stream": True, "ignore_eos": True, "temperature": 0})
    s = socket.create_connection(("127.0.0.1", server["port"]))
    s.sendall((f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n"
               f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}"
               ).encode())
    s.recv(4096)  # the stream has started
    deadline = time.time() + 30
    while metric_value(server, "folio:num_requests_running") < 1 and time.time() < deadline:
        time.sleep(0.05)
    assert metric_value(server, "folio:kv_cache_usage_perc") > 0
    s.close()
    deadline = time.time() + 30
    while time.time() < deadline:
        if (metric_value(server, "folio:num_requests_running") == 0
                and metric_value(server, "folio:kv_cache_usage_perc") == 0):
            break
        time.sleep(0.1)
    assert metric_value(server, "folio:num_requests_running") == 0
    assert metric_value(server, "folio:kv_cache_usage_perc") == 0


def test_health_version_and_metrics_parse(server):
    with urllib.request.urlopen(server["base"] + "/health", timeout=5) as r:
        assert r.status == 200
    # Every route but /health and /metrics needs the key when one is set.
    with pytest.raises(urllib.error.HTTPError) as denied:
        urllib.request.urlopen(server["base"] + "/version", timeout=5)
    assert denied.value.code == 401
    req = urllib.request.Request(server["base"] + "/version",
                                 headers={"Authorization": f"Bearer {KEY}"})
    with urllib.request.urlopen(req, timeout=5) as r:
        assert "version" in json.loads(r.read())
    m = metrics(server)
    for name in ["folio:num_requests_running", "folio:num_requests_waiting",
                 "folio:kv_cache_usage_perc", "folio:prompt_tokens_total",
                 "folio:generation_tokens_total", "folio:time_to_first_token_seconds_count",
                 "folio:e2e_request_latency_seconds_count", "folio:stage_seconds_total"]:
        assert name in m, name
    assert metric_value(server, "folio:generation_tokens_total") > 0
    stages = {s.labels["stage"]: s.value for s in m["folio:stage_seconds_total"]}
    assert stages["model_load"] > 0
    # The model's time, split into attention blocks, FFN blocks and the embedding + output head.
    assert stages["attention"] > 0 and stages["ffn"] > 0 and stages["lm_head"] > 0
    for s in ("tokenize", "schedule", "sampling", "detokenize"):
        assert s in stages, s


# A prompt whose answer needs more than the last 16 positions.
WINDOW_PROMPT = ("My name is Alice and my favourite colour is green. Here is a list of the planets with "
                 "one fact each. Mercury is the closest to the Sun. Venus is the hottest. Earth has "
                 "liquid water. Mars is red because of iron oxide. Jupiter is the largest. Saturn has "
                 "bright rings. Uranus rotates on its side. Neptune has the strongest winds. To "
                 "repeat: my name is")


def test_attention_window_field(client, tmp_path):
    """attention_window / attention_sinks reach the engine: the answer equals `folio generate
    --attention-window 16 --attention-sinks 4` on the same prompt (the flag's path), 0 means full
    attention, and attention_sinks alone is refused naming it."""
    def complete(**extra):
        r = client.completions.create(model=NAME, prompt=WINDOW_PROMPT, max_tokens=8, temperature=0,
                                      extra_body=extra or None)
        return r.choices[0].text

    windowed = complete(attention_window=16, attention_sinks=4)
    full = complete()
    assert complete(attention_window=0) == full
    inp = tmp_path / "in.jsonl"
    out = tmp_path / "out.jsonl"
    inp.write_text(json.dumps({"prompt": WINDOW_PROMPT, "max_tokens": 8, "temperature": 0}) + "\n")
    subprocess.run([FOLIO, "generate", "--input", str(inp), "--output", str(out), "-t", "2",
                    "--max-model-len", "1024", "--attention-window", "16", "--attention-sinks", "4"],
                   check=True, capture_output=True, timeout=120, env=dict(os.environ))
    assert json.loads(out.read_text().splitlines()[0])["text"] == windowed
    # The same as a field of generate's input line, with the flag unset.
    inp.write_text(json.dumps({"prompt": WINDOW_PROMPT, "max_tokens": 8, "temperature": 0,
                               "attention_window": 16, "attention_sinks": 4}) + "\n")
    subprocess.run([FOLIO, "generate", "--input", str(inp), "--output", str(out), "-t", "2",
                    "--max-model-len", "1024"], check=True, capture_output=True, timeout=120)
    assert json.loads(out.read_text().splitlines()[0])["text"] == windowed
    assert windowed != full, "a 16-position window should change this answer"
    with pytest.raises(openai.BadRequestError) as e:
        complete(attention_sinks=4)
    assert "attention_sinks" in str(e.value)
    with pytest.raises(openai.BadRequestError) as e:
        complete(attention_window=8, attention_sinks=9)
    assert "attention_sinks" in str(e.value)


def test_unimplemented_fields_are_refused_naming_them(client):
    """A field folio does not implement is a 400 naming it, never silently ignored: the client
    would believe it got what it asked for."""
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(
            model=NAME, messages=[{"role": "user", "content": "hi"}], max_tokens=2,
            extra_body={"prediction": {"type": "content", "content": "hi"}})
    assert "prediction" in str(e.value)
    with pytest.raises(openai.BadRequestError) as e:
        client.completions.create(model=NAME, prompt="hi", max_tokens=2,
                                  extra_body={"frobnicate": 1})
    assert "frobnicate" in str(e.value)
