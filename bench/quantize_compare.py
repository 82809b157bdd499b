#!/usr/bin/env python3
"""bench/quantize_compare.py: the helpers bench/quantize.sh calls (gguf-py's GGUFReader).

  tensors A.gguf B.gguf         tensor by tensor: same name, type, shape and bytes? Prints
                                "identical N/M" and each differing tensor (type, max |byte diff|
                                count); exit 0 either way.
  imatrix A.gguf B.gguf         two importance matrices (llama.cpp's imatrix GGUF): per entry the
                                relative difference of the mean squares (in_sum2 / counts);
                                prints entries, median and worst of the per-entry medians.
  table DIR TYPES METHODS       the quality table of one model from DIR/runs.tsv and
                                DIR/<method>.<type>.ppl.json (folio perplexity --json
                                --kl-divergence), markdown.
  bench DIR                     the speed table from DIR/bench/*.json (folio bench --json and
                                llama-bench -o json, each possibly repeated), medians, ratios.
"""
import glob
import json
import os
import statistics
import sys

import numpy as np


def reader(path):
    from gguf import GGUFReader

    return GGUFReader(path)


def field_values(r):
    out = {}
    for k, f in r.fields.items():
        if k.startswith("GGUF."):
            continue
        try:
            v = f.contents()
        except Exception:  # noqa: BLE001 (an odd field: compare its raw bytes)
            v = [bytes(np.asarray(p).view(np.uint8)) for p in f.parts]
        out[k] = v
    return out


def short(v):
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def cmd_tensors(a, b):
    ra, rb = reader(a), reader(b)
    fa, fb = field_values(ra), field_values(rb)
    kdiff = [k for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)]
    ta = {t.name: t for t in ra.tensors}
    tb = {t.name: t for t in rb.tensors}
    names = sorted(set(ta) | set(tb))
    same, diff = 0, []
    for n in names:
        x, y = ta.get(n), tb.get(n)
        if x is None or y is None:
            diff.append(f"{n}: only in {'B' if x is None else 'A'}")
            continue
        if x.tensor_type != y.tensor_type or list(x.shape) != list(y.shape):
            diff.append(f"{n}: {x.tensor_type.name}{list(x.shape)} vs {y.tensor_type.name}{list(y.shape)}")
            continue
        bx = np.asarray(x.data).view(np.uint8).reshape(-1)
        by = np.asarray(y.data).view(np.uint8).reshape(-1)
        if bx.size == by.size and np.array_equal(bx, by):
            same += 1
        else:
            nd = int(np.count_nonzero(bx != by)) if bx.size == by.size else -1
            diff.append(f"{n}: {x.tensor_type.name}, {nd} of {bx.size} bytes differ")
    print(f"identical {same}/{len(names)} tensors" + ("" if diff else " (every tensor byte-identical)")
          + f"; metadata: {len(fa) - len([k for k in kdiff if k in fa])}/{len(fa)} keys equal"
          + ("" if list(fa) == list(fb) else ", in a different order"))
    for k in kdiff:
        print(f"  key {k}: {short(fa.get(k))} vs {short(fb.get(k))}")
    for d in diff[:12]:
        print("  differs:", d)
    if len(diff) > 12:
        print(f"  ... and {len(diff) - 12} more")


def imatrix_entries(path):
    r = reader(path)
    t = {x.name: np.asarray(x.data, dtype=np.float64) for x in r.tensors}
    out = {}
    for n in t:
        if n.endswith(".in_sum2"):
            base = n[: -len(".in_sum2")]
            cnt = t.get(base + ".counts")
            c = float(np.asarray(cnt).reshape(-1)[0]) if cnt is not None else 1.0
            out[base] = t[n].reshape(-1) / max(c, 1.0)
    return out


def cmd_imatrix(a, b):
    ea, eb = imatrix_entries(a), imatrix_entries(b)
    common = sorted(set(ea) & set(eb))
    meds = []
    for n in common:
        x, y = ea[n], eb[n]
        if x.shape != y.shape:
            print(f"  {n}: shapes differ {x.shape} vs {y.shape}")
            continue
        rel = np.abs(x - y) / np.maximum(np.maximum(np.abs(x), np.abs(y)), 1e-30)
        meds.append(float(np.median(rel)))
    only = len(set(ea) ^ set(eb))
    if not meds:
        print(f"no common entries ({len(ea)} vs {len(eb)})")
        return
    print(f"{len(common)} common entries ({only} in one file only); per-entry median relative"
          f" difference of the mean squares: median {statistics.median(meds):.2e},"
          f" worst {max(meds):.2e}")


def load_runs(d):
    runs = {}
    path = os.path.join(d, "runs.tsv")
    if os.path.exists(path):
        for line in open(path):
            f = line.rstrip("\n").split("\t")
            if len(f) >= 4:
                runs[(f[0], f[1])] = (int(f[2]), float(f[3]))
    return runs


def cmd_table(d, types, methods):
    runs = load_runs(d)
    base = None
    rows = []
    for t in types.split():
        for m in methods.split():
            if (m, t) not in runs:
                continue
            size, secs = runs[(m, t)]
            p = os.path.join(d, f"{m}.{t}.ppl.json")
            j = json.load(open(p)) if os.path.exists(p) else None
            k = (j or {}).get("kl_divergence", {})
            if k and base is None:
                base = k["ppl_base"]["value"]
            rows.append((m, t, size, secs, k))
    bsize = os.path.getsize(os.path.join(d, "base-f32.gguf")) if os.path.exists(
        os.path.join(d, "base-f32.gguf")) else 0
    print(f"| method | type | size MiB | quant time s | PPL | ΔPPL % vs base | mean KLD | 99 % KLD | same top % |")
    print("|---|---|---|---|---|---|---|---|---|")
    if base is not None:
        print(f"| base (F32) | F32 | {bsize / 2**20:.1f} | | {base:.4f} | | | | |")
    for m, t, size, secs, k in rows:
        if k:
            ppl = k["ppl"]["value"]
            print(f"| {m} | {t} | {size / 2**20:.2f} | {secs:.1f} | {ppl:.4f} | {100 * (ppl / base - 1):+.2f} |"
                  f" {k['kld']['value']:.5f} ± {k['kld']['uncertainty']:.5f} |"
                  f" {k['kld_quantiles']['p99']:.4f} |"
                  f" {100 * k['same_top']['value']:.2f} ± {100 * k['same_top']['uncertainty']:.2f} |")
        else:
            print(f"| {m} | {t} | {size / 2**20:.2f} | {secs:.1f} | (no run) | | | | |")


def cmd_bench(d):
    # samples[(file label, engine, test)] -> list of tokens/s
    samples = {}
    for p in sorted(glob.glob(os.path.join(d, "bench", "*.json"))):
        label, engine = os.path.basename(p).split(".")[0:2]
        try:
            j = json.load(open(p))
        except json.JSONDecodeError:
            continue
        if engine == "folio":
            for r in j.get("results", []):
                samples.setdefault((label, engine, r["test"]), []).extend(r["samples"])
        else:
            for r in j:
                test = f"pp{r['n_prompt']}" if r["n_prompt"] else f"tg{r['n_gen']}"
                samples.setdefault((label, engine, test), []).extend(r.get("samples_ts") or [r["avg_ts"]])
    labels = sorted({k[0] for k in samples})
    tests = sorted({k[2] for k in samples})
    print("| file | test | folio t/s (median) | llama.cpp t/s (median) | folio / llama.cpp | samples |")
    print("|---|---|---|---|---|---|")
    for lab in labels:
        for t in tests:
            f = samples.get((lab, "folio", t), [])
            l = samples.get((lab, "llama", t), [])
            if not f and not l:
                continue
            mf = statistics.median(f) if f else float("nan")
            ml = statistics.median(l) if l else float("nan")
            ratio = f"**{mf / ml:.2f}x**" if f and l else ""
            print(f"| {lab} | {t} | {mf:.1f} | {ml:.1f} | {ratio} | {len(f)} / {len(l)} |")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    cmd, args = sys.argv[1], sys.argv[2:]
    {"tensors": cmd_tensors, "imatrix": cmd_imatrix, "table": cmd_table, "bench": cmd_bench}[cmd](*args)


if __name__ == "__main__":
    main()
