#!/usr/bin/env python3
"""Send a routing prompt set (make_set.py) to a running OpenAI-compatible server, grade the
answers (grade.py), and summarize per requested model name.

Every record goes to every model in --models (one model after the other, --concurrency requests
in flight), greedy (temperature 0), with the record's max_tokens, through the official openai
client (chat.completions.with_raw_response, to read folio's routing headers). One JSON row per
request goes to --out:

  id, kind, difficulty, requested_model, model (the response's `model`), route_model,
  route_reason, route_score (the x-folio-route-* headers, null when absent), concrete (the
  route model, else the response model), latency_s, prompt_tokens, completion_tokens,
  finish_reason, text, correct, error

Then a summary per requested model: accuracy overall / per kind / per difficulty, mean latency,
requests/s (over that model's wall time), and the share of requests each concrete model answered.

  python3 bench/route/evaluate.py --url http://127.0.0.1:8000 --models auto,small,large \\
      --set bench/.work/route/set.jsonl --out bench/.work/route/results.jsonl
  python3 bench/route/evaluate.py --report bench/.work/route/results.jsonl   # summary only
"""
import argparse
import collections
import concurrent.futures
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grade import grade, load_jsonl  # noqa: E402

ROUTE_HEADERS = ("x-folio-route-model", "x-folio-route-reason", "x-folio-route-score")


def one_request(client, model, record, stop):
    row = {"id": record["id"], "kind": record["kind"], "difficulty": record["difficulty"],
           "requested_model": model, "model": None, "route_model": None, "route_reason": None,
           "route_score": None, "concrete": None, "latency_s": None, "prompt_tokens": None,
           "completion_tokens": None, "finish_reason": None, "text": None, "correct": False,
           "error": None}
    kwargs = {"model": model, "messages": record["messages"], "temperature": 0,
              "max_tokens": record.get("max_tokens", 64)}
    if stop:
        kwargs["stop"] = stop
    t0 = time.perf_counter()
    try:
        raw = client.chat.completions.with_raw_response.create(**kwargs)
        resp = raw.parse()
    except Exception as e:  # recorded, counted as wrong
        row["latency_s"] = time.perf_counter() - t0
        row["error"] = f"{type(e).__name__}: {e}"[:500]
        return row
    row["latency_s"] = time.perf_counter() - t0
    h = raw.headers
    row["route_model"] = h.get("x-folio-route-model")
    row["route_reason"] = h.get("x-folio-route-reason")
    score = h.get("x-folio-route-score")
    if score is not None:
        try:
            row["route_score"] = float(score)
        except ValueError:
            row["route_score"] = score
    row["model"] = resp.model
    row["concrete"] = row["route_model"] or resp.model
    choice = resp.choices[0]
    row["text"] = choice.message.content or ""
    row["finish_reason"] = choice.finish_reason
    if resp.usage:
        row["prompt_tokens"] = resp.usage.prompt_tokens
        row["completion_tokens"] = resp.usage.completion_tokens
    row["correct"] = grade(record, row["text"])
    return row


class Progress:
    def __init__(self, label, total):
        self.label, self.total, self.done, self.ok = label, total, 0, 0
        self.lock = threading.Lock()
        self.tty = sys.stderr.isatty()
        self.step = max(1, total // 10)

    def tick(self, row):
        with self.lock:
            self.done += 1
            self.ok += bool(row["correct"])
            if self.tty or self.done % self.step == 0 or self.done == self.total:
                end = "\n" if not self.tty or self.done == self.total else ""
                print(f"\r{self.label}: {self.done}/{self.total} done, {self.ok} correct",
                      end=end, file=sys.stderr, flush=True)


def run_model(client, model, records, concurrency, stop):
    progress = Progress(model, len(records))
    t0 = time.perf_counter()
    rows = []
    with concurrent.futures.ThreadPoolExecutor(concurrency) as ex:
        futures = [ex.submit(one_request, client, model, r, stop) for r in records]
        for fut in concurrent.futures.as_completed(futures):
            row = fut.result()
            progress.tick(row)
            rows.append(row)
    wall = time.perf_counter() - t0
    order = {r["id"]: i for i, r in enumerate(records)}
    rows.sort(key=lambda r: order[r["id"]])
    for row in rows:
        row["run_wall_s"] = wall
    return rows


def _pct(ok, n):
    return f"{ok / n:.1%} ({ok}/{n})" if n else "-"


def summarize(rows, out=sys.stdout):
    """Markdown summary per requested model of the result rows."""
    by_model = collections.OrderedDict()
    for r in rows:
        by_model.setdefault(r["requested_model"], []).append(r)
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    models = list(by_model)
    w = out.write
    w("| metric | " + " | ".join(models) + " |\n")
    w("|---|" + "---|" * len(models) + "\n")

    def line(name, fn):
        w(f"| {name} | " + " | ".join(fn(by_model[m]) for m in models) + " |\n")

    line("requests", lambda rs: str(len(rs)))
    line("errors", lambda rs: str(sum(1 for r in rs if r["error"])))
    line("**accuracy**", lambda rs: _pct(sum(r["correct"] for r in rs), len(rs)))
    for k in kinds:
        line(f"acc {k}", lambda rs, k=k: _pct(sum(r["correct"] for r in rs if r["kind"] == k),
                                              sum(1 for r in rs if r["kind"] == k)))
    for d in sorted({r["difficulty"] for r in rows}):
        line(f"acc difficulty {d}", lambda rs, d=d: _pct(
            sum(r["correct"] for r in rs if r["difficulty"] == d),
            sum(1 for r in rs if r["difficulty"] == d)))

    def mean(xs):
        xs = [x for x in xs if x is not None]
        return sum(xs) / len(xs) if xs else float("nan")

    line("mean latency s", lambda rs: f"{mean(r['latency_s'] for r in rs):.3f}")
    line("mean completion tokens", lambda rs: f"{mean(r['completion_tokens'] for r in rs):.1f}")

    def rps(rs):
        walls = {r.get("run_wall_s") for r in rs} - {None}
        return f"{len(rs) / sum(walls):.2f}" if walls else "-"

    line("requests/s", rps)

    def share(rs):
        c = collections.Counter(r["concrete"] or "(error)" for r in rs)
        return ", ".join(f"{k} {v / len(rs):.0%}" for k, v in c.most_common())

    line("answered by", share)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", help="server base URL, e.g. http://127.0.0.1:8000 (/v1 is added)")
    ap.add_argument("--models", help="comma-separated model names to send in `model`")
    ap.add_argument("--set", help="prompt set JSONL (make_set.py)")
    ap.add_argument("--out", help="results JSONL (appended to with --append)")
    ap.add_argument("--append", action="store_true", help="append to --out instead of replacing")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--max-requests", type=int, help="use only the first N records of the set")
    ap.add_argument("--stop", action="append", default=[],
                    help="stop sequence sent with every request (repeatable)")
    ap.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY", "none"))
    ap.add_argument("--timeout", type=float, default=300, help="per-request timeout, seconds")
    ap.add_argument("--report", nargs="+", metavar="RESULTS",
                    help="only print the summary of existing results files")
    args = ap.parse_args(argv)

    if args.report:
        summarize([row for path in args.report for row in load_jsonl(path)])
        return 0
    if not (args.url and args.models and args.set):
        ap.error("--url, --models and --set are required (or --report)")
    import openai

    records = load_jsonl(args.set)
    if args.max_requests:
        records = records[:args.max_requests]
    base = args.url.rstrip("/")
    client = openai.OpenAI(base_url=base if base.endswith("/v1") else base + "/v1",
                           api_key=args.api_key, timeout=args.timeout, max_retries=0)
    rows = []
    for model in [m for m in args.models.split(",") if m]:
        rows += run_model(client, model, records, args.concurrency, args.stop)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "a" if args.append else "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    summarize(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
