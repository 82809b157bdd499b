"""Several models in one `folio serve`, and `model: "auto"`, through the official openai client.

Checked: /v1/models lists both models and the virtual one, and retrieves each; a request naming a
model gets that model's greedy answer exactly as a server holding only that model gives it
(models do not disturb each other); `auto` sends an easy prompt to the small model and a hard one
to the large model, says so in the response's `model` and the x-folio-route-* headers, streams
unchanged, and counts its decisions in /metrics; a JSON config file names the models, sets their
engine settings and a virtual model with a calibrated threshold; inconsistent flags and config
files stop the server with a message naming what is wrong."""
import json
import subprocess
import urllib.request

import pytest

openai = pytest.importorskip("openai")

from folio_server import FOLIO, MODEL, ROOT, running_server  # noqa: E402

GEMMA = ROOT / "models" / "gemma-3-270m-q4_k_m.gguf"
COMMON = ("--max-model-len", "1024", "--max-num-seqs", "8", "--kv-cache-memory", "256MiB")
EASY = "Hi!"
HARD = ("Prove step by step that the algorithm below is correct, derive its complexity and "
        "explain why:\n```python\ndef f(n):\n    if n < 2:\n        return n\n"
        "    return f(n - 1) + f(n - 2)\n```\nThen solve 12*7 + 3^2 = ? and compare.")


@pytest.fixture(scope="module")
def server():
    with running_server("-m", str(GEMMA), "--served-model-name", "smollm2", "gemma3",
                        *COMMON) as s:
        yield s


def client(s):
    return openai.OpenAI(base_url=s["base"] + "/v1", api_key="none")


def greedy(c, model, prompt="The capital of France is"):
    r = c.completions.create(model=model, prompt=prompt, max_tokens=12, temperature=0)
    return r.choices[0].text


def test_models_lists_every_model_and_auto(server):
    c = client(server)
    assert [m.id for m in c.models.list().data] == ["smollm2", "gemma3", "auto"]
    assert c.models.retrieve("gemma3").id == "gemma3"
    auto = c.models.retrieve("auto")
    assert auto.id == "auto"
    assert auto.model_extra["folio_route"]["small"] == "smollm2"  # fewest parameters
    assert auto.model_extra["folio_route"]["large"] == "gemma3"
    with pytest.raises(openai.NotFoundError, match="smollm2, gemma3, auto"):
        c.chat.completions.create(model="gpt-4", messages=[{"role": "user", "content": "x"}])


def test_each_model_answers_as_it_does_alone(server):
    both = {m: greedy(client(server), m) for m in ("smollm2", "gemma3")}
    assert both["smollm2"] != both["gemma3"]
    for path, name in ((MODEL, "smollm2"), (GEMMA, "gemma3")):
        with running_server("--served-model-name", name, *COMMON, model=path) as alone:
            assert greedy(client(alone), name) == both[name], name


def routed(c, text, **kw):
    raw = c.chat.completions.with_raw_response.create(
        model="auto", messages=[{"role": "user", "content": text}], max_tokens=8, temperature=0,
        **kw)
    return raw, raw.parse()


def test_auto_routes_easy_small_and_hard_large(server):
    c = client(server)
    raw, r = routed(c, EASY)
    assert r.model == "smollm2"
    assert raw.headers["x-folio-route-model"] == "smollm2"
    assert raw.headers["x-folio-route-reason"] == "score_below"
    easy_score = float(raw.headers["x-folio-route-score"])
    raw, r = routed(c, HARD)
    assert r.model == "gemma3"
    assert raw.headers["x-folio-route-reason"] == "score"
    assert float(raw.headers["x-folio-route-score"]) > easy_score
    # The routed answer is the named model's.
    named = c.chat.completions.create(model="gemma3", max_tokens=8, temperature=0,
                                      messages=[{"role": "user", "content": HARD}])
    assert r.choices[0].message.content == named.choices[0].message.content


def test_auto_streams_from_the_routed_model(server):
    c = client(server)
    stream = c.chat.completions.create(model="auto", stream=True, max_tokens=8, temperature=0,
                                       messages=[{"role": "user", "content": HARD}])
    chunks = list(stream)
    assert chunks and all(ch.model == "gemma3" for ch in chunks)
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    named = c.chat.completions.create(model="gemma3", max_tokens=8, temperature=0,
                                      messages=[{"role": "user", "content": HARD}])
    assert text == named.choices[0].message.content


def test_metrics_count_routing_per_model(server):
    routed(client(server), EASY)
    with urllib.request.urlopen(server["base"] + "/metrics") as r:
        text = r.read().decode()
    assert 'folio:route_decisions_total{virtual_model="auto",model_name="smollm2",' \
           'reason="score_below"}' in text
    assert 'folio:num_requests_running{model_name="smollm2"}' in text
    assert 'folio:num_requests_running{model_name="gemma3"}' in text
    assert text.count("# TYPE folio:num_requests_running gauge") == 1


def test_config_file_models_and_calibrated_virtual_model(tmp_path):
    cfg = {"models": [{"model": str(MODEL), "served_model_name": ["small", "smol"],
                       "max_num_seqs": 4, "lacks": ["logprobs"]},
                      {"model": str(GEMMA), "served_model_name": "large",
                       "max_model_len": 2048}],
           "virtual_models": [{"name": "router", "small": "smol", "large": "large",
                               "policy": {"large_share": 0.5}}]}
    path = tmp_path / "serve.json"
    path.write_text(json.dumps(cfg))
    with running_server("--config", str(path), "--kv-cache-memory", "256MiB", model=None) as s:
        c = client(s)
        models = {m.id: m for m in c.models.list().data}
        assert list(models) == ["small", "smol", "large", "router"]
        assert models["large"].model_extra["max_model_len"] == 2048
        # A feature the small model lacks goes large, whatever the score.
        raw, r = (lambda raw: (raw, raw.parse()))(c.chat.completions.with_raw_response.create(
            model="router", messages=[{"role": "user", "content": EASY}], max_tokens=4,
            logprobs=True))
        assert r.model == "large"
        assert raw.headers["x-folio-route-reason"] == "feature:logprobs"
        s["proc"].terminate()
        log = s["proc"].communicate(timeout=30)[0]
    assert "calibrated: 50% of the built-in sample goes large" in log
    assert "memory of 2 models" in log


def run_fails(*args):
    p = subprocess.run([FOLIO, "serve", "--port", "0", *args], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode != 0
    return p.stderr


def test_inconsistent_flags_and_configs_are_refused(tmp_path):
    assert "one name per model" in run_fails(str(MODEL), "-m", str(GEMMA),
                                             "--served-model-name", "only-one")
    assert "two or more models" in run_fails(str(MODEL), "--route-policy", '{"threshold": 0.3}')
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"models": [{"model": str(MODEL), "max_num_seq": 4}]}))
    assert "models[0].max_num_seq" in run_fails("--config", str(bad))
    bad.write_text(json.dumps({"models": [{"model": str(MODEL), "threads": 2}]}))
    assert "shares the -t/--threads" in run_fails("--config", str(bad))
    bad.write_text(json.dumps({"models": [{"model": str(MODEL)}, {"model": str(GEMMA)}],
                               "virtual_models": [{"name": "auto", "small": "x",
                                                   "large": "y"}]}))
    assert "not a served model" in run_fails("--config", str(bad))
    bad.write_text(json.dumps({"models": [{"model": str(MODEL)}],
                               "virtual_models": [{"name": "auto", "small": "a", "large": "b",
                                                   "policy": {"threshold": 2}}]}))
    assert "virtual_models[0].policy" in run_fails("--config", str(bad))
    assert "--config" in run_fails(str(MODEL), "--config", str(bad))
