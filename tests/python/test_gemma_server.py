"""Gemma 3 270M behind `folio serve`, through the official openai client.

References: HF transformers' greedy continuation (tests/data/model/gemma-3-270m-q4_k_m.json,
tools/gen_reference_logits.py) and HF tokenizers' ids of Gemma's turn tokens
(tests/data/tokenizer/gemma3.jsonl). Checked: a completion's greedy text is HF's; the chat
prompt is the built-in template's with exactly one BOS; concurrent requests (continuous
batching, a shared prefix) answer as each does alone; a prompt longer than the 512-token
window is served."""
import concurrent.futures
import functools
import json

import pytest
from gguf import GGUFReader

openai = pytest.importorskip("openai")

from folio_server import ROOT, running_server  # noqa: E402

GEMMA = ROOT / "models" / "gemma-3-270m-q4_k_m.gguf"
GOLDEN = ROOT / "tests" / "data" / "model" / "gemma-3-270m-q4_k_m.json"


def hf_case(name):
    return next(c for c in json.loads(GOLDEN.read_text())["cases"] if c["name"] == name)


@functools.lru_cache(maxsize=None)
def pieces():
    r = GGUFReader(str(GEMMA))
    f = r.fields["tokenizer.ggml.tokens"]
    return [bytes(f.parts[i]).decode("utf-8") for i in f.data]


@pytest.fixture(scope="module")
def server():
    with running_server("--served-model-name", "m", "--max-model-len", "4096", model=GEMMA) as s:
        yield s


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server["base"] + "/v1", api_key="none")


def test_greedy_completion_is_hf_transformers(client):
    case = hf_case("english_short")  # "The three primary colors of light are"
    r = client.completions.create(model="m", prompt="The three primary colors of light are",
                                  max_tokens=16, temperature=0)
    vocab = pieces()
    want = "".join(vocab[i] for i in case["greedy_ids"][:16]).replace("\u2581", " ")
    assert r.choices[0].text == want
    assert r.usage.prompt_tokens == len(case["prompt_ids"])  # BOS added once


def test_chat_prompt_is_the_builtin_template_with_one_bos(client):
    r = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Hi"}],
                                       max_tokens=4, temperature=0)
    # <bos> + "<start_of_turn>user\nHi<end_of_turn>\n" (6 ids, gemma3.jsonl) + "<start_of_turn>model\n"
    # (<start_of_turn>, "model", "\n").
    rows = [json.loads(line) for line in
            (ROOT / "tests/data/tokenizer/gemma3.jsonl").read_text().split("\n") if line]
    turn = next(r for r in rows if r.get("text") == "<start_of_turn>user\nHi<end_of_turn>\n")
    assert r.usage.prompt_tokens == 1 + len(turn["ids"]) + 3
    assert r.choices[0].finish_reason in ("length", "stop")


def test_concurrent_requests_answer_as_each_alone(client):
    prompts = [f"Entry {i}: the warehouse in aisle {i} holds" for i in range(4)]
    alone = [client.completions.create(model="m", prompt=p, max_tokens=24, temperature=0)
             .choices[0].text for p in prompts]
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        together = list(ex.map(lambda p: client.completions.create(
            model="m", prompt=p, max_tokens=24, temperature=0).choices[0].text, prompts))
    assert together == alone


def test_a_prompt_longer_than_the_window(client):
    case = hf_case("long_ledger")  # 2064 tokens of HF's ids
    r = client.completions.create(model="m", prompt=case["prompt_ids"], max_tokens=8,
                                  temperature=0)
    vocab = pieces()
    want = "".join(vocab[i] for i in case["greedy_ids"][:8]).replace("\u2581", " ")
    assert r.usage.prompt_tokens == len(case["prompt_ids"])
    assert r.choices[0].text == want
