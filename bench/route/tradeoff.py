#!/usr/bin/env python3
"""Accuracy vs share-of-requests-to-the-large-model, from evaluate.py results (Markdown).

Reads result rows (evaluate.py --out) holding a run of the small model (--small NAME: its
requested_model), a run of the large model (--large NAME) and optionally router runs (any other
requested_model, e.g. "auto", or those named by --routers), and prints one table over the
prompts all runs share:

  small only / large only   the two single-model endpoints (share 0 and 1)
  random p                  a router sending a random share p to the large model: expected
                            accuracy mean_i((1-p)*small_i + p*large_i), p = 0, 0.1, ..., 1
  oracle                    per prompt the better of the two answers (small on ties): the
                            ceiling any router can reach with these two models
  R score >= t (q)          "oracle-by-score": router R's per-prompt x-folio-route-score
                            (higher = send to large), thresholded so its top q = 0, 0.1, ..., 1
                            of scores go large; each prompt takes the small or large run's
                            graded answer
  R measured                router run R's own answers: its share of requests answered by
                            the large model (route header, else response model) and accuracy
  R replayed                R's routing decisions applied to the single-model answers (the
                            same as measured when decoding is deterministic)
Rows marked "scores_only" (train_head.py --oof-out: a learned head's scores, no run of their
own) give only the score sweep.

"vs random" is the accuracy minus the random router's at the same share; "beats random" marks
a positive difference. A second table splits the endpoints and the oracle by kind.

  python3 bench/route/tradeoff.py bench/.work/route/*.jsonl --small smollm2-135m \\
      --large gemma3-270m [--routers auto] [--alias concrete-name=run-name]
"""
import argparse
import collections
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grade import load_jsonl  # noqa: E402


def per_prompt(rows, model):
    """{id: mean correctness} of the rows of one requested model (repeats are averaged)."""
    acc = collections.defaultdict(list)
    for r in rows:
        if r["requested_model"] == model:
            acc[r["id"]].append(1.0 if r["correct"] else 0.0)
    return {k: sum(v) / len(v) for k, v in acc.items()}


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


def quantile(sorted_xs, q):
    """Nearest-rank quantile of a sorted list (q in [0, 1])."""
    return sorted_xs[min(len(sorted_xs) - 1, max(0, math.ceil(q * len(sorted_xs)) - 1))]


def analyze(rows, small, large, routers=None, aliases=None, steps=10):
    """The table rows: dicts with policy, share, acc (and router extras)."""
    aliases = aliases or {}
    S, L = per_prompt(rows, small), per_prompt(rows, large)
    if not S or not L:
        raise SystemExit(f"need rows of both --small {small!r} ({len(S)} found) and "
                         f"--large {large!r} ({len(L)} found)")
    if routers is None:
        routers = list(dict.fromkeys(r["requested_model"] for r in rows
                                     if r["requested_model"] not in (small, large)))
    ids = set(S) & set(L)
    by_router = {m: [r for r in rows if r["requested_model"] == m] for m in routers}
    for m, rs in by_router.items():
        if rs:
            ids &= {r["id"] for r in rs}
    ids = sorted(ids)
    acc_s, acc_l = mean(S[i] for i in ids), mean(L[i] for i in ids)

    def random_at(p):
        return (1 - p) * acc_s + p * acc_l

    out = [{"policy": f"small only ({small})", "share": 0.0, "acc": acc_s},
           {"policy": f"large only ({large})", "share": 1.0, "acc": acc_l}]
    for k in range(1, steps):
        p = k / steps
        out.append({"policy": f"random p={p:.1f}", "share": p,
                    "acc": mean((1 - p) * S[i] + p * L[i] for i in ids)})
    out.append({"policy": "oracle (better answer per prompt)",
                "share": mean(1.0 if L[i] > S[i] else 0.0 for i in ids),
                "acc": mean(max(S[i], L[i]) for i in ids)})

    for m, rs in by_router.items():
        rs = [r for r in rs if r["id"] in set(ids)]
        if not rs:
            continue
        scores = collections.defaultdict(list)
        for r in rs:
            if isinstance(r.get("route_score"), (int, float)):
                scores[r["id"]].append(float(r["route_score"]))
        if len(scores) == len(ids):
            score = {i: mean(scores[i]) for i in ids}
            ordered = sorted(score.values())
            seen = set()
            for k in range(steps + 1):  # send the top q = k/steps of scores to large
                q = k / steps
                t = math.inf if k == 0 else quantile(ordered, 1 - q)
                go = {i: score[i] >= t for i in ids}
                share = mean(1.0 if go[i] else 0.0 for i in ids)
                if share in seen:
                    continue
                seen.add(share)
                label = "score > max" if t == math.inf else f"score >= {t:.4g}"
                out.append({"policy": f"{m} {label} (top {q:.0%})", "share": share,
                            "acc": mean(L[i] if go[i] else S[i] for i in ids)})
        if all(r.get("scores_only") for r in rs):
            continue  # offline scores (train_head.py --oof-out): no answers of their own
        # The router's own run: which concrete model answered, and how well.
        concrete = {}
        for r in rs:
            name = r.get("route_model") or r.get("model") or ""
            concrete[r["id"]] = aliases.get(name, name)
        share = mean(1.0 if r_name == large else 0.0 for r_name in concrete.values())
        reasons = collections.Counter(r.get("route_reason") or "-" for r in rs)
        out.append({"policy": f"**{m} measured**", "share": share,
                    "acc": mean(1.0 if r["correct"] else 0.0 for r in rs), "router": True,
                    "note": ", ".join(f"{k}: {v}" for k, v in reasons.most_common(4))})
        out.append({"policy": f"{m} replayed on single-model answers",
                    "share": mean(1.0 if concrete[i] == large else 0.0 for i in ids),
                    "acc": mean(L[i] if concrete[i] == large else S[i] for i in ids),
                    "router": True})
    for row in out:
        row["random"] = random_at(row["share"])
        delta = row["acc"] - row["random"]
        row["delta"] = 0.0 if abs(delta) < 1e-9 else delta
    return {"n": len(ids), "ids": ids, "S": S, "L": L, "rows": out}


def by_kind(rows, ids, S, L):
    kind = {r["id"]: r["kind"] for r in rows}
    groups = collections.defaultdict(list)
    for i in ids:
        groups[kind[i]].append(i)
    out = []
    for k, g in groups.items():
        out.append((k, len(g), mean(S[i] for i in g), mean(L[i] for i in g),
                    mean(max(S[i], L[i]) for i in g),
                    sum(1 for i in g if L[i] > S[i]), sum(1 for i in g if S[i] > L[i])))
    return out


def render(result, rows, small, large, out=sys.stdout):
    w = out.write
    w(f"{result['n']} prompts; small = {small}, large = {large}\n\n")
    w("| policy | share large | accuracy | random at that share | vs random | beats random |\n")
    w("|---|---:|---:|---:|---:|:---:|\n")
    for r in result["rows"]:
        beats = ""
        if r.get("router") or " score " in r["policy"] or r["policy"].startswith("oracle"):
            beats = "yes" if r["delta"] > 1e-9 else "no"
        note = f" ({r['note']})" if r.get("note") else ""
        w(f"| {r['policy']}{note} | {r['share']:.0%} | {r['acc']:.1%} | {r['random']:.1%} | "
          f"{r['delta']:+.1%} | {beats} |\n")
    w("\n| kind | prompts | small | large | oracle | only large right | only small right |\n")
    w("|---|---:|---:|---:|---:|---:|---:|\n")
    for k, n, s, lg, o, lw, sw in by_kind(rows, result["ids"], result["S"], result["L"]):
        w(f"| {k} | {n} | {s:.0%} | {lg:.0%} | {o:.0%} | {lw} | {sw} |\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="+", help="evaluate.py results JSONL files")
    ap.add_argument("--small", required=True, help="requested_model of the small model's run")
    ap.add_argument("--large", required=True, help="requested_model of the large model's run")
    ap.add_argument("--routers", help="comma-separated router runs (default: all other models)")
    ap.add_argument("--alias", action="append", default=[], metavar="CONCRETE=NAME",
                    help="map a concrete model name a router reports to --small/--large")
    ap.add_argument("--steps", type=int, default=10, help="grid of p and quantiles (1/steps)")
    args = ap.parse_args(argv)
    rows = [r for path in args.results for r in load_jsonl(path)]
    aliases = dict(a.split("=", 1) for a in args.alias)
    routers = [m for m in args.routers.split(",") if m] if args.routers else None
    result = analyze(rows, args.small, args.large, routers, aliases, args.steps)
    render(result, rows, args.small, args.large)
    return 0


if __name__ == "__main__":
    sys.exit(main())
