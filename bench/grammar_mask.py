#!/usr/bin/env python3
"""Constrained-decoding mask cost per token: folio vs xgrammar, same grammar, same tokens.

Run:  bench/grammar.sh [-r 5] [--models smollm2,gemma3] [--cases schema,object,regex]
      (or .venv/bin/python bench/grammar_mask.py --folio build/release/folio ...)

Cases (inputs under bench/data/grammar/): a realistic JSON schema with a matching
document, any JSON object with a document, a regex with a matching log line; on
SmolLM2 (byte-level BPE, 49152 tokens) and Gemma 3 (SentencePiece + byte fallback,
262144 tokens).

Both engines get the same GBNF text (folio's `grammar --print-gbnf`), the same token
bytes (folio's `grammar --vocab`, as tests/python/test_grammar_xgrammar.py builds
xgrammar's vocabulary) and the same token sequence (folio's tokenization of the
document), and fill the next-token mask before every token plus once after the last.

  folio     `folio bench grammar --json`: compile (constraint -> GBNF -> grammar; the
            mask cache is filled lazily), the first walk ("cold": includes filling
            the mask cache at every position first met), then -r warm walks (cache
            filled): median / mean / p99 mask time per token over all warm steps.
  xgrammar  compile_grammar (single-threaded, max_threads=1: its adaptive token-mask
            cache is built here, ahead of time), then -r + 1 walks: each step times
            fill_next_token_bitmask and accept_token with time.perf_counter_ns; the
            first walk is reported apart ("first walk"), the others give median /
            mean / p99 per walk, and the table shows the median over walks.
            Python-call overhead (~1 us) is in xgrammar's numbers.

ratio = folio / xgrammar warm per-token mask time (below 1: folio is faster).
xn.* = xgrammar with its OWN grammar for the constraint (builtin_json_grammar,
from_json_schema, from_regex) on the same tokens: not the same language (its
whitespace and string rules differ), shown because xgrammar is much slower on
folio's GBNF text than on its own JSON grammar ("refused": its grammar does not
admit the document).
"Cold" (folio) and "compile" (xgrammar) are where each engine pays for its cache.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "bench", "data", "grammar")
MODELS = {
    "smollm2": os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf"),
    "gemma3": os.path.join(ROOT, "models", "gemma-3-270m-q4_k_m.gguf"),
}
LOG_REGEX = (r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} (DEBUG|INFO|WARN|ERROR) "
             r"\[[a-z]+-[0-9]+\] [a-z0-9 ]+ [0-9]+ ms")
CASES = {  # name: (constraint arguments, document)
    "schema": (["--json-schema", os.path.join(DATA, "person.schema.json")], "person.json"),
    "object": (["--json-object"], "object.json"),
    "regex": (["--regex", LOG_REGEX], "log_line.txt"),
}


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def run(folio, *args, stdin=None):
    r = subprocess.run([folio, *args], input=stdin, capture_output=True, timeout=600)
    if r.returncode != 0:
        sys.exit(f"folio {' '.join(args)}: {r.stderr.decode()}")
    return r.stdout


def vocab_of(folio, model):
    tokens = []
    for line in run(folio, "grammar", "-m", model, "--vocab").decode().splitlines():
        tokens.append(bytes.fromhex(json.loads(line)["hex"]))
    eos = json.loads(run(folio, "info", "--json", "-m", model))["tokenizer"]["special"]["eos"]
    return tokens, eos


def pct(sorted_v, q):
    return sorted_v[min(len(sorted_v) - 1, len(sorted_v) * q // 100)]


def native_grammar(xgr, cname, cargs):
    """xgrammar's own grammar for the same constraint (not the same text)."""
    if cname == "object":
        return xgr.Grammar.builtin_json_grammar()
    if cargs[0] == "--json-schema":
        with open(cargs[1]) as f:
            return xgr.Grammar.from_json_schema(f.read())
    return xgr.Grammar.from_regex(cargs[1])


def xgrammar_walks(xgr, info, grammar, ids, reps):
    t0 = time.perf_counter()
    compiled = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False).compile_grammar(grammar)
    compile_s = time.perf_counter() - t0
    bitmask = xgr.allocate_token_bitmask(1, info.vocab_size)
    walks = []
    for _ in range(reps + 1):
        m = xgr.GrammarMatcher(compiled)
        mask_ns, accept_ns = [], []
        for i in range(len(ids) + 1):
            t0 = time.perf_counter_ns()
            m.fill_next_token_bitmask(bitmask)
            t1 = time.perf_counter_ns()
            mask_ns.append(t1 - t0)
            if i == len(ids):
                break
            ok = m.accept_token(ids[i])
            accept_ns.append(time.perf_counter_ns() - t1)
            if not ok:
                return None  # only xgrammar's native grammar may refuse
        walks.append((mask_ns, accept_ns))
    first = walks[0]
    per = []
    for mask_ns, accept_ns in walks[1:]:
        s = sorted(mask_ns)
        per.append((statistics.median(s) / 1e3, statistics.fmean(s) / 1e3, pct(s, 99) / 1e3,
                    statistics.median(accept_ns) / 1e3))
    med = [statistics.median(col) for col in zip(*per)]
    return {"compile_s": compile_s, "first_total_s": sum(first[0]) / 1e9,
            "median_us": med[0], "mean_us": med[1], "p99_us": med[2], "accept_us": med[3]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--folio", default=os.environ.get(
        "FOLIO_BIN", os.path.join(ROOT, "build", "release", "folio")))
    ap.add_argument("-r", "--repetitions", type=int, default=5)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--json", action="store_true", help="print the rows as JSON lines too")
    a = ap.parse_args()
    import xgrammar as xgr

    rows = []
    for mname in a.models.split(","):
        model = MODELS[mname]
        tokens, eos = vocab_of(a.folio, model)
        info = xgr.TokenizerInfo(encoded_vocab=tokens, vocab_type=xgr.VocabType.RAW,
                                 stop_token_ids=[eos])
        for cname in a.cases.split(","):
            cargs, doc = CASES[cname]
            doc = os.path.join(DATA, doc)
            gbnf = run(a.folio, "grammar", *cargs, "--print-gbnf").decode()
            with open(doc, "rb") as f:
                ids = [int(t) for t in run(a.folio, "tokenize", "-m", model, stdin=f.read()).split()]
            fo = json.loads(run(a.folio, "bench", "grammar", "-m", model, *cargs, "--text", doc,
                                "-r", str(a.repetitions), "--json"))
            if fo["tokens"] != len(ids):
                sys.exit(f"{cname}: folio bench walked {fo['tokens']} tokens, tokenize gave {len(ids)}")
            xg = xgrammar_walks(xgr, info, xgr.Grammar.from_ebnf(gbnf, root_rule_name="root"),
                                ids, a.repetitions)
            if xg is None:
                sys.exit(f"{mname}/{cname}: xgrammar refuses the document under folio's GBNF")
            nat = xgrammar_walks(xgr, info, native_grammar(xgr, cname, cargs), ids, a.repetitions)
            rows.append({"model": mname, "case": cname, "tokens": len(ids), "folio": fo,
                         "xgrammar": xg, "xgrammar_native": nat})
            print(f"# {mname}/{cname} done", file=sys.stderr)

    print(f"CPU: {cpu_model()}; one thread each; -r {a.repetitions}; times per mask (token) in us")
    print("folio cold = first walk in all, mask cache filling (ms); xgrammar builds its cache in compile")
    hdr = ("model", "case", "tok", "f.compile", "f.cold", "f.med", "f.mean", "f.p99",
           "x.compile", "x.first", "x.med", "x.mean", "x.p99", "x.accept", "ratio.med", "ratio.mean", "xn.med", "xn.mean")
    units = ("", "", "", "ms", "ms", "us", "us", "us", "ms", "ms", "us", "us", "us", "us", "f/x", "f/x",
             "us", "us")
    fmt = "{:<8} {:<7} {:>4} " + " ".join(["{:>9}"] * 15)
    print(fmt.format(*hdr))
    print(fmt.format(*units))
    for r in rows:
        f, x, n = r["folio"], r["xgrammar"], r["xgrammar_native"]
        print(fmt.format(
            r["model"], r["case"], r["tokens"],
            f"{f['compile_s'] * 1e3:.2f}", f"{f['cold_total_s'] * 1e3:.1f}",
            f"{f['warm_median_us']:.2f}", f"{f['warm_mean_us']:.2f}", f"{f['warm_p99_us']:.1f}",
            f"{x['compile_s'] * 1e3:.1f}", f"{x['first_total_s'] * 1e3:.1f}",
            f"{x['median_us']:.2f}", f"{x['mean_us']:.2f}", f"{x['p99_us']:.1f}", f"{x['accept_us']:.2f}",
            f"{f['warm_median_us'] / x['median_us']:.3f}", f"{f['warm_mean_us'] / x['mean_us']:.3f}",
            f"{n['median_us']:.2f}" if n else "refused", f"{n['mean_us']:.2f}" if n else "-"))
        if a.json:
            print(json.dumps(r), file=sys.stderr)


if __name__ == "__main__":
    main()
