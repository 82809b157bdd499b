#!/usr/bin/env python3
"""bench/roofline.py -- speed-of-light token rates for a GGUF model on this machine.

Owns the arithmetic that turns the probe numbers (bench/membw.cpp --json) and a model's
tensor census into the two ceilings every folio benchmark is compared against:

  decode  (tg): each generated token streams every weight matrix once (the tied / output
          embedding included, the input embedding lookup only touches one row), so
          tokens/s <= read bandwidth / bytes of weights read per token.
  prefill (pp): ~2 FLOPs per weight per token for every matrix that multiplies all prompt
          tokens, plus causal attention (QK^T and PV: 4 * n_head * head_dim * avg_ctx per
          layer); the output head runs only for the last prompt token in llama-bench.
          tokens/s <= peak ops/s / ops per token. Quantized matmuls run as int8 dot products
          in llama.cpp (activations quantized to Q8), so the int8 peak is the relevant one;
          the fp32 FMA ceiling is printed too.

Run: .venv/bin/python bench/roofline.py MODEL.gguf [--membw build/bench-probes/membw.json]
     [--threads 2] [--prompt 512]
"""
import argparse
import json
import sys

from gguf import GGUFReader


def field(reader, key, default=None):
    f = reader.fields.get(key)
    if f is None or not f.data:
        return default
    return f.parts[f.data[0]][0]


def census(path):
    r = GGUFReader(path)
    arch = bytes(r.fields["general.architecture"].parts[-1]).decode()
    total_bytes = 0
    matmul_params = 0  # weights of matrices applied to every prompt token
    embd_bytes = embd_params = embd_rows = 0
    has_output = False
    for t in r.tensors:
        total_bytes += int(t.n_bytes)
        if t.name == "output.weight":
            has_output = True
        if t.name == "token_embd.weight":
            embd_bytes, embd_params = int(t.n_bytes), int(t.n_elements)
            embd_rows = int(t.shape[-1])  # GGUF shapes are innermost-first: [n_embd, n_vocab]
        elif len(t.shape) >= 2 and t.name != "output.weight":
            matmul_params += int(t.n_elements)
    # Input embedding: one row per token. A separate output.weight or, when tied, token_embd
    # itself is read in full per generated token.
    row_bytes = embd_bytes // max(embd_rows, 1)
    decode_bytes = total_bytes - (embd_bytes - row_bytes if has_output else 0)
    return {
        "arch": arch,
        "total_bytes": total_bytes,
        "decode_bytes": decode_bytes,
        "matmul_params": matmul_params,
        "all_params": sum(int(t.n_elements) for t in r.tensors),
        "n_layer": int(field(r, f"{arch}.block_count")),
        "n_head": int(field(r, f"{arch}.attention.head_count")),
        "n_embd": int(field(r, f"{arch}.embedding_length")),
        "embd_params": embd_params,
        "head_dim": int(field(r, f"{arch}.attention.key_length", 0)),
    }


def probe(path, threads):
    with open(path) as f:
        results = json.load(f)["results"]
    pick = {}
    for r in results:
        if r["threads"] == threads:
            pick[r["name"]] = r["median"]
    return pick


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--membw", default="build/bench-probes/membw.json")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompt", type=int, default=512)
    a = ap.parse_args()

    c = census(a.model)
    p = probe(a.membw, a.threads)
    bw = p.get("read (sum, DRAM)")
    fma = p.get("fp32 FMA peak (AVX2)")
    i8 = p.get("int8 dot peak (maddubs)")
    if bw is None or fma is None or i8 is None:
        sys.exit(f"roofline: {a.membw} lacks {a.threads}-thread results; run membw --json")

    head_dim = c["head_dim"] or c["n_embd"] // c["n_head"]
    # Upper estimate: sliding-window layers (gemma3) attend to fewer keys than avg_ctx.
    attn_ops = 4 * c["n_head"] * head_dim * (a.prompt / 2) * c["n_layer"]
    pp_ops = 2 * c["matmul_params"] + attn_ops
    print(f"model            {a.model} ({c['arch']})")
    print(f"params           {c['all_params'] / 1e6:.1f} M (matmul, excl. embedding/head: "
          f"{c['matmul_params'] / 1e6:.1f} M)")
    print(f"weight bytes     {c['total_bytes'] / 1e6:.2f} MB; read per decoded token "
          f"{c['decode_bytes'] / 1e6:.2f} MB")
    print(f"probe ({a.threads} thr)    read {bw:.1f} GB/s, fp32 FMA {fma:.1f} GFLOP/s, "
          f"int8 dot {i8:.1f} GOP/s")
    print(f"tg ceiling       {bw * 1e9 / c['decode_bytes']:.0f} tokens/s (bandwidth bound)")
    print(f"pp{a.prompt} ops/token {pp_ops / 1e6:.0f} M (matmul {2 * c['matmul_params'] / 1e6:.0f} M "
          f"+ attention {attn_ops / 1e6:.0f} M)")
    print(f"pp ceiling       {i8 * 1e9 / pp_ops:.0f} tokens/s at the int8 peak, "
          f"{fma * 1e9 / pp_ops:.0f} tokens/s at the fp32 FMA peak")


if __name__ == "__main__":
    main()
