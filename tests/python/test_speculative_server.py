"""`folio serve --speculative-config` through the official openai client: every response of a
server with speculation (n-gram; a draft model, here the default model itself) equals the same
request's response from a plain server (greedy: text, token logprobs, finish reasons, usage; stop
strings inside accepted runs; streaming; n=2), /metrics carries vLLM's spec_decode counters with
drafts accepted (and folio's row- and draft-cost gauges), and a bad config is refused at start-up with a message naming the key, a draft
model of another vocabulary with one saying where it differs."""
import subprocess
import urllib.request

import pytest

openai = pytest.importorskip("openai")

from folio_server import FOLIO, MODEL, ROOT, running_server  # noqa: E402

SPECS = {
    "ngram": ('{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_min": 1, '
              '"prompt_lookup_max": 3}'),
    # adaptive off: the model as its own draft costs a whole step, so the adaptive rule would
    # (rightly) mostly not draft.
    "draft_model": ('{"method": "draft_model", "model": "%s", "num_speculative_tokens": 4, '
                    '"adaptive": false}' % MODEL),
}
GEMMA = ROOT / "models" / "gemma-3-270m-q4_k_m.gguf"
DOC = ("Folio keeps the key and value cache in paged blocks, shares the blocks of common prompt "
       "prefixes, and batches requests continuously.")
CHAT = [{"role": "user", "content": "Repeat this text exactly, twice:\n\n" + DOC}]


def completions(client):
    out = []
    r = client.chat.completions.create(model="m", messages=CHAT, max_tokens=80, temperature=0,
                                       logprobs=True, top_logprobs=2)
    out.append((r.choices[0].message.content, r.choices[0].finish_reason, r.usage.completion_tokens,
                [(t.token, round(t.logprob, 4)) for t in r.choices[0].logprobs.content]))
    # A stop string the output reaches mid-run (the second sentence's first words).
    r = client.chat.completions.create(model="m", messages=CHAT, max_tokens=80, temperature=0,
                                       stop=["shares the blocks"])
    out.append((r.choices[0].message.content, r.choices[0].finish_reason, r.usage.completion_tokens))
    r = client.completions.create(model="m", prompt="one two three four five one two three four",
                                  max_tokens=24, temperature=0, n=2)
    out.append(sorted((c.index, c.text, c.finish_reason) for c in r.choices))
    stream = client.chat.completions.create(model="m", messages=CHAT, max_tokens=40,
                                            temperature=0, stream=True)
    out.append("".join(c.choices[0].delta.content or "" for c in stream if c.choices))
    # Seeded sampling is reproducible on one server (the drafts are deterministic).
    r1 = client.completions.create(model="m", prompt="The sea is", max_tokens=24, temperature=0.9,
                                   seed=7)
    r2 = client.completions.create(model="m", prompt="The sea is", max_tokens=24, temperature=0.9,
                                   seed=7)
    assert r1.choices[0].text == r2.choices[0].text
    return out


def metrics(base):
    with urllib.request.urlopen(base + "/metrics") as r:
        return r.read().decode()


def counter(text, name):
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} missing from /metrics")


@pytest.fixture(scope="module")
def plain_answers():
    with running_server("--served-model-name", "m") as plain:
        return completions(openai.OpenAI(base_url=plain["base"] + "/v1", api_key="x"))


@pytest.mark.parametrize("method", sorted(SPECS))
def test_speculative_server_answers_as_the_plain_one(plain_answers, method):
    want = plain_answers
    with running_server("--served-model-name", "m", "--speculative-config", SPECS[method]) as spec:
        got = completions(openai.OpenAI(base_url=spec["base"] + "/v1", api_key="x"))
        m = metrics(spec["base"])
    assert got == want
    assert want[1][1] == "stop" and "shares the blocks" not in want[1][0]
    drafts = counter(m, "folio:spec_decode_num_drafts_total")
    tokens = counter(m, "folio:spec_decode_num_draft_tokens_total")
    accepted = counter(m, "folio:spec_decode_num_accepted_tokens_total")
    assert drafts > 0 and 0 < accepted <= tokens
    per_pos = [line for line in m.splitlines()
               if line.startswith("folio:spec_decode_num_accepted_tokens_per_pos_total{")]
    assert len(per_pos) == 4
    assert sum(float(line.rsplit(" ", 1)[1]) for line in per_pos) == accepted
    # folio's gauge of a verification row's cost (measured on this machine): within its bounds.
    assert 0.02 <= counter(m, "folio:spec_decode_row_cost") <= 2
    # ... and of a model drafter's forward (measured): the model as its own draft costs about a
    # step; n-gram drafts cost nothing, and the gauge is absent.
    if method == "ngram":
        assert "folio:spec_decode_draft_cost" not in m
    else:
        assert 0.5 <= counter(m, "folio:spec_decode_draft_cost") <= 4


def test_bad_speculative_config_is_refused_naming_the_key():
    r = subprocess.run([FOLIO, "serve", str(MODEL), "--speculative-config",
                        '{"method": "ngram", "num_speculative_tokens": 2, "lookahead": 3}'],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert 'unknown key "lookahead"' in r.stderr


def test_draft_model_of_another_vocabulary_is_refused_saying_where():
    assert GEMMA.exists(), f"{GEMMA} missing: run scripts/setup"
    spec = '{"method": "draft_model", "model": "%s", "num_speculative_tokens": 2}' % GEMMA
    r = subprocess.run([FOLIO, "serve", str(MODEL), "--speculative-config", spec],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "vocabulary differs from the target's: the target has 49152 tokens, the draft" in r.stderr
    missing = '{"method": "draft_model", "model": "/nonexistent.gguf", "num_speculative_tokens": 2}'
    r = subprocess.run([FOLIO, "serve", str(MODEL), "--speculative-config", missing],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "draft model /nonexistent.gguf:" in r.stderr
