"""GET /openapi.json against the real `folio serve`: the document is valid OpenAPI 3.1
(openapi-spec-validator), every request field it documents is accepted and answered as it
documents, an undocumented field is refused where it says fields are closed, and a short
schemathesis run (requests generated from the document, valid and invalid) finds no 5xx and no
reply that does not conform. bench/schemathesis.sh runs the long version (>= 10,000 cases).
tests/server/openapi_test.cpp checks that the document covers the router's table."""
import json
import urllib.error
import urllib.request

import jsonschema
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from openapi_spec_validator import validate
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (content_type_conformance,
                                               response_headers_conformance,
                                               response_schema_conformance,
                                               status_code_conformance)

from folio_server import ROOT, running_server

# Small bounds so that every generated case is fast; the served document carries them.
FLAGS = ("--max-n", "2", "--max-logprobs", "3", "--max-prompts", "4", "-t", "1")
EXAMPLES = 100  # generated cases per operation: the whole file takes ~35 s on two cores
CONFORMANCE = [not_a_server_error, status_code_conformance, content_type_conformance,
               response_headers_conformance, response_schema_conformance]
TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather of a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}, "strict": True}}
MESSAGES = [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Hi"}]}]


def fetch_doc(server):
    with urllib.request.urlopen(server["base"] + "/openapi.json", timeout=30) as r:
        assert r.status == 200
        assert r.headers["Content-Type"] == "application/json"
        return json.loads(r.read())


def load(server, doc):
    # From the dict, not from_url: loaded from its URL, schemathesis leaves out the operation
    # that serves the document, which is to be tested too.
    schema = schemathesis.openapi.from_dict(doc)
    schema.config.update(base_url=server["base"], request_timeout=60)
    return schema


@pytest.fixture(scope="module")
def small():
    """The server the generated cases go to."""
    with running_server(*FLAGS, "--max-model-len", "64") as s:
        yield s


@pytest.fixture(scope="module")
def server():
    """Room for the field-by-field requests (a chat with tools renders to ~200 tokens)."""
    with running_server(*FLAGS, "--max-model-len", "512") as s:
        yield s


@pytest.fixture(scope="module")
def doc(server):
    return fetch_doc(server)


@pytest.fixture(scope="module")
def api_schema(small):
    return load(small, fetch_doc(small))


def post(server, path, body):
    req = urllib.request.Request(server["base"] + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_document_is_valid_openapi_31(small, api_schema):
    doc = fetch_doc(small)
    assert doc["openapi"].startswith("3.1.")
    validate(doc)
    ops = [r.ok().label for r in api_schema.get_all_operations()]
    assert len(ops) == sum(len(item) for item in doc["paths"].values()) >= 11
    # The server's limits are in it (FLAGS).
    schemas = doc["components"]["schemas"]
    assert schemas["SampleCount"]["maximum"] == 2
    assert schemas["LogprobCount"]["maximum"] == 3
    assert schemas["MaxTokens"]["maximum"] == 63
    assert doc["security"] == []  # no API key configured


def request_schemas(doc):
    """{(method, path): request-body schema name}."""
    out = {}
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if "requestBody" in op:
                ref = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
                out[(method.upper(), path)] = ref.rsplit("/", 1)[1]
    return out


def field_values(model, hidden):
    """A valid value for every documented request field, per request schema. An entry is the value,
    or (value, companions: fields it needs, dropped: base fields it replaces)."""
    sampling = {
        "model": model, "temperature": 0.5, "top_p": 0.9, "top_k": 5, "min_p": 0.05,
        "presence_penalty": 0.5, "frequency_penalty": 0.5, "repetition_penalty": 1.1, "seed": 7,
        "min_tokens": 1, "ignore_eos": True, "include_stop_str_in_output": True,
        "skip_special_tokens": False, "stop": ["\n\n"], "stop_token_ids": [2],
        "logit_bias": {"2": -1.5}, "n": 2, "priority": 0, "attention_window": 32,
        "attention_sinks": (4, {"attention_window": 32}, ()), "stream": True,
        "stream_options": ({"include_usage": True}, {"stream": True}, ()), "user": "u",
        "max_tokens": 2, "max_completion_tokens": 2,
        "response_format": {"type": "json_schema", "json_schema": {
            "name": "answer", "description": "d", "strict": True,
            "schema": {"type": "object", "properties": {"a": {"type": "integer"}}}}},
        "structured_outputs": {"choice": ["yes", "no"]}, "guided_json": {"type": "object"},
        "guided_regex": "[a-z]+", "guided_choice": ["yes", "no"],
        "guided_grammar": 'root ::= "yes" | "no"', "guided_decoding_backend": "auto",
    }
    return {
        "CompletionRequest": dict(sampling, prompt=["Hello", "Bye"], echo=True, logprobs=2,
                                  best_of=1),
        "ChatCompletionRequest": dict(
            sampling, messages=MESSAGES + [
                {"role": "assistant", "content": None, "tool_calls": [{
                    "id": "call_1", "type": "function",
                    "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}],
            logprobs=True, top_logprobs=(2, {"logprobs": True}, ()), add_generation_prompt=True,
            tools=[TOOL], tool_choice=("auto", {"tools": [TOOL]}, ()), parallel_tool_calls=False),
        "EmbeddingRequest": {
            "model": model, "input": [[1, 2, 3]], "messages": (MESSAGES, {}, ("input",)),
            "add_generation_prompt": (True, {"messages": MESSAGES}, ("input",)),
            "encoding_format": "base64", "dimensions": hidden, "user": "u"},
        "TokenizeRequest": {
            "model": model, "prompt": "Hello", "messages": (MESSAGES, {}, ("prompt",)),
            "add_generation_prompt": (False, {"messages": MESSAGES}, ("prompt",)),
            "add_special_tokens": False},
        "DetokenizeRequest": {"model": model, "tokens": [1, 2, 3]},
    }


BASES = {
    "CompletionRequest": {"prompt": "Hello", "max_tokens": 2},
    "ChatCompletionRequest": {"messages": MESSAGES, "max_tokens": 2},
    "EmbeddingRequest": {"input": "Hello"},
    "TokenizeRequest": {"prompt": "Hello"},
    "DetokenizeRequest": {"tokens": [1, 2]},
}


@pytest.fixture(scope="module")
def values(server):
    with urllib.request.urlopen(server["base"] + "/v1/models", timeout=30) as r:
        model = json.loads(r.read())["data"][0]["id"]
    status, body = post(server, "/v1/embeddings", {"input": "x"})
    assert status == 200, body
    return field_values(model, len(json.loads(body)["data"][0]["embedding"]))


def test_every_documented_request_field_is_accepted(server, doc, values):
    """Each field alone (with what it needs) on a minimal request: 200, and a reply that conforms;
    the table must name exactly the documented fields, so a field added to the document without
    a value here fails."""
    for (method, path), name in request_schemas(doc).items():
        props = doc["components"]["schemas"][name]["properties"]
        assert set(values[name]) == set(props), f"{name}: documented vs tested fields"
        op = load(server, doc)[path][method]
        # The bodies are valid by the document, too.
        validator = jsonschema.Draft202012Validator(
            {"$ref": f"#/components/schemas/{name}", "components": doc["components"]})
        for field, entry in values[name].items():
            value, companions, dropped = entry if isinstance(entry, tuple) else (entry, {}, ())
            body = {k: v for k, v in BASES[name].items() if k not in dropped}
            body.update(companions)
            body[field] = value
            validator.validate(body)
            case = op.Case(body=body)
            response = case.call()
            assert response.status_code == 200, f"{path} {field}: {response.text[:300]}"
            case.validate_response(response, checks=CONFORMANCE)


def test_undocumented_fields_are_refused_where_the_document_says(server, doc):
    for (method, path), name in request_schemas(doc).items():
        closed = doc["components"]["schemas"][name].get("additionalProperties") is False
        status, body = post(server, path, dict(BASES[name], folio_undocumented=1))
        if closed:
            assert status == 400, f"{path}: {body[:300]}"
            assert json.loads(body)["error"]["param"] == "folio_undocumented"
        else:  # "Other fields are not read."
            assert status == 200, f"{path}: {body[:300]}"
    # Nested objects the document closes.
    chat = BASES["ChatCompletionRequest"]
    tool = json.loads(json.dumps(TOOL))
    tool["bogus"] = 1
    nested_tool = json.loads(json.dumps(TOOL))
    nested_tool["function"]["bogus"] = 1
    for body, param in [
        (dict(chat, stream=True, stream_options={"bogus": 1}), "stream_options.bogus"),
        (dict(chat, response_format={"type": "json_object", "bogus": 1}), "response_format.bogus"),
        (dict(chat, response_format={"type": "json_schema", "json_schema": {
            "name": "n", "bogus": 1}}), "response_format.json_schema.bogus"),
        (dict(chat, structured_outputs={"regex": "a", "bogus": 1}), "structured_outputs.bogus"),
        (dict(chat, tools=[tool]), "tools[0].bogus"),
        (dict(chat, tools=[nested_tool]), "tools[0].function.bogus"),
    ]:
        status, reply = post(server, "/v1/chat/completions", body)
        assert status == 400, f"{param}: {reply[:300]}"
        assert json.loads(reply)["error"]["param"] == param


def test_rich_replies_conform(server, doc):
    """Replies with every optional part (logprobs, usage chunks, tool calls, several choices,
    base64 embeddings), streamed and not, validated against the document event by event."""
    schema = load(server, doc)
    forced = {"messages": [{"role": "user", "content": "Weather in Oslo?"}], "tools": [TOOL],
              "tool_choice": "required", "parallel_tool_calls": False, "max_tokens": 100,
              "temperature": 0}
    cases = [
        ("/v1/completions", {"prompt": ["Hello", "Bye"], "max_tokens": 3, "n": 2, "logprobs": 3}),
        ("/v1/completions", {"prompt": [[1, 2, 3]], "max_tokens": 3, "echo": True,
                             "stream": True, "stream_options": {"include_usage": True}}),
        ("/v1/completions", {"prompt": "Hi", "max_tokens": 3, "n": 2, "logprobs": 2,
                             "stream": True}),
        ("/v1/chat/completions", {"messages": MESSAGES, "max_tokens": 3, "n": 2,
                                  "logprobs": True, "top_logprobs": 3}),
        ("/v1/chat/completions", {"messages": MESSAGES, "max_tokens": 3, "logprobs": True,
                                  "top_logprobs": 2, "stream": True,
                                  "stream_options": {"include_usage": True}}),
        ("/v1/chat/completions", forced),
        ("/v1/chat/completions", dict(forced, stream=True)),
        ("/v1/chat/completions", dict(forced, tool_choice={
            "type": "function", "function": {"name": "get_weather"}}, n=2)),
        ("/v1/embeddings", {"input": ["a", "b"], "encoding_format": "float"}),
        ("/v1/embeddings", {"messages": MESSAGES, "encoding_format": "base64"}),
    ]
    for path, body in cases:
        case = schema[path]["POST"].Case(body=body)
        response = case.call()
        assert response.status_code == 200, f"{path} {body}: {response.text[:300]}"
        case.validate_response(response, checks=CONFORMANCE)
        if body.get("tool_choice") and not body.get("stream"):
            assert json.loads(response.text)["choices"][0]["message"]["tool_calls"]


# The operations, read from the source tree at collection time (the server starts later); the
# route-table test (openapi_test.cpp) keeps this list equal to the router's.
OPERATIONS = [(method.upper(), path) for path, item in
              json.load(open(ROOT / "src/server/openapi.json"))["paths"].items() for method in item]


@pytest.mark.parametrize("method,path", OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_schemathesis_short_run(api_schema, method, path):
    """Generated requests, schema-valid and not: no 5xx and every reply as documented (status
    code, content type, headers, body; a stream event by event). Hypothesis directly (the
    schemathesis pytest plugin's from_fixture reads a pytest attribute that pytest 9 removed)."""
    op = api_schema[path][method]
    modes = [GenerationMode.POSITIVE]
    if op.body or any(True for _ in op.iter_parameters()):
        modes.append(GenerationMode.NEGATIVE)
    strategy = st.one_of([op.as_strategy(generation_mode=m) for m in modes])

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck),
              phases=[Phase.generate], derandomize=True, database=None)
    @given(strategy)
    def run(case):
        case.call_and_validate(checks=CONFORMANCE)

    run()
