#!/usr/bin/env python3
"""Tokenizer throughput: folio vs Hugging Face `tokenizers`, single-threaded, same corpus, same run.

Run:  .venv/bin/python bench/tokenizer_bench.py [--folio build/release/folio] [--mb 1.0]

Corpus: ~1 MB of mixed text built deterministically by tools/gen_tokenizer_goldens.py's corpus
generator (English, Chinese and other scripts, code, emoji, whitespace runs, numbers, special-token
text). Model: SmolLM2's vocabulary (byte-level BPE, 'smollm' pre-tokenizer); the HF tokenizer is
built from the same GGUF (checked against upstream vectors by that script).

Two workloads, each the median of 5 runs:
  whole     the corpus encoded as one string
  per-line  every line encoded on its own (HF: encode_batch on one thread)
folio's time is the encode time it reports with --timing (process start-up and model load are
excluded and reported separately); HF runs with RAYON_NUM_THREADS=1, TOKENIZERS_PARALLELISM=false.
"""
import os

os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def gen_module():
    spec = importlib.util.spec_from_file_location(
        "gen_tokenizer_goldens", os.path.join(ROOT, "tools", "gen_tokenizer_goldens.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def build_corpus(gen, megabytes):
    specials = ["<|im_start|>", "<|im_end|>", "<|endoftext|>"]
    lines, size, seed = [], 0, 0
    while size < megabytes * 1e6:
        for case in gen.corpus(specials, seed, 2000):
            line = case.replace("\n", " ")
            lines.append(line)
            size += len(line.encode()) + 1
        seed += 1
    return "\n".join(lines) + "\n"


def run_folio(binary, model, text, per_line):
    # --parse-special: HF extracts added tokens such as <|im_start|> by default.
    args = [binary, "tokenize", "-m", model, "--timing", "--parse-special"] + (["--per-line"] if per_line else [])
    r = subprocess.run(args, input=text.encode(), capture_output=True, check=True)
    m = re.search(r"load_s=([\d.]+) encode_s=([\d.]+) bytes=(\d+) tokens=(\d+)", r.stderr.decode())
    return float(m.group(2)), int(m.group(4)), float(m.group(1)), r.stdout.decode()


def median_time(fn, runs=5):
    times, result = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def report(name, seconds, tokens, nbytes):
    print(f"  {name:<22} {seconds * 1e3:9.1f} ms  {tokens / seconds / 1e6:6.2f} M tokens/s  "
          f"{nbytes / 1e6 / seconds:6.2f} MB/s")


def main():
    ap = argparse.ArgumentParser(description="folio vs HF tokenizers throughput")
    ap.add_argument("--folio", default=os.path.join(ROOT, "build", "release", "folio"))
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--mb", type=float, default=1.0)
    args = ap.parse_args()

    gen = gen_module()
    text = build_corpus(gen, args.mb)
    nbytes = len(text.encode())
    lines = text.split("\n")[:-1]
    print(f"corpus: {nbytes / 1e6:.2f} MB, {len(lines)} lines; model {os.path.basename(args.model)}")
    hf = gen.build_byte_level_bpe(args.model, digits_individual=True)

    for per_line in (False, True):
        label = "per-line" if per_line else "whole"
        runs = [run_folio(args.folio, args.model, text, per_line) for _ in range(5)]
        f_s = statistics.median(r[0] for r in runs)
        f_tokens, load_s, f_out = runs[0][1], statistics.median(r[2] for r in runs), runs[0][3]
        if per_line:
            h_s, enc = median_time(lambda: hf.encode_batch(lines, add_special_tokens=False))
            h_ids = [e.ids for e in enc]
            f_ids = [[int(x) for x in ln.split()] for ln in f_out.split("\n")[:-1]]
        else:
            h_s, enc = median_time(lambda: hf.encode(text, add_special_tokens=False))
            h_ids, f_ids = enc.ids, [int(x) for x in f_out.split()]
        h_tokens = sum(len(x) for x in h_ids) if per_line else len(h_ids)
        print(f"{label}: same ids as HF: {f_ids == h_ids}")
        report("folio", f_s, f_tokens, nbytes)
        report("HF tokenizers (1 thr)", h_s, h_tokens, nbytes)
        print(f"  folio / HF speed ratio: {h_s / f_s:.2f}x   (folio model load {load_s * 1e3:.0f} ms)")


if __name__ == "__main__":
    main()
