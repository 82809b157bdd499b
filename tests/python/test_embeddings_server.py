"""`POST /v1/embeddings` through the official openai client, against an independent reference:
HF transformers (fp32, CPU) on the same GGUF. folio's embedding is the mean of the prompt tokens'
final hidden states after the output norm (HF's `last_hidden_state`), scaled to unit length."""
import json
import math
import urllib.request

import openai
import pytest

from folio_server import MODEL, running_server

TEXTS = [
    "The old bridge over the river had stood for more than two hundred years.",
    "def add(a, b):\n    return a + b\n",
    "Prove that the square root of two is irrational.",
]


@pytest.fixture(scope="module")
def server():
    with running_server("-t", "2") as s:
        yield s


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server["base"] + "/v1", api_key="none", max_retries=0,
                         timeout=120)


def post(server, path, body):
    req = urllib.request.Request(server["base"] + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


def model_name(client):
    return client.models.list().data[0].id


def folio_ids(server, text):
    return post(server, "/tokenize", {"prompt": text})["tokens"]


@pytest.fixture(scope="module")
def hf_embeddings(server):
    """HF's normalized mean of last_hidden_state over folio's own token ids, per text."""
    import os

    import torch
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(2)
    d, f = os.path.split(str(MODEL))
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32)
    model.eval()
    out = []
    for text in TEXTS:
        ids = folio_ids(server, text)
        with torch.no_grad():
            h = model.model(torch.tensor([ids])).last_hidden_state[0].double()
        mean = h.mean(dim=0)
        out.append((mean / mean.norm()).tolist())
    return out


def cosine(a, b):
    return sum(x * y for x, y in zip(a, b)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def test_matches_hf(client, hf_embeddings):
    r = client.embeddings.create(model=model_name(client), input=TEXTS)  # base64 by default
    assert [d.index for d in r.data] == [0, 1, 2]
    for got, want in zip((d.embedding for d in r.data), hf_embeddings):
        assert len(got) == len(want) == 576
        assert abs(math.sqrt(sum(x * x for x in got)) - 1) < 1e-5
        assert cosine(got, want) > 0.999
        assert max(abs(x - y) for x, y in zip(got, want)) < 0.01
    assert r.usage.prompt_tokens == r.usage.total_tokens > 0


def test_float_and_base64_agree(client):
    name = model_name(client)
    b64 = client.embeddings.create(model=name, input=TEXTS[0]).data[0].embedding
    flt = client.embeddings.create(model=name, input=TEXTS[0],
                                   encoding_format="float").data[0].embedding
    assert b64 == pytest.approx(flt, abs=1e-7)


def test_chat_form_is_the_rendered_prompt(server, client):
    name = model_name(client)
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    chat = post(server, "/v1/embeddings", {"model": name, "messages": messages,
                                           "add_generation_prompt": True,
                                           "encoding_format": "float"})
    ids = post(server, "/tokenize", {"messages": messages, "add_generation_prompt": True})["tokens"]
    by_ids = client.embeddings.create(model=name, input=ids, encoding_format="float")
    assert chat["usage"]["prompt_tokens"] == len(ids)
    assert chat["data"][0]["embedding"] == pytest.approx(by_ids.data[0].embedding, abs=1e-6)


def test_cached_prefix_changes_nothing(client):
    """A pooling request computes every position even when a generation cached them."""
    name = model_name(client)
    text = TEXTS[2] + " Give the classical argument by contradiction."
    before = client.embeddings.create(model=name, input=text, encoding_format="float")
    client.completions.create(model=name, prompt=text, max_tokens=4, temperature=0)
    after = client.embeddings.create(model=name, input=text, encoding_format="float")
    assert after.data[0].embedding == pytest.approx(before.data[0].embedding, abs=1e-6)


@pytest.mark.parametrize("extra", [
    {"dimensions": 3},
    {"encoding_format": "int8"},
    {"truncate_prompt_tokens": 4},
])
def test_refusals(client, extra):
    with pytest.raises(openai.BadRequestError):
        client.embeddings.create(model=model_name(client), input="hello", extra_body=extra)
