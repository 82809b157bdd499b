#!/usr/bin/env python3
"""bench/python_api.py -- folio's Python API vs llama-cpp-python, offline generation.

    .venv/bin/python bench/python_api.py [--model M.gguf] [--threads N] [--prompts 64]
        [--max-tokens 64] [--repeats 3] [--flash-attn auto|on|off] [--json OUT]
        [--only folio|llama] [--no-prefix-caching] [--folio-kwarg KEY=VALUE ...]

What is measured: the same N prompts (default 64), the same GGUF model and the same thread
count on both sides, greedy (temperature 0), exactly --max-tokens tokens generated per prompt
with end-of-sequence ignored on both sides (folio: SamplingParams(ignore_eos=True);
llama-cpp-python: a logits processor that sets every end-of-generation token's logit to -inf,
its API having no ignore_eos -- it stops on any such token -- and this in-place processor
being cheaper than its logit_bias argument, which copies the logits). Every request's generated
token count and finish reason are checked; a side that generated anything other than max_tokens
per prompt is reported. The two differ in what they generate after the model's "end": folio
emits the EOS token and continues (vLLM's ignore_eos), llama-cpp-python picks the next-best
token; the work per token is the same. --folio-ban-tokens 0,2,4 gives folio the same ban (as
logit_bias) for comparing texts. "cores busy" (CPU seconds / wall seconds while generating)
shows whether a run got the machine to itself.

  * folio: one `llm.generate(prompts, params)` call. folio batches all N requests through its
    continuous-batching engine (max_num_seqs defaults to N here, so all run at once).
  * llama-cpp-python: `Llama(model_path, n_threads, n_threads_batch, n_ctx, n_batch=512,
    flash_attn)` and `llm(prompt, max_tokens=..., temperature=0)` in a Python loop over the
    prompts: it serves them one at a time. That is each library's offline API -- llama-cpp-python
    has no batched-generation call -- so the comparison is "what a user gets from each", and
    folio's batching is the point of it, not a hidden advantage. flash_attn is measured both
    ways (--flash-attn auto, the default) and the faster median is llama-cpp-python's figure;
    the table says which.

Prefix caching: folio's is on by default (enable_prefix_caching=True, as in its CLI) and left on
unless --no-prefix-caching. It cannot help across repeats: every repeat of every side runs in a
fresh process (cold caches, load timed separately). Within a run the prompts are natural short
instructions built from a fixed list (templates x subjects); they share at most a few tokens of
common prefix (e.g. "Write a short poem about"), which the report measures ("max shared prefix",
in tokens) -- shorter than one KV block, so no prefix-cache hits. llama-cpp-python's own prefix
reuse (it keeps the previous prompt's KV and re-evaluates from the first differing token) is on,
as it is for its users.

Each repeat runs both sides back to back in separate processes (folio: this interpreter, i.e.
the project venv; llama-cpp-python: the python of bench/.work/lcp-venv, built by
bench/llama_cpp_python.sh -- the two never share a process or venv), rotating the order so both
see the same machine state. Per run: import time, load time (the constructor), one short warm-up
request (a prompt unrelated to the benchmark's, excluded from the timing) and the generation
wall time. Reported: medians over --repeats of requests/s and generated tokens/s, and the ratio
folio / llama-cpp-python. Progress on stderr; a markdown table on stdout; --json OUT keeps
every run's raw numbers.

Do not run it while something compiles on the machine (it warns when cc1plus, ninja or
clang-tidy run).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = "models/SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_LCP_PYTHON = ROOT / "bench/.work/lcp-venv/bin/python"
WARMUP_PROMPT = "Hello"

# Prompts: templates x subjects, interleaved so consecutive prompts differ in both. Fixed lists,
# so the texts are the same on every run and on both sides.
TEMPLATES = [
    "Explain {s} to a ten-year-old.",
    "Write a short poem about {s}.",
    "List three surprising facts about {s}.",
    "What are the main advantages and disadvantages of {s}?",
    "Describe the history of {s} in a few sentences.",
    "Give me a practical tip related to {s}.",
    "How would you teach a beginner about {s}?",
    "Summarize why people care about {s}.",
]
SUBJECTS = [
    "photosynthesis", "the water cycle", "black holes", "volcanoes", "honeybees",
    "the printing press", "electric cars", "compound interest", "the human heart",
    "machine learning", "the Roman Empire", "coffee brewing", "plate tectonics",
    "solar panels", "chess openings", "vaccines", "the moon landing", "recycling plastic",
    "jazz music", "the stock market", "rainforests", "bread baking", "quantum computing",
    "sleep", "the Silk Road",
]


def make_prompts(n: int) -> list[str]:
    out = []
    i = 0
    while len(out) < n:
        t = TEMPLATES[i % len(TEMPLATES)]
        s = SUBJECTS[(i * 7 + i // len(SUBJECTS)) % len(SUBJECTS)]
        p = t.format(s=s)
        if p not in out:
            out.append(p)
        i += 1
        if i > 100 * n + 1000:
            raise SystemExit(f"cannot build {n} distinct prompts")
    return out


def max_shared_prefix(token_lists: list[list[int]]) -> int:
    """Longest token prefix any two prompts share (adjacent after sorting suffices)."""
    s = sorted(tuple(t) for t in token_lists)
    best = 0
    for a, b in zip(s, s[1:]):
        k = 0
        while k < min(len(a), len(b)) and a[k] == b[k]:
            k += 1
        best = max(best, k)
    return best


def log(msg: str) -> None:
    print(f"[python_api] {time.strftime('%H:%M:%S')} {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Workers: each runs in its own process and prints one JSON object as its last stdout line.


def worker_folio(spec: dict) -> dict:
    t0 = time.perf_counter()
    import folio  # noqa: PLC0415

    import_s = time.perf_counter() - t0
    kwargs = dict(model=spec["model"], threads=spec["threads"], max_num_seqs=spec["max_num_seqs"])
    if not spec["prefix_caching"]:
        kwargs["enable_prefix_caching"] = False
    kwargs.update(spec.get("folio_kwargs", {}))
    t0 = time.perf_counter()
    llm = folio.LLM(**kwargs)
    load_s = time.perf_counter() - t0
    ban = spec.get("folio_ban_tokens") or []
    params = folio.SamplingParams(temperature=0.0, max_tokens=spec["max_tokens"], ignore_eos=True,
                                  logit_bias={t: -100.0 for t in ban} or None)
    warmup_s = None
    if spec["warmup"]:
        t0 = time.perf_counter()
        llm.generate([WARMUP_PROMPT], folio.SamplingParams(temperature=0.0, max_tokens=4,
                                                            ignore_eos=True), use_tqdm=False)
        warmup_s = time.perf_counter() - t0
    prompts = spec["prompts"]
    c0, t0 = time.process_time(), time.perf_counter()
    outs = llm.generate(prompts, params, use_tqdm=False)  # no progress bar, as llama's side
    gen_s = time.perf_counter() - t0
    cpu_s = time.process_time() - c0
    reqs = []
    for p, o in zip(prompts, outs):
        c = o.outputs[0]
        reqs.append(dict(prompt_ok=(o.prompt == p), prompt_tokens=len(o.prompt_token_ids),
                         completion_tokens=len(c.token_ids), finish_reason=c.finish_reason,
                         text=c.text))
    return dict(side="folio", version=getattr(folio, "__version__", "?"), kwargs=kwargs,
                banned_tokens=ban,
                import_s=import_s, load_s=load_s, warmup_s=warmup_s, gen_s=gen_s, cpu_s=cpu_s,
                n_outputs=len(outs), requests=reqs,
                max_shared_prefix=max_shared_prefix([list(o.prompt_token_ids) for o in outs]))


def worker_llama(spec: dict) -> dict:
    t0 = time.perf_counter()
    import llama_cpp  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    import_s = time.perf_counter() - t0
    kwargs = dict(model_path=spec["model"], n_threads=spec["threads"],
                  n_threads_batch=spec["threads"], n_ctx=spec["n_ctx"], n_batch=512,
                  flash_attn=spec["flash_attn"], verbose=False)
    t0 = time.perf_counter()
    llm = llama_cpp.Llama(**kwargs)
    load_s = time.perf_counter() - t0
    vocab = llm._model.vocab  # what Llama itself checks end-of-generation against
    eog = [t for t in range(llm.n_vocab()) if llama_cpp.llama_vocab_is_eog(vocab, t)]
    eog_idx = np.array(eog, dtype=np.intp)

    def ban_eog(_input_ids, scores):  # in place: the cheapest hook the API offers
        scores[eog_idx] = -np.inf
        return scores

    procs = llama_cpp.LogitsProcessorList([ban_eog])
    call = dict(temperature=0.0, repeat_penalty=1.0, logits_processor=procs)
    warmup_s = None
    if spec["warmup"]:
        t0 = time.perf_counter()
        llm(WARMUP_PROMPT, max_tokens=4, **call)
        warmup_s = time.perf_counter() - t0
    prompts = spec["prompts"]
    c0, t0 = time.process_time(), time.perf_counter()
    outs = [llm(p, max_tokens=spec["max_tokens"], **call) for p in prompts]
    gen_s = time.perf_counter() - t0
    cpu_s = time.process_time() - c0
    reqs = []
    for o in outs:
        c = o["choices"][0]
        reqs.append(dict(prompt_ok=True, prompt_tokens=o["usage"]["prompt_tokens"],
                         completion_tokens=o["usage"]["completion_tokens"],
                         finish_reason=c["finish_reason"], text=c["text"]))
    toks = [llm.tokenize(p.encode(), add_bos=False, special=True) for p in prompts]
    return dict(side="llama", version=llama_cpp.__version__,
                kwargs={k: v for k, v in kwargs.items() if k != "verbose"},
                call=dict(temperature=0.0, repeat_penalty=1.0, eog_banned=eog),
                system_info=llama_cpp.llama_print_system_info().decode(errors="replace"),
                import_s=import_s, load_s=load_s, warmup_s=warmup_s, gen_s=gen_s, cpu_s=cpu_s,
                n_outputs=len(outs), requests=reqs, max_shared_prefix=max_shared_prefix(toks))


# ---------------------------------------------------------------------------------------------
# Driver.


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def busy() -> str:
    """Compilers running on the machine (they would skew the numbers), or ''."""
    try:
        r = subprocess.run(["pgrep", "-fa", "cc1plus|ninja|clang-tidy"], capture_output=True, text=True)
    except FileNotFoundError:
        return ""
    lines = [l for l in r.stdout.splitlines() if str(os.getpid()) != l.split()[0]]
    return f"{len(lines)} compile process(es)" if lines else ""


def run_worker(python: str, side: str, spec: dict, timeout: float) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(spec, f)
        path = f.name
    try:
        r = subprocess.run([python, str(Path(__file__).resolve()), "--worker", side, "--spec", path],
                           capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    finally:
        os.unlink(path)
    if r.returncode != 0 or not r.stdout.strip():
        sys.stderr.write(r.stderr[-4000:])
        raise SystemExit(f"{side} worker failed (rc {r.returncode})")
    return json.loads(r.stdout.strip().splitlines()[-1])


def summarize(run: dict, max_tokens: int, n_prompts: int) -> dict:
    reqs = run["requests"]
    gen = sum(r["completion_tokens"] for r in reqs)
    short = [i for i, r in enumerate(reqs) if r["completion_tokens"] != max_tokens]
    run.update(generated_tokens=gen, prompt_tokens=sum(r["prompt_tokens"] for r in reqs),
               requests_per_s=len(reqs) / run["gen_s"], gen_tokens_per_s=gen / run["gen_s"],
               all_max_tokens=(not short and len(reqs) == n_prompts), short_requests=short,
               order_ok=all(r["prompt_ok"] for r in reqs),
               cpu_util=run["cpu_s"] / run["gen_s"],  # cores busy on average while generating
               finish_reasons=sorted({r["finish_reason"] for r in reqs}))
    return run


def fmt_rate(v: float) -> str:
    return f"{v:.2f}" if v < 100 else f"{v:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--prompts", type=int, default=64)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--flash-attn", choices=["auto", "on", "off"], default="auto",
                    help="llama-cpp-python flash_attn: auto measures both and keeps the faster")
    ap.add_argument("--max-num-seqs", type=int, default=None,
                    help="folio max_num_seqs (default: --prompts, i.e. all requests at once)")
    ap.add_argument("--no-prefix-caching", action="store_true",
                    help="folio enable_prefix_caching=False (default: folio's default, on)")
    ap.add_argument("--folio-kwarg", action="append", default=[], metavar="KEY=VALUE",
                    help="extra folio.LLM keyword (value parsed as JSON, else a string)")
    ap.add_argument("--folio-ban-tokens", default="", metavar="IDS",
                    help="comma-separated token ids folio gets logit_bias -100 on (e.g. 0,2,4, the "
                         "end-of-generation ids llama-cpp-python bans), so both sides generate "
                         "the same kind of sequence and the identical-completions line compares "
                         "like with like; default none: plain ignore_eos=True")
    ap.add_argument("--no-warmup", action="store_true")
    ap.add_argument("--only", choices=["folio", "llama"])
    ap.add_argument("--lcp-python", default=os.environ.get("LCP_PYTHON", str(DEFAULT_LCP_PYTHON)),
                    help="python of the llama-cpp-python venv (bench/llama_cpp_python.sh)")
    ap.add_argument("--folio-python", default=sys.executable)
    ap.add_argument("--timeout", type=float, default=1800, help="per worker run, seconds")
    ap.add_argument("--json", metavar="OUT")
    ap.add_argument("--worker", choices=["folio", "llama"], help=argparse.SUPPRESS)
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    a = ap.parse_args()

    if a.worker:
        spec = json.load(open(a.spec))
        res = (worker_folio if a.worker == "folio" else worker_llama)(spec)
        print(json.dumps(res))
        return

    model = a.model if os.path.isabs(a.model) else str(ROOT / a.model)
    if not os.path.isfile(model):
        raise SystemExit(f"model not found: {model}")
    if a.only != "folio" and not os.path.exists(a.lcp_python):
        log(f"{a.lcp_python} missing: building it with bench/llama_cpp_python.sh ...")
        out = subprocess.run([str(ROOT / "bench/llama_cpp_python.sh")], check=True,
                             stdout=subprocess.PIPE, text=True).stdout
        a.lcp_python = out.strip().splitlines()[-1]
    folio_kwargs = {}
    for kv in a.folio_kwarg:
        k, _, v = kv.partition("=")
        try:
            folio_kwargs[k] = json.loads(v)
        except json.JSONDecodeError:
            folio_kwargs[k] = v

    prompts = make_prompts(a.prompts)
    # Context for llama-cpp-python: the longest prompt (~4 bytes per token is generous for these
    # English prompts; llama-cpp-python raises if it is not enough) plus max_tokens, rounded up.
    longest = max(len(p.encode()) for p in prompts)
    n_ctx = -(-(longest + a.max_tokens + 64) // 256) * 256
    base = dict(model=model, threads=a.threads, prompts=prompts, max_tokens=a.max_tokens,
                warmup=not a.no_warmup)
    sides: list[tuple[str, str, dict]] = []  # (label, side, spec)
    if a.only != "llama":
        sides.append(("folio", "folio", dict(base, max_num_seqs=a.max_num_seqs or a.prompts,
                                             prefix_caching=not a.no_prefix_caching,
                                             folio_kwargs=folio_kwargs,
                                             folio_ban_tokens=[int(t) for t in
                                                               a.folio_ban_tokens.split(",") if t])))
    if a.only != "folio":
        fas = {"auto": [False, True], "on": [True], "off": [False]}[a.flash_attn]
        for fa in fas:
            sides.append((f"llama-fa{int(fa)}", "llama", dict(base, n_ctx=n_ctx, flash_attn=fa)))

    cpu = cpu_model()
    log(f"cpu {cpu}, {os.cpu_count()} cores; model {a.model}; {a.threads} threads; "
        f"{a.prompts} prompts x {a.max_tokens} tokens; {a.repeats} repeats; "
        f"runs per repeat: {', '.join(s[0] for s in sides)}")
    runs: dict[str, list[dict]] = {label: [] for label, _, _ in sides}
    busy_notes = []
    for rep in range(a.repeats):
        order = sides[rep % len(sides):] + sides[:rep % len(sides)]
        for label, side, spec in order:
            b = busy()
            if b:
                busy_notes.append(f"repeat {rep + 1} {label}: {b}")
                log(f"WARNING: {b} running; numbers will be skewed")
            py = a.folio_python if side == "folio" else a.lcp_python
            log(f"repeat {rep + 1}/{a.repeats}: {label} ...")
            r = summarize(run_worker(py, side, spec, a.timeout), a.max_tokens, a.prompts)
            r.update(label=label, repeat=rep + 1)
            runs[label].append(r)
            log(f"  {label}: load {r['load_s']:.2f} s, generate {r['gen_s']:.2f} s, "
                f"{r['requests_per_s']:.2f} req/s, {r['gen_tokens_per_s']:.1f} gen tok/s, "
                f"{r['generated_tokens']} tokens, {r['cpu_util']:.2f} cores busy"
                + ("" if r["all_max_tokens"] else
                   f", WARNING: {len(r['short_requests'])} requests != {a.max_tokens} tokens")
                + ("" if r["order_ok"] else ", WARNING: outputs not in input order"))

    med = {}
    for label, rs in runs.items():
        med[label] = {k: statistics.median(r[k] for r in rs)
                      for k in ("requests_per_s", "gen_tokens_per_s", "gen_s", "load_s",
                                "import_s", "cpu_util")}
        med[label]["all_max_tokens"] = all(r["all_max_tokens"] for r in rs)
        med[label]["generated_tokens"] = rs[0]["generated_tokens"]
        med[label]["prompt_tokens"] = rs[0]["prompt_tokens"]
        med[label]["max_shared_prefix"] = rs[0]["max_shared_prefix"]
        med[label]["finish_reasons"] = sorted({f for r in rs for f in r["finish_reasons"]})
    llama_labels = [l for l in med if l.startswith("llama")]
    best_llama = max(llama_labels, key=lambda l: med[l]["requests_per_s"]) if llama_labels else None

    # Greedy outputs should mostly agree (different kernels may diverge after a few tokens).
    same = None
    if "folio" in runs and best_llama:
        ft = [r["text"] for r in runs["folio"][0]["requests"]]
        lt = [r["text"] for r in runs[best_llama][0]["requests"]]
        same = sum(x == y for x, y in zip(ft, lt))

    # Report.
    lines = []
    lines.append(f"CPU: {cpu} ({os.cpu_count()} cores); threads: {a.threads}; model: {a.model}")
    lines.append(f"{a.prompts} prompts x {a.max_tokens} generated tokens (EOS ignored), greedy; "
                 f"medians of {a.repeats} runs, each in a fresh process")
    if "folio" in runs:
        f0 = runs["folio"][0]
        lines.append(f"folio {f0['version']}: LLM({', '.join(f'{k}={v!r}' for k, v in f0['kwargs'].items() if k != 'model')})"
                     f"; SamplingParams(temperature=0, max_tokens={a.max_tokens}, ignore_eos=True"
                     + (f", logit_bias -100 on {f0['banned_tokens']}" if f0.get("banned_tokens") else "")
                     + f"); prefix caching {'off' if a.no_prefix_caching else 'on (default)'}"
                     f"; one generate() call, continuous batching")
    if best_llama:
        l0 = runs[best_llama][0]
        fa_note = ", ".join(f"flash_attn={'on' if l.endswith('1') else 'off'}: "
                            f"{med[l]['requests_per_s']:.2f} req/s" for l in llama_labels)
        lines.append(f"llama-cpp-python {l0['version']}: Llama(n_threads={a.threads}, "
                     f"n_threads_batch={a.threads}, n_ctx={n_ctx}, n_batch=512, "
                     f"flash_attn={'True' if best_llama.endswith('1') else 'False'}); "
                     f"llm(prompt, max_tokens={a.max_tokens}, temperature=0, repeat_penalty=1.0, "
                     f"logits_processor=<end-of-generation ids {l0['call']['eog_banned']} to -inf>) "
                     f"looped, one request at a time"
                     + (f"; flash attention measured: {fa_note} -> "
                        f"{'on' if best_llama.endswith('1') else 'off'} is faster"
                        if len(llama_labels) > 1 else ""))
    lines.append("")
    lines.append("| engine | requests/s | generated tok/s | generate wall s | load s "
                 "| cores busy | tokens/request = max_tokens | max shared prefix (tok) |")
    lines.append("|---|---:|---:|---:|---:|---:|---|---:|")
    show = (["folio"] if "folio" in med else []) + llama_labels
    for label in show:
        m = med[label]
        name = "folio" if label == "folio" else (
            f"llama-cpp-python (flash_attn {'on' if label.endswith('1') else 'off'})"
            + (" *" if label == best_llama and len(llama_labels) > 1 else ""))
        lines.append(f"| {name} | {fmt_rate(m['requests_per_s'])} | "
                     f"{fmt_rate(m['gen_tokens_per_s'])} | {m['gen_s']:.2f} | {m['load_s']:.2f} | "
                     f"{m['cpu_util']:.2f} | "
                     f"{'yes' if m['all_max_tokens'] else 'NO'} ({m['generated_tokens']} tokens, "
                     f"finish {'/'.join(m['finish_reasons'])}) | {m['max_shared_prefix']} |")
    ratio = None
    if "folio" in med and best_llama:
        ratio = med["folio"]["requests_per_s"] / med[best_llama]["requests_per_s"]
        lines.append(f"| **ratio folio / llama-cpp-python** | **{ratio:.2f}x** | "
                     f"**{med['folio']['gen_tokens_per_s'] / med[best_llama]['gen_tokens_per_s']:.2f}x** "
                     f"| | | | | |")
    lines.append("")
    for label in show:
        lines.append(f"{label} per run (req/s): "
                     + ", ".join(f"{r['requests_per_s']:.2f}" for r in runs[label]))
    if len(llama_labels) > 1:
        lines.append("\\* the faster llama-cpp-python setting, used for the ratio.")
    if same is not None:
        like = bool(runs["folio"][0].get("banned_tokens"))
        lines.append(f"Identical greedy completions folio vs llama-cpp-python: {same}/{a.prompts} "
                     + ("(informational: both ban end-of-generation tokens; different kernels "
                        "diverge on near-ties of this small quantized model)" if like else
                        "(not like with like: folio's ignore_eos keeps generating through EOS, "
                        "llama-cpp-python's ban picks another token; --folio-ban-tokens aligns them)"))
    if busy_notes:
        lines.append("WARNING: compiles were running during: " + "; ".join(busy_notes))
    print("\n".join(lines))

    if a.json:
        out = dict(cpu=cpu, cores=os.cpu_count(), threads=a.threads, model=a.model,
                   prompts=prompts, max_tokens=a.max_tokens, repeats=a.repeats, n_ctx=n_ctx,
                   prefix_caching=not a.no_prefix_caching, medians=med, best_llama=best_llama,
                   ratio_requests_per_s=ratio, identical_completions=same, busy=busy_notes,
                   runs=runs, date=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
        log(f"raw numbers in {a.json}")


if __name__ == "__main__":
    main()
