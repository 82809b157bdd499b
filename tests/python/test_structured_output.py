"""Structured output through `folio serve` (issue #16), driven by the official openai client.

The oracle is outside folio: pydantic and jsonschema validate what the model wrote, Python's `re`
checks regex outputs, and xgrammar's matcher checks the prefixes of cut-off documents against the
GBNF folio prints (`folio grammar`). The tiny default model (SmolLM2-135M) writes poor JSON on its
own, so every valid document here is the grammar's doing; sampling at high temperatures over many
seeds hunts for the paths where a mask lets a wrong token through.

Samples that end with finish_reason "length" are unfinished documents and are not validated
(the schemas bound their strings so that nearly all finish); the tests assert most do finish.
One module-scoped SmolLM2 server and one Gemma 3 270M server for a single test; the module
takes about two minutes on 2 cores.
"""
import concurrent.futures
import enum
import json
import re
import subprocess
from typing import Annotated, Literal, Optional

import jsonschema
import openai
import pydantic
import pytest
from folio_server import FOLIO, MODEL, running_server

xgr = pytest.importorskip("xgrammar")
from xgrammar.testing import _is_grammar_accept_string  # noqa: E402

NAME = "smollm2"
USER = [{"role": "user", "content": "Reply with a JSON object describing something."}]


@pytest.fixture(scope="module")
def server():
    with running_server("--served-model-name", NAME, "--max-model-len", "2048",
                        "--kv-cache-memory", "128MiB", "-t", "2") as srv:
        yield srv
    assert srv["exit_code"] == 0


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server["base"] + "/v1", api_key="x", max_retries=0, timeout=120)


def error_param(err):
    body = err.body if isinstance(err.body, dict) else {}
    return body.get("error", body).get("param")


def json_schema_format(schema, name="out"):
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


def validate(schema, text):
    """`text` is one JSON document (nothing before or after) that `schema` accepts."""
    doc = json.loads(text)
    jsonschema.Draft202012Validator(schema).validate(doc)
    return doc


def schema_grammar(schema, tmp_path):
    """The GBNF folio prints for `schema`, compiled by xgrammar."""
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    r = subprocess.run([FOLIO, "grammar", "--json-schema", str(path)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return xgr.Grammar.from_ebnf(r.stdout, root_rule_name="root")


def is_prefix_of_grammar(grammar, text):
    return _is_grammar_accept_string(grammar, text, require_termination=False)


def parallel(fn, args, workers=4):
    """fn(*a) for each a, concurrently (the server batches them); results in order."""
    with concurrent.futures.ThreadPoolExecutor(workers) as ex:
        return list(ex.map(lambda a: fn(*a), args))


# ---- 1. client.chat.completions.parse with a pydantic model --------------------------------
class Role(str, enum.Enum):
    admin = "admin"
    user = "user"
    guest = "guest"


class Address(pydantic.BaseModel):
    city: str = pydantic.Field(max_length=16)
    zip_code: str = pydantic.Field(pattern=r"^[0-9]{5}$")


class Person(pydantic.BaseModel):
    name: str = pydantic.Field(max_length=16)
    age: int = pydantic.Field(ge=0, le=120)
    role: Role
    mood: Literal["happy", "sad", "calm"]
    tags: list[Annotated[str, pydantic.Field(max_length=10)]] = pydantic.Field(max_length=3)
    address: Address
    nickname: Optional[Annotated[str, pydantic.Field(max_length=10)]]


def parse_api(client):
    """openai >= 1.92 has chat.completions.parse; older releases only beta.chat.completions."""
    if hasattr(client.chat.completions, "parse"):
        return client.chat.completions.parse
    return client.beta.chat.completions.parse


def test_parse_pydantic_model_over_seeds(client):
    parse = parse_api(client)

    def one(seed, temperature):
        return parse(model=NAME, messages=[{"role": "user", "content": "Describe a person."}],
                     response_format=Person, temperature=temperature, seed=seed, n=2,
                     max_tokens=800)  # the document is bounded: it always finishes

    results = parallel(one, [(seed, t) for seed in range(3) for t in (0.7, 1.0)])
    for r in results:
        assert len(r.choices) == 2
        for c in r.choices:
            assert c.finish_reason == "stop", c
            assert isinstance(c.message.parsed, Person)
            again = Person.model_validate_json(c.message.content)  # the text itself validates
            assert again == c.message.parsed
            assert 0 <= again.age <= 120 and len(again.tags) <= 3
    assert len(results) == 6


# ---- 2. json_schema: property test over schemas, seeds and temperatures -------------------
def obj(props, required=None, **kw):
    return {"type": "object", "properties": props,
            "required": list(props) if required is None else required, **kw}


def string(n=12):
    return {"type": "string", "maxLength": n}


SCHEMAS = {
    "flat": obj({"name": string(), "age": {"type": "integer", "minimum": 0, "maximum": 120},
                 "active": {"type": "boolean"}}),
    "nested": obj({"user": obj({"id": {"type": "integer", "minimum": 1, "maximum": 999},
                                "name": string(), "email": string(20)}, ["id", "name"]),
                   "meta": obj({"ok": {"type": "boolean"}})}),
    "arrays": obj({"tags": {"type": "array", "items": string(8), "minItems": 1, "maxItems": 3},
                   "scores": {"type": "array", "maxItems": 4,
                              "items": {"type": "integer", "minimum": 0, "maximum": 10}},
                   "pair": {"type": "array", "minItems": 2, "maxItems": 2,
                            "items": {"type": "boolean"}}}),
    "enum": obj({"color": {"enum": ["red", "green", "blue", 3, None]},
                 "size": {"type": "string", "enum": ["S", "M", "L"]},
                 "version": {"const": "v1"}}),
    "anyof": obj({"v": {"anyOf": [{"type": "integer", "minimum": -5, "maximum": 5}, string(6),
                                  {"type": "null"}]},
                  "w": {"oneOf": [obj({"kind": {"const": "a"}}), {"type": "boolean"}]}}),
    "pattern": obj({"code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$"},
                    "hex": {"type": "string", "pattern": "^[a-f0-9]{4}$"},
                    "word": {"type": "string", "pattern": "^(yes|no)!?$"}}),
    "ranges": obj({"t": {"type": "integer", "minimum": -40, "maximum": 50},
                   "d": {"type": "integer", "exclusiveMinimum": -1000, "exclusiveMaximum": -10},
                   "x": {"type": "number", "minimum": -1, "maximum": 1},
                   "big": {"type": "integer", "minimum": 100, "maximum": 12345}}),
    "scalars": obj({"flag": {"type": "boolean"}, "nothing": {"type": "null"},
                    "score": {"type": "number"}, "ratio": {"type": ["number", "null"]}},
                   ["flag", "nothing"]),
    # Extra keys have unbounded names, so the tiny model sometimes runs on: few must finish.
    "additional": obj({"id": {"type": "integer", "minimum": 0, "maximum": 99}}, ["id"],
                      additionalProperties={"type": "integer", "minimum": 0, "maximum": 9}),
    "refs": {"$defs": {"pt": obj({"x": {"type": "integer", "minimum": -9, "maximum": 9},
                                  "y": {"type": "integer", "minimum": -9, "maximum": 9}})},
             **obj({"a": {"$ref": "#/$defs/pt"}, "b": {"$ref": "#/$defs/pt"}})},
}


def sample_schema(client, name, temperature, seed, n):
    r = client.chat.completions.create(
        model=NAME, messages=USER, response_format=json_schema_format(SCHEMAS[name], name),
        temperature=temperature, seed=seed, n=n, max_tokens=300)
    return name, r


def test_json_schema_property(client):
    jobs = []
    for name in SCHEMAS:
        jobs.append((name, 0, 0, 1))
        for t in (0.7, 1.2):
            jobs.append((name, t, 7, 4))
    finished = {name: 0 for name in SCHEMAS}
    total = stopped = 0
    for name, r in parallel(lambda *a: sample_schema(client, *a), jobs):
        for c in r.choices:
            total += 1
            assert c.finish_reason in ("stop", "length"), (name, c)
            if c.finish_reason == "length":
                continue
            stopped += 1
            finished[name] += 1
            try:
                validate(SCHEMAS[name], c.message.content)
            except Exception as e:  # noqa: BLE001 - name the schema and the text
                pytest.fail(f"{name}: {c.message.content!r}: {e}")
    assert all(finished.values()), finished  # every schema was checked at least once
    assert stopped >= 0.85 * total, finished


def test_json_schema_streamed_is_the_document(client):
    """Streaming: the deltas concatenate to the non-streamed document (same seed), valid."""
    schema = SCHEMAS["nested"]
    for temperature, seed in ((0, 0), (1.0, 3)):
        kw = dict(model=NAME, messages=USER, response_format=json_schema_format(schema),
                  temperature=temperature, seed=seed, max_tokens=300)
        whole = client.chat.completions.create(**kw).choices[0]
        text, finish = "", None
        for chunk in client.chat.completions.create(**kw, stream=True):
            for c in chunk.choices:
                text += c.delta.content or ""
                finish = c.finish_reason or finish
        assert finish == whole.finish_reason == "stop"
        assert text == whole.message.content
        validate(schema, text)


# ---- 3. json_object, and the completions endpoint ------------------------------------------
def test_json_object(client):
    def one(seed):
        return client.chat.completions.create(model=NAME, messages=USER, temperature=1.0,
                                              seed=seed, response_format={"type": "json_object"},
                                              max_tokens=300)

    for r in parallel(one, [(seed,) for seed in range(3)]):
        c = r.choices[0]
        if c.finish_reason == "stop":
            assert isinstance(json.loads(c.message.content), dict), c.message.content
        else:
            assert c.message.content.lstrip().startswith("{")


@pytest.mark.parametrize("how", ["response_format", "guided_json", "structured_outputs"])
def test_completions_endpoint_with_schema(client, how):
    schema = SCHEMAS["flat"]
    fields = {"response_format": {"response_format": json_schema_format(schema)},
              "guided_json": {"guided_json": schema},
              "structured_outputs": {"structured_outputs": {"json": json.dumps(schema)}}}[how]
    r = client.completions.create(model=NAME, prompt="A user record in JSON:", temperature=0.8,
                                  seed=1, n=2, max_tokens=200, extra_body=fields)
    for c in r.choices:
        assert c.finish_reason == "stop", c
        validate(schema, c.text)
    r = client.completions.create(model=NAME, prompt="Some JSON:", temperature=1.0, seed=2,
                                  max_tokens=300,
                                  extra_body={"response_format": {"type": "json_object"}})
    if r.choices[0].finish_reason == "stop":
        assert isinstance(json.loads(r.choices[0].text), dict)


# ---- 4. regex, choice, grammar, and vLLM's structured_outputs spellings -------------------
PHONE = r"\(0[1-9]\) [0-9]{3}-[0-9]{4}"
CHOICES = ["yes", "no", "maybe", "it depends"]
ARITH = r'''root ::= expr
expr ::= term (op term){0,3}
term ::= num | "(" expr ")"
op ::= " + " | " - " | " * "
num ::= [1-9] [0-9]{0,2}'''


def is_arith(s):
    """ARITH's language, checked by recursive descent (independent of folio's grammar)."""
    pos = 0

    def expr(depth):
        nonlocal pos
        term(depth)
        for _ in range(3):
            m = re.match(r" [+*-] ", s[pos:])
            if not m:
                return
            pos += 3
            term(depth)

    def term(depth):
        nonlocal pos
        m = re.match(r"[1-9][0-9]{0,2}", s[pos:])
        if m:
            pos += m.end()
            return
        assert s[pos:pos + 1] == "(" and depth < 50, s
        pos += 1
        expr(depth + 1)
        assert s[pos:pos + 1] == ")", s
        pos += 1

    try:
        expr(0)
    except (AssertionError, IndexError):
        return False
    return pos == len(s)


def constrained_chat(client, extra, seed=0, temperature=1.0, n=1, max_tokens=60,
                     content="Answer the question: is the sky green?"):
    return client.chat.completions.create(
        model=NAME, messages=[{"role": "user", "content": content}], temperature=temperature,
        seed=seed, n=n, max_tokens=max_tokens, extra_body=extra)


@pytest.mark.parametrize("extra", [{"guided_regex": PHONE},
                                   {"structured_outputs": {"regex": PHONE}}])
def test_regex(client, extra):
    for seed in range(3):
        r = constrained_chat(client, extra, seed=seed, n=2, content="My phone number is")
        for c in r.choices:
            assert c.finish_reason == "stop"
            assert re.fullmatch(PHONE, c.message.content), c.message.content
    r = client.completions.create(model=NAME, prompt="Call me at", temperature=1.2, seed=5,
                                  max_tokens=40, extra_body=extra)
    assert re.fullmatch(PHONE, r.choices[0].text), r.choices[0].text


@pytest.mark.parametrize("extra", [{"guided_choice": CHOICES},
                                   {"structured_outputs": {"choice": CHOICES}}])
def test_choice_covers_several(client, extra):
    outputs = []
    for seed in range(3):
        r = constrained_chat(client, extra, seed=seed, n=6)
        for c in r.choices:
            assert c.finish_reason == "stop"
            outputs.append(c.message.content)
    assert set(outputs) <= set(CHOICES), outputs
    assert len(set(outputs)) > 1, outputs  # sampled, not always the same branch
    # Greedy: one of them, and the same one on the completions endpoint's stream.
    r = client.completions.create(model=NAME, prompt="Is the sky green? Answer:", temperature=0,
                                  max_tokens=10, extra_body=extra, stream=True)
    text = "".join(ch.choices[0].text for ch in r if ch.choices)
    assert text in CHOICES


@pytest.mark.parametrize("extra", [{"guided_grammar": ARITH},
                                   {"structured_outputs": {"grammar": ARITH}}])
def test_gbnf_grammar(client, extra):
    outputs = []
    for seed in range(4):
        r = constrained_chat(client, extra, seed=seed, temperature=1.2, n=2, max_tokens=120,
                             content="Write an arithmetic expression.")
        for c in r.choices:
            if c.finish_reason == "stop":
                assert is_arith(c.message.content), c.message.content
                outputs.append(c.message.content)
    assert len(outputs) >= 6


def test_structured_outputs_json_object(client):
    r = constrained_chat(client, {"structured_outputs": {"json_object": True}}, seed=1,
                         max_tokens=300, content="Reply in JSON.")
    if r.choices[0].finish_reason == "stop":
        assert isinstance(json.loads(r.choices[0].message.content), dict)
    # json_object false, text and guided_decoding_backend "auto" are no constraint at all.
    plain = constrained_chat(client, {}, temperature=0, max_tokens=8)
    for extra in ({"structured_outputs": {"json_object": False}},
                  {"response_format": {"type": "text"}},
                  {"guided_decoding_backend": "auto"}):
        r = constrained_chat(client, extra, temperature=0, max_tokens=8)
        assert r.choices[0].message.content == plain.choices[0].message.content


# ---- 5. n > 1 ------------------------------------------------------------------------------
def test_n_choices_all_validate(client):
    schema = SCHEMAS["arrays"]
    r = client.chat.completions.create(model=NAME, messages=USER, n=6, temperature=1.0, seed=11,
                                       response_format=json_schema_format(schema),
                                       max_tokens=300)
    assert sorted(c.index for c in r.choices) == list(range(6))
    assert len({c.message.content for c in r.choices}) > 1  # independent samples
    for c in r.choices:
        if c.finish_reason == "stop":
            validate(schema, c.message.content)
    assert sum(c.finish_reason == "stop" for c in r.choices) >= 4
    # Streamed with n = 3: each index's deltas make a valid document.
    texts, finish = {}, {}
    for chunk in client.chat.completions.create(
            model=NAME, messages=USER, n=3, temperature=1.0, seed=12, stream=True,
            response_format=json_schema_format(schema), max_tokens=300):
        for c in chunk.choices:
            texts[c.index] = texts.get(c.index, "") + (c.delta.content or "")
            finish[c.index] = c.finish_reason or finish.get(c.index)
    assert sorted(texts) == [0, 1, 2]
    for i, text in texts.items():
        if finish[i] == "stop":
            validate(schema, text)


# ---- 6. max_tokens and stop strings cut a document -----------------------------------------
def test_max_tokens_cuts_a_valid_prefix(client, tmp_path):
    schema = SCHEMAS["nested"]
    grammar = schema_grammar(schema, tmp_path)
    for seed, max_tokens in ((0, 3), (1, 7), (2, 12)):
        r = client.chat.completions.create(model=NAME, messages=USER, temperature=1.0, seed=seed,
                                           response_format=json_schema_format(schema),
                                           max_tokens=max_tokens)
        c = r.choices[0]
        assert c.finish_reason == "length"
        assert r.usage.completion_tokens == max_tokens
        assert c.message.content.startswith("{")
        assert is_prefix_of_grammar(grammar, c.message.content), c.message.content
        # A complete document would have stopped: this one must not parse yet.
        with pytest.raises(json.JSONDecodeError):
            json.loads(c.message.content)


def test_stop_string_cuts_a_valid_prefix(client, tmp_path):
    schema = SCHEMAS["flat"]
    grammar = schema_grammar(schema, tmp_path)
    r = client.chat.completions.create(model=NAME, messages=USER, temperature=0, max_tokens=200,
                                       response_format=json_schema_format(schema),
                                       stop=['"age"'])
    c = r.choices[0]
    assert c.finish_reason == "stop"
    assert '"age"' not in c.message.content and c.message.content.startswith("{")
    assert is_prefix_of_grammar(grammar, c.message.content)
    with pytest.raises(json.JSONDecodeError):
        json.loads(c.message.content)


# ---- 7. errors name the field --------------------------------------------------------------
SIMPLE = obj({"a": {"type": "integer"}})


@pytest.mark.parametrize("fields,param", [
    ({"response_format": json_schema_format({"not": {"type": "string"}})}, "response_format"),
    ({"response_format": json_schema_format(obj({"a": {"type": "integer", "multipleOf": 3}}))},
     "response_format"),
    ({"guided_json": {"type": "object", "if": {}, "then": {}}}, "guided_json"),
    ({"guided_regex": "a(b"}, "guided_regex"),
    ({"structured_outputs": {"regex": "[z-a]"}}, "structured_outputs.regex"),
    ({"guided_grammar": "root ::= missing"}, "guided_grammar"),
    ({"structured_outputs": {"grammar": "root ::= \"a\" undefined_rule"}},
     "structured_outputs.grammar"),
    ({"response_format": {"type": "json_object"}, "guided_regex": "a+"}, "guided_regex"),
    ({"guided_json": SIMPLE, "guided_choice": ["a"]}, "guided_choice"),
    ({"structured_outputs": {"regex": "a+", "choice": ["a"]}}, "structured_outputs.choice"),
    ({"response_format": {"type": "json_object", "schema": SIMPLE}}, "response_format.schema"),
    ({"response_format": {"type": "json_schema",
                          "json_schema": {"name": "x", "schema": SIMPLE, "extra": 1}}},
     "response_format.json_schema.extra"),
    ({"response_format": {"type": "yaml"}}, "response_format.type"),
    ({"structured_outputs": {"json": SIMPLE, "whitespace_pattern": " "}},
     "structured_outputs.whitespace_pattern"),
    ({"guided_json": SIMPLE, "guided_decoding_backend": "outlines"}, "guided_decoding_backend"),
    ({"response_format": {"type": "json_schema", "json_schema": {"schema": SIMPLE}}},
     "response_format.json_schema.name"),
    ({"guided_choice": []}, "guided_choice"),
    ({"guided_json": 5}, "guided_json"),
])
def test_bad_constraint_is_400_naming_the_field(client, fields, param):
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=NAME, messages=USER, max_tokens=4, extra_body=fields)
    assert error_param(e.value) == param, e.value.body
    # The completions endpoint reads the same fields the same way.
    with pytest.raises(openai.BadRequestError) as e:
        client.completions.create(model=NAME, prompt="x", max_tokens=4, extra_body=fields)
    assert error_param(e.value) == param, e.value.body


def test_forced_tool_choice_with_a_constraint_is_400(client):
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=NAME, messages=USER, max_tokens=4, tools=TOOLS,
                                       tool_choice="required",
                                       response_format={"type": "json_object"})
    assert error_param(e.value) == "tool_choice"


def test_server_survives_the_errors(client):
    r = client.chat.completions.create(model=NAME, messages=USER, max_tokens=4, temperature=0)
    assert r.choices[0].message.content


# ---- 8. logprobs under a constraint are the model's -----------------------------------------
def test_logprobs_with_a_schema_are_raw(client):
    schema = SCHEMAS["flat"]
    r = client.chat.completions.create(model=NAME, messages=USER, temperature=0, max_tokens=300,
                                       logprobs=True, top_logprobs=3,
                                       response_format=json_schema_format(schema))
    c = r.choices[0]
    validate(schema, c.message.content)
    entries = c.logprobs.content
    assert len(entries) == r.usage.completion_tokens
    assert "".join(e.token for e in entries) == c.message.content
    for e in entries:
        assert -1e9 < e.logprob <= 0, e
        assert len(e.top_logprobs) == 3
        # The sampled token's log-probability under the unmasked distribution: never above the
        # model's own best (a renormalised masked distribution would give forced tokens 0).
        assert e.logprob <= e.top_logprobs[0].logprob + 1e-5
    # The first position's distribution is the unconstrained request's, token for token.
    plain = client.chat.completions.create(model=NAME, messages=USER, temperature=0,
                                           max_tokens=1, logprobs=True, top_logprobs=3)
    first = plain.choices[0].logprobs.content[0]
    want = [(t.token, round(t.logprob, 4)) for t in first.top_logprobs]
    got = [(t.token, round(t.logprob, 4)) for t in entries[0].top_logprobs]
    assert got == want
    # The completions endpoint too.
    r = client.completions.create(model=NAME, prompt="JSON:", temperature=0.8, seed=3,
                                  max_tokens=300, logprobs=2, extra_body={"guided_json": schema})
    lp = r.choices[0].logprobs
    assert len(lp.tokens) == len(lp.token_logprobs) == r.usage.completion_tokens
    assert all(x is not None and x <= 0 for x in lp.token_logprobs)


# ---- 9. forced tool calls validate against the tool's parameters ---------------------------
TOOLS = [{
    "type": "function",
    "function": {
        "name": "book_table",
        "description": "Reserve a table at a restaurant",
        "parameters": obj({
            "restaurant": string(20),
            "party_size": {"type": "integer", "minimum": 1, "maximum": 12},
            "time": {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"},
            "seating": {"enum": ["indoor", "outdoor", "bar"]},
            "notes": {"type": ["string", "null"], "maxLength": 30},
            "guests": {"type": "array", "items": string(12), "maxItems": 3},
        }, ["restaurant", "party_size", "time", "seating"]),
    },
}, {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city",
        "parameters": obj({"city": string(20),
                           "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                          ["city"]),
    },
}]
PARAMS = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}


@pytest.mark.parametrize("choice", [
    "required", {"type": "function", "function": {"name": "book_table"}}])
def test_forced_tool_calls_validate(client, choice):
    """Forced calls at temperature 1: every finished answer is calls whose arguments validate.
    With parallel calls allowed the list is unbounded and the tiny model sometimes repeats the
    same call until max_tokens: those answers end with "length" (an unfinished document, so
    plain content); most must finish."""
    def one(seed):
        return client.chat.completions.create(
            model=NAME, messages=[{"role": "user", "content": "Book dinner for four at 8pm."}],
            tools=TOOLS, tool_choice=choice, temperature=1.0, seed=seed, max_tokens=250)

    names, finished = set(), 0
    for r in parallel(one, [(seed,) for seed in range(8)]):
        c = r.choices[0]
        if c.finish_reason == "length":
            assert re.match(r'\{\s*"tool_calls"', c.message.content), c
            continue
        finished += 1
        assert c.finish_reason == "tool_calls", c
        assert c.message.tool_calls and c.message.content is None
        for call in c.message.tool_calls:
            names.add(call.function.name)
            if isinstance(choice, dict):
                assert call.function.name == "book_table"
            validate(PARAMS[call.function.name], call.function.arguments)
    assert finished >= 5, finished
    assert names <= set(PARAMS)


def test_forced_single_call_without_parallel_tool_calls(client):
    """parallel_tool_calls false bounds the answer to one call: it always finishes."""
    def one(seed):
        return client.chat.completions.create(
            model=NAME, messages=[{"role": "user", "content": "Weather in Oslo and Rome?"}],
            tools=TOOLS, tool_choice="required", parallel_tool_calls=False, temperature=1.0,
            seed=seed, max_tokens=400)

    for r in parallel(one, [(seed,) for seed in range(6)]):
        c = r.choices[0]
        assert c.finish_reason == "tool_calls", c
        assert len(c.message.tool_calls) == 1
        call = c.message.tool_calls[0]
        validate(PARAMS[call.function.name], call.function.arguments)


# ---- Gemma 3: a 262k-token SentencePiece vocabulary with byte fallback ----------------------
GEMMA = MODEL.parent / "gemma-3-270m-q4_k_m.gguf"


@pytest.fixture(scope="module")
def gemma():
    if not GEMMA.exists():
        pytest.skip(f"{GEMMA} missing: run scripts/setup")
    with running_server("--served-model-name", "gemma", "--max-model-len", "2048",
                        "--kv-cache-memory", "128MiB", "-t", "2", model=GEMMA) as srv:
        yield openai.OpenAI(base_url=srv["base"] + "/v1", api_key="x", max_retries=0,
                            timeout=300)
    assert srv["exit_code"] == 0


def test_gemma_parse_and_schemas(gemma):
    """Another tokenizer family: the masks must hold for Gemma's pieces too."""
    for seed in range(2):
        r = parse_api(gemma)(model="gemma", messages=[{"role": "user",
                                                       "content": "Describe a person."}],
                             response_format=Person, temperature=1.0, seed=seed, max_tokens=800)
        c = r.choices[0]
        assert c.finish_reason == "stop" and isinstance(c.message.parsed, Person), c
    for name in ("anyof", "pattern"):
        r = gemma.chat.completions.create(
            model="gemma", messages=USER, response_format=json_schema_format(SCHEMAS[name]),
            temperature=1.0, seed=4, n=2, max_tokens=300)
        for c in r.choices:
            if c.finish_reason == "stop":
                validate(SCHEMAS[name], c.message.content)
    r = gemma.chat.completions.create(model="gemma", messages=USER, temperature=1.0, seed=1,
                                      n=4, max_tokens=20, extra_body={"guided_regex": PHONE})
    assert all(re.fullmatch(PHONE, c.message.content) for c in r.choices), r.choices
