"""The Python package (`import folio`, python/): vLLM's offline API over folio's engine.

References: `folio generate` (the same engine from the CLI: greedy outputs must be
token-identical), HF `tokenizers` built from the GGUF (tools/gen_tokenizer_goldens.py),
transformers' chat-template renderer (tools/gen_chat_goldens.py), xgrammar-free checks of
structured output (json.loads, the choice list), and Python's own signal and thread machinery
for the GIL and Ctrl-C.

Run: FOLIO_BIN=build/release/folio .venv/bin/python -m pytest tests/python/test_python_api.py
(scripts/setup installs the package into .venv).
"""
import asyncio
import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOLIO = os.environ.get("FOLIO_BIN", os.path.join(ROOT, "build", "release", "folio"))
MODEL = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")

folio = pytest.importorskip("folio") if not os.environ.get("CI") else __import__("folio")

# Engine flags shared by the Python side and `folio generate`: few sequences at once, so a
# batch of 12 prompts queues and runs through continuous batching (admissions mid-run).
ENGINE = {"threads": 2, "max_num_seqs": 4, "max_model_len": 512}
ENGINE_FLAGS = ["-t", "2", "--max-num-seqs", "4", "--max-model-len", "512"]

PROMPTS = [
    "The capital of France is",
    "Write a haiku about the sea:",
    "def fibonacci(n):",
    "Q: What is 12 * 7?\nA:",
    "Once upon a time, in a land far away,",
    "The three primary colors are",
    "List three fruits:",
    "Translate to French: Good morning",
    "The quick brown fox",
    "In 1969, the first humans",
    "Water boils at",
    "A short poem about autumn leaves falling slowly to the ground:",
]


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "tools", path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def llm():
    assert os.path.exists(MODEL), f"{MODEL} missing: run scripts/setup"
    return folio.LLM(MODEL, **ENGINE)


def test_package_shape():
    # The vLLM names, the stubs IDEs read, and the version.
    for name in ("LLM", "AsyncLLM", "SamplingParams", "RequestOutput", "CompletionOutput",
                 "GuidedDecodingParams", "FolioError"):
        assert hasattr(folio, name), name
    pkg = os.path.dirname(folio.__file__)
    assert os.path.exists(os.path.join(pkg, "py.typed"))
    stub = open(os.path.join(pkg, "_core.pyi"), encoding="utf-8").read()
    assert "class OfflineEngine" in stub and "def generate" in stub
    assert issubclass(folio.FolioError, ValueError)


def test_kernel_environment_is_read_at_import():
    # As the CLI reads them at start-up: FOLIO_ISA and FOLIO_DECODE_PANELS apply to the
    # package too (docs/CONFIG.md), and a bad value fails the import naming the variable.
    def imports(**env):
        return subprocess.run([sys.executable, "-c", "import folio"], capture_output=True,
                              text=True, env=dict(os.environ, **env))
    for env, message in ((dict(FOLIO_ISA="avx9"), "FOLIO_ISA=avx9: instruction set 'avx9'"),
                         (dict(FOLIO_DECODE_PANELS="three"),
                          "FOLIO_DECODE_PANELS=three: expected one or two")):
        r = imports(**env)
        assert r.returncode != 0 and "ImportError" in r.stderr and message in r.stderr, r.stderr
    r = imports(FOLIO_ISA="scalar", FOLIO_DECODE_PANELS="one")
    assert r.returncode == 0, r.stderr


def test_greedy_batch_is_token_identical_to_folio_generate(llm, tmp_path):
    inp, outp = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    with open(inp, "w", encoding="utf-8") as f:
        for i, p in enumerate(PROMPTS):
            f.write(json.dumps({"prompt": p, "max_tokens": 20 + i, "temperature": 0}) + "\n")
    r = subprocess.run([FOLIO, "generate", "-m", MODEL, "--input", str(inp), "--output",
                        str(outp), *ENGINE_FLAGS], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    cli = [json.loads(line) for line in open(outp, encoding="utf-8")]
    params = [folio.SamplingParams(temperature=0, max_tokens=20 + i) for i in range(len(PROMPTS))]
    outs = llm.generate(PROMPTS, params, use_tqdm=False)
    assert len(outs) == len(PROMPTS)
    for p, o, c in zip(PROMPTS, outs, cli):
        assert o.prompt == p and o.finished
        assert o.prompt_token_ids == llm.get_tokenizer().encode(p)
        assert o.outputs[0].token_ids == c["token_ids"], p
        assert o.outputs[0].text == c["text"], p
        assert o.outputs[0].finish_reason == c["finish_reason"]


def test_tokenizer_matches_hf_tokenizers(llm):
    hf = _load("gen_tokenizer_goldens.py", "gen_tokenizer_goldens").build_byte_level_bpe(
        MODEL, digits_individual=True)
    tok = llm.get_tokenizer()
    for text in PROMPTS + ["中文和English混合，数字3.14159。\n", "  spaces  \t\n", "🚀 emoji"]:
        want = hf.encode(text, add_special_tokens=False).ids
        got = tok.encode(text, add_special_tokens=False)
        assert got == want, text
        assert tok.decode(got) == text
    assert tok.eos_token_id is not None and tok.vocab_size == len(tok) > 1000
    with pytest.raises(TypeError):
        tok.encode(123)


def test_chat_renders_the_template_as_transformers(llm):
    chat = _load("gen_chat_goldens.py", "gen_chat_goldens")
    template = chat.gguf_chat_template(MODEL)
    messages = [{"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Name a color."},
                {"role": "assistant", "content": "Blue."},
                {"role": "user", "content": "Another one?"}]
    tok = llm.get_tokenizer()
    want = chat.render(template, messages, True, "", "<|im_end|>", {})
    assert tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True) == want
    ids = tok.apply_chat_template(messages, add_generation_prompt=True)
    assert ids[0] == tok.encode("<|im_start|>", add_special_tokens=False)[0] or \
        tok.decode(ids[:1], skip_special_tokens=False) == "<|im_start|>"
    out = llm.chat(messages, folio.SamplingParams(temperature=0, max_tokens=8), use_tqdm=False)
    assert len(out) == 1 and out[0].prompt == want and out[0].prompt_token_ids == ids
    same = llm.generate({"prompt_token_ids": ids},
                        folio.SamplingParams(temperature=0, max_tokens=8), use_tqdm=False)
    assert out[0].outputs[0].token_ids == same[0].outputs[0].token_ids
    # A batch of conversations, and a custom template.
    two = llm.chat([messages[:2], messages], folio.SamplingParams(temperature=0, max_tokens=4),
                   use_tqdm=False)
    assert [o.prompt for o in two] == [chat.render(template, messages[:2], True, "",
                                                   "<|im_end|>", {}), want]
    custom = llm.chat(messages[:2], folio.SamplingParams(max_tokens=1), use_tqdm=False,
                      chat_template="{% for m in messages %}[{{ m.role }}] {{ m.content }}\n"
                                    "{% endfor %}")
    assert custom[0].prompt == "[system] You are terse.\n[user] Name a color.\n"
    with pytest.raises(folio.FolioError, match="messages"):
        llm.chat([{"role": "user", "content": "x", "bogus": 1}], use_tqdm=False)


def test_sampling_params(llm):
    tok = llm.get_tokenizer()
    # n samples with a seed: reproducible, and distinct from each other at temperature 1.
    sp = folio.SamplingParams(n=3, temperature=1.0, seed=1234, max_tokens=12, ignore_eos=True)
    a = llm.generate(PROMPTS[0], sp, use_tqdm=False)[0]
    b = llm.generate(PROMPTS[0], sp, use_tqdm=False)[0]
    assert [o.index for o in a.outputs] == [0, 1, 2]
    assert [o.token_ids for o in a.outputs] == [o.token_ids for o in b.outputs]
    assert len({tuple(o.token_ids) for o in a.outputs}) > 1
    assert all(len(o.token_ids) == 12 and o.finish_reason == "length" for o in a.outputs)
    for o in a.outputs:
        assert o.text == tok.decode(o.token_ids)
    # A stop string ends the sample; its text is not shown.
    free = llm.generate(PROMPTS[4], folio.SamplingParams(temperature=0, max_tokens=40),
                        use_tqdm=False)[0].outputs[0]
    word = free.text.split()[1]
    stopped = llm.generate(PROMPTS[4], folio.SamplingParams(temperature=0, max_tokens=40,
                                                             stop=[word]), use_tqdm=False)
    s = stopped[0].outputs[0]
    assert s.finish_reason == "stop" and s.stop_reason == word
    assert s.text == free.text[:free.text.index(word)]
    # Logprobs: the chosen token and the top alternatives, over the model's distribution.
    lp = llm.generate(PROMPTS[0], folio.SamplingParams(temperature=0, max_tokens=6, logprobs=3),
                      use_tqdm=False)[0].outputs[0]
    assert len(lp.logprobs) == len(lp.token_ids) == 6
    total = 0.0
    for tid, d in zip(lp.token_ids, lp.logprobs):
        assert tid in d and 3 <= len(d) <= 4
        assert d[tid].rank == 1  # greedy: the chosen token is the most likely
        ranked = sorted((v for v in d.values() if v.rank), key=lambda v: v.rank)
        assert [v.rank for v in ranked] == [1, 2, 3]
        assert all(x.logprob >= y.logprob for x, y in zip(ranked, ranked[1:]))
        assert all(v.logprob <= 0 for v in d.values())
        total += d[tid].logprob
    assert lp.cumulative_logprob == pytest.approx(total, rel=1e-5)
    # Token-id prompts, and per-prompt parameters.
    ids = tok.encode(PROMPTS[1])
    outs = llm.generate([{"prompt_token_ids": ids}, PROMPTS[1]],
                        [folio.SamplingParams(temperature=0, max_tokens=5),
                         folio.SamplingParams(temperature=0, max_tokens=3)], use_tqdm=False)
    assert outs[0].prompt is None and outs[0].prompt_token_ids == ids
    assert outs[1].outputs[0].token_ids == outs[0].outputs[0].token_ids[:3]


def test_structured_output(llm):
    choice = llm.generate("Is the sky blue? Answer:", folio.SamplingParams(
        temperature=1.0, seed=5, max_tokens=10,
        guided_decoding=folio.GuidedDecodingParams(choice=["yes", "no", "maybe"])),
        use_tqdm=False)[0].outputs[0]
    assert choice.text in ("yes", "no", "maybe") and choice.finish_reason == "stop"
    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
                                               "age": {"type": "integer"}},
              "required": ["name", "age"], "additionalProperties": False}
    js = llm.generate("A person as JSON:", folio.SamplingParams(
        temperature=0.7, seed=3, max_tokens=60,
        guided_decoding=folio.GuidedDecodingParams(json=schema)), use_tqdm=False)[0].outputs[0]
    assert js.finish_reason == "stop", js.text
    value = json.loads(js.text)
    assert set(value) == {"name", "age"} and isinstance(value["age"], int)
    with pytest.raises(ValueError, match="exactly one"):
        llm.generate("x", folio.SamplingParams(guided_decoding=folio.GuidedDecodingParams(
            regex="a+", choice=["a"])), use_tqdm=False)


def test_errors_are_exceptions_with_folio_messages(llm):
    with pytest.raises(folio.FolioError, match="temperature"):
        llm.generate("x", folio.SamplingParams(temperature=-1), use_tqdm=False)
    with pytest.raises(folio.FolioError, match="prompt 1: .*max-model-len|prompt 1: .*512"):
        llm.generate(["ok", "word " * 600], folio.SamplingParams(max_tokens=4), use_tqdm=False)
    with pytest.raises(TypeError, match="best_of"):
        folio.SamplingParams(best_of=2)
    with pytest.raises(TypeError, match="tensor_parallel_size"):
        folio.LLM(MODEL, tensor_parallel_size=2)
    with pytest.raises(folio.FolioError, match="kv-cache-dtype|int3"):
        folio.LLM(MODEL, kv_cache_dtype="int3")
    with pytest.raises(folio.FolioError, match="no-such-model"):
        folio.LLM("/nonexistent/no-such-model.gguf")
    with pytest.raises(ValueError, match="2 sampling_params for 1 prompts"):
        llm.generate(["x"], [folio.SamplingParams(), folio.SamplingParams()], use_tqdm=False)
    with pytest.raises(TypeError, match="unsupported keys"):
        llm.generate({"prompt": "x", "multi_modal_data": {}}, use_tqdm=False)
    # The engine still works after every refusal.
    assert llm.generate("ok", folio.SamplingParams(max_tokens=2), use_tqdm=False)[0].finished


def test_gil_is_released_while_generating(llm):
    # Another Python thread keeps running while a batch generates on this one.
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.005)

    t = threading.Thread(target=tick)
    t.start()
    start = time.monotonic()
    llm.generate(PROMPTS[:4], folio.SamplingParams(temperature=0, max_tokens=48, ignore_eos=True),
                 use_tqdm=False)
    end = time.monotonic()
    stop.set()
    t.join()
    during = [x for x in ticks if start < x < end]
    # With the GIL held for the whole batch the ticker would stall; released, it ticks
    # about every 5 ms (half of that is plenty of margin on a loaded machine).
    assert end - start > 0.2
    assert len(during) >= (end - start) / 0.005 / 4, (len(during), end - start)


def test_ctrl_c_aborts_the_batch_cleanly(tmp_path):
    script = tmp_path / "interrupt.py"
    script.write_text(textwrap.dedent(f"""
        import signal, sys, time
        import folio
        # A shell starts background jobs with SIGINT ignored, and Python then keeps it
        # ignored: install Python's own handler, as an interactive session has it.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        llm = folio.LLM({MODEL!r}, threads=2, max_num_seqs=8)
        sp = folio.SamplingParams(temperature=0, max_tokens=400, ignore_eos=True)
        print("ready", flush=True)
        t0 = time.monotonic()
        try:
            llm.generate(["Tell me a long story."] * 16, sp, use_tqdm=False)
            print("finished", flush=True)
        except KeyboardInterrupt:
            print(f"interrupted after %.1f s" % (time.monotonic() - t0), flush=True)
        out = llm.generate("The capital of France is", folio.SamplingParams(max_tokens=4,
                           temperature=0), use_tqdm=False)
        print("after", len(out[0].outputs[0].token_ids), flush=True)
    """))
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    time.sleep(1.5)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 0, out
    lines = out.split("\n")
    assert lines[0].startswith("interrupted after"), out
    assert float(lines[0].split()[2]) < 30  # 16 x 400 tokens take minutes on 2 cores
    assert lines[1] == "after 4"


def test_async_streaming(llm):
    engine = folio.AsyncLLM(MODEL, **ENGINE)
    sp = folio.SamplingParams(temperature=0, max_tokens=16)

    async def collect(prompt, rid):
        seen = []
        async for out in engine.generate(prompt, sp, rid):
            seen.append(out)
        return seen

    async def early(prompt):
        async for out in engine.generate(prompt, folio.SamplingParams(
                max_tokens=200, ignore_eos=True), "early"):
            assert not out.finished
            break  # leaving the stream aborts the request

    async def main():
        results = await asyncio.gather(*(collect(p, f"r{i}") for i, p in enumerate(PROMPTS[:4])),
                                       early(PROMPTS[5]))
        assert engine._core.num_live() == 0
        return results[:4]

    try:
        streams = asyncio.run(main())
        # The same engine in a second loop (the first is closed): it moves
        # over, and one request alone equals LLM.generate's.
        alone = asyncio.run(collect(PROMPTS[0], "alone"))[-1].outputs[0]
    finally:
        engine.shutdown()
    for i, seen in enumerate(streams):
        assert seen[-1].finished and all(not o.finished for o in seen[:-1])
        assert all(o.request_id == f"r{i}" for o in seen)
        texts = [o.outputs[0].text for o in seen]
        assert all(b.startswith(a) for a, b in zip(texts, texts[1:]))  # cumulative
        assert len(seen) > 2  # streamed, not one final item
    want = llm.generate(PROMPTS[0], sp, use_tqdm=False)[0].outputs[0]
    assert alone.token_ids == want.token_ids and alone.text == want.text


def test_async_one_loop_at_a_time():
    # While a loop on another thread streams, a second loop is refused
    # (the engine's wake-ups go to one loop); once that loop is closed the
    # engine moves over.
    engine = folio.AsyncLLM(MODEL, **ENGINE)
    started, release = threading.Event(), threading.Event()

    async def hold():
        async for _ in engine.generate(PROMPTS[0], folio.SamplingParams(
                max_tokens=200, ignore_eos=True), "held"):
            started.set()
            while not release.is_set():
                await asyncio.sleep(0.01)
            break

    async def second():
        return [o async for o in engine.generate(
            PROMPTS[1], folio.SamplingParams(temperature=0, max_tokens=4), "second")]

    holder = threading.Thread(target=lambda: asyncio.run(hold()))
    holder.start()
    try:
        assert started.wait(120)
        with pytest.raises(RuntimeError, match="another event loop"):
            asyncio.run(second())
    finally:
        release.set()
        holder.join(120)
    try:
        assert asyncio.run(second())[-1].finished
    finally:
        engine.shutdown()
    with pytest.raises(RuntimeError, match="shut down"):
        asyncio.run(second())

    async def chat():
        async for _ in engine.chat([{"role": "user", "content": "Hi"}]):
            pass

    with pytest.raises(RuntimeError, match="shut down"):
        asyncio.run(chat())
    with pytest.raises(RuntimeError, match="shut down"):
        engine.get_tokenizer()
