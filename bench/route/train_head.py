#!/usr/bin/env python3
"""Train, cross-validate and evaluate a learned routing head: L2-regularized logistic regression
over the small model's own mean-pooled final hidden state (folio's /v1/embeddings).

Inputs, all keyed by the set's record ids:
  --set SET.jsonl           the prompt set (make_set.py)
  --results R.jsonl ...     evaluate.py rows holding a run of --small NAME and of --large NAME
                            (their requested_model, as in tradeoff.py); other requested models
                            (e.g. "auto") are shown beside the head when they carry scores
  embeddings, one of:
    --url URL --embed-model NAME   POST /v1/embeddings {"model", "messages": the record's
                            messages, "add_generation_prompt": true}: exactly the prompt the
                            small model sees for the chat request, which the router pools
                            (--concurrency requests in flight; progress on stderr);
                            --save-embeddings E.jsonl keeps them
    --embeddings E.jsonl    a cache: {"id", "sha", "model", "prompt_tokens", "embedding"} per
                            line; "sha" hashes the record's messages, so a cache made from
                            another set (ids repeat across seeds) is refused

Label (--label). Per prompt the gain of sending it large is g = L - S in {-1, 0, +1} (L, S:
the large and small answers' correctness, averaged over repeats). Each choice is a target y
and a sample weight w for a weighted logistic loss:
  gain        y = (1 + g) / 2, w = 1 (the default). The fitted probability is (1 + E[g|x]) / 2,
              so the score ranks prompts by expected gain, and score > 0.5 means large is
              expected to do better; prompts where large is right but small wrong pull up,
              those where small is right but large wrong pull down, ties sit at 1/2
  large-only  y = 1 iff large right and small wrong (ties go small), w = 1: P(g = +1 | x);
              blind to the prompts large gets wrong that small gets right
  decisive    y = 1 iff g = +1, w = |g|: only the prompts where the two models differ;
              P(g = +1 | x, they differ), blind to how often they differ
--compare-labels cross-validates all three on the same folds and prints one line each. On
make_set seed 0 (300 prompts; SmolLM2-135M vs the base Gemma 3 270M, answers and embeddings
from transformers on the same GGUF files), over 3 fold seeds the out-of-fold mean accuracy
above the random router was gain +4.4 .. +4.7 points, decisive +1.1 .. +2.0, large-only
-0.3 .. -0.9: large-only finds the prompts only large gets right best (AUC 0.77 vs 0.55) but
also sends the small model's wins along with them.

Model. Features are standardized with the training rows' mean and standard deviation (a
feature with std <= 1e-8 gets scale 0: it is ignored, never divided by ~0). The objective is
  sum_i w_i * logloss(y_i, b + z_i . beta) / sum_i w_i + |beta|^2 / (2 C)
(no penalty on the bias), minimized by Newton's method with step halving (deterministic; the
optimum lies in the span of the training rows, so it is solved in their SVD basis, which keeps
n < n_embd cheap). C is chosen from the fixed grid 10^-2 .. 10^3 (half decades) by the lowest
held-out weighted log-loss of an inner stratified k-fold CV on the training rows only.

Evaluation. Seeded stratified k-fold CV (--folds 5, --seed 0, strata g = -1/0/+1): every
prompt gets an out-of-fold score from a head that never saw it (its C chosen inside that
fold). The Markdown table is tradeoff.py's: endpoints, random-router diagonal, oracle and
"head-cv score >= t (top q)" rows for q = 0, 0.1, ..., 1, each prompt taking the small or the
large run's graded answer. --oof-out writes one row per prompt (requested_model "head-cv",
route_score, scores_only) that tradeoff.py takes as a router's scores. The head trained on all
rows (C by CV on all rows) goes to --out in the format folio loads ("head": "HEAD.json" in a
virtual model's policy):
  {"format": "folio-route-head", "version": 1, "n_embd", "mean", "scale", "weights", "bias",
   "info"}   score = sigmoid(bias + sum_i weights_i * (e_i - mean_i) * scale_i)

--evaluate-head HEAD.json scores another set (e.g. trained on seed 0, tested on seed 1) with a
given head: the same table with router "head", and --oof-out writes its scores. Prompts the
head was trained on (info.trained_prompts: their messages' hashes; make_set's fact and code
kinds repeat across seeds) are left out unless --keep-seen.

  python3 bench/route/train_head.py --set W/set0.jsonl --results W/small0.jsonl \\
      W/large0.jsonl --small smollm2 --large gemma3 --url http://127.0.0.1:18101 \\
      --embed-model smollm2 --save-embeddings W/emb0.jsonl --out W/head.json
  python3 bench/route/train_head.py --evaluate-head W/head.json --set W/set1.jsonl \\
      --results W/small1.jsonl W/large1.jsonl --small smollm2 --large gemma3 \\
      --embeddings W/emb1.jsonl
"""
import argparse
import base64
import concurrent.futures
import datetime
import hashlib
import json
import os
import sys
import urllib.error
import urllib.request

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tradeoff  # noqa: E402
from grade import load_jsonl  # noqa: E402

FORMAT, VERSION = "folio-route-head", 1
LABELS = ("gain", "large-only", "decisive")
C_GRID = tuple(float(c) for c in 10.0 ** np.arange(-2, 3.01, 0.5))
MIN_STD = 1e-8

# ---- data ----------------------------------------------------------------------------------


def messages_sha(record):
    """Short hash of a record's messages: ids repeat across set seeds, the messages do not."""
    blob = json.dumps(record["messages"], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def matrix(vectors, ids, what):
    """The embeddings of ids as rows of a float64 matrix; SystemExit unless every id has one,
    all of one length, all finite numbers."""
    missing = [i for i in ids if i not in vectors]
    if missing:
        raise SystemExit(f"{what}: no embeddings for {len(missing)} prompts, e.g. {missing[:5]}")
    extra = len(set(vectors) - set(ids))
    if extra:
        print(f"note: {extra} embeddings are of prompts not used here", file=sys.stderr)
    lengths = {len(vectors[i]) for i in ids}
    if len(lengths) > 1:
        raise SystemExit(f"{what}: embeddings of different lengths {sorted(lengths)}")
    try:
        X = np.array([vectors[i] for i in ids], dtype=np.float64).reshape(len(ids), -1)
    except (TypeError, ValueError) as e:
        raise SystemExit(f"{what}: an embedding holds something not a number: {e}")
    bad = [ids[k] for k in np.flatnonzero(~np.isfinite(X).all(axis=1))]
    if bad:
        raise SystemExit(f"{what}: non-finite numbers in the embeddings of {bad[:5]}")
    return X


def load_embeddings(path, records):
    """({id: vector}, the model named in the cache) from a cache file, checked against the
    set's messages."""
    out, model = {}, None
    for n, row in enumerate(load_jsonl(path), 1):
        i = row.get("id")
        if i in out:
            raise SystemExit(f"{path}:{n}: id {i!r} appears twice")
        if i in records and row.get("sha") not in (None, messages_sha(records[i])):
            raise SystemExit(f"{path}:{n}: the embedding of {i!r} was computed from other "
                             f"messages than the set's (a set made with another seed?)")
        if not isinstance(row.get("embedding"), list):
            raise SystemExit(f"{path}:{n}: no embedding list")
        out[i] = row["embedding"]
        model = model or row.get("model")
    return out, model


def decode_embedding(value):
    if isinstance(value, str):  # encoding_format "base64": little-endian float32
        return np.frombuffer(base64.b64decode(value), dtype="<f4").astype(np.float64).tolist()
    return [float(x) for x in value]


def fetch_one(url, model, record, timeout):
    body = json.dumps({"model": model, "messages": record["messages"],
                       "add_generation_prompt": True, "encoding_format": "float"}).encode()
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            reply = json.loads(resp.read())
    except urllib.error.HTTPError as e:
        detail = e.read().decode("utf-8", "replace")[:300]
        raise SystemExit(f"{url}: HTTP {e.code} for {record['id']}: {detail}")
    except (urllib.error.URLError, OSError) as e:
        raise SystemExit(f"{url}: {record['id']}: {e}")
    try:
        vec = decode_embedding(reply["data"][0]["embedding"])
    except (KeyError, IndexError, TypeError, ValueError) as e:
        raise SystemExit(f"{url}: unexpected reply for {record['id']}: {e!r}: {str(reply)[:200]}")
    tokens = (reply.get("usage") or {}).get("prompt_tokens")
    return {"id": record["id"], "sha": messages_sha(record), "model": model,
            "prompt_tokens": tokens, "embedding": vec}


def fetch_embeddings(base_url, model, records, concurrency=4, timeout=120, progress=True):
    """Rows {"id", "sha", "model", "prompt_tokens", "embedding"} in record order."""
    base = base_url.rstrip("/")
    url = (base if base.endswith("/v1") else base + "/v1") + "/embeddings"
    rows, step = {}, max(1, len(records) // 20)
    with concurrent.futures.ThreadPoolExecutor(max(1, concurrency)) as ex:
        futures = [ex.submit(fetch_one, url, model, r, timeout) for r in records]
        for fut in concurrent.futures.as_completed(futures):
            row = fut.result()
            rows[row["id"]] = row
            if progress and (len(rows) % step == 0 or len(rows) == len(records)):
                print(f"embeddings ({model}): {len(rows)}/{len(records)}", file=sys.stderr,
                      flush=True)
    return [rows[r["id"]] for r in records]


def gains(rows, small, large, set_ids):
    """{id: L - S} over the prompts both runs answered; SystemExit on foreign ids."""
    S, L = tradeoff.per_prompt(rows, small), tradeoff.per_prompt(rows, large)
    for name, runs, opt in ((small, S, "--small"), (large, L, "--large")):
        if not runs:
            have = sorted({r.get("requested_model") for r in rows} - {None})
            raise SystemExit(f"no results rows of {opt} {name!r} (requested models: {have})")
        foreign = sorted(set(runs) - set(set_ids))
        if foreign:
            raise SystemExit(f"results of {name!r} hold ids not in the set: {foreign[:5]} "
                             f"({len(foreign)} in all; results of another set?)")
    ids = sorted(set(S) & set(L))
    dropped = len(set_ids) - len(ids)
    if dropped:
        print(f"note: {dropped} prompts of the set lack a small or large result; using "
              f"{len(ids)}", file=sys.stderr)
    return {i: L[i] - S[i] for i in ids}


def label(g, kind):
    """(y, w) arrays of a label choice for gains g (see the module doc)."""
    g = np.asarray(g, dtype=np.float64)
    if kind == "gain":
        return (1 + g) / 2, np.ones_like(g)
    if kind == "large-only":
        return np.clip(g, 0, 1), np.ones_like(g)
    if kind == "decisive":
        return (g > 0).astype(np.float64), np.abs(g)
    raise SystemExit(f"unknown label {kind!r}; known: {', '.join(LABELS)}")


def strata(g):
    return np.where(np.asarray(g) > 1e-9, 1, np.where(np.asarray(g) < -1e-9, -1, 0))


def check_learnable(g, kind, folds):
    s = strata(g)
    need = [(1, "large right, small wrong")]
    if kind == "decisive":
        need.append((-1, "small right, large wrong"))
    for value, what in need:
        n = int((s == value).sum())
        if n < folds:
            raise SystemExit(f"only {n} prompts with {what}; {folds}-fold CV of label {kind!r} "
                             f"needs at least {folds} (a bigger set, or fewer --folds)")


# ---- model ---------------------------------------------------------------------------------


def stratified_folds(classes, k, seed):
    """Fold index per row: each class shuffled by a seeded generator and dealt round-robin,
    continuing across classes, so folds differ in size by at most one and in each class's
    count by at most one. The same (classes, k, seed) gives the same folds."""
    classes = np.asarray(classes)
    rng = np.random.default_rng(seed)
    fold = np.empty(len(classes), dtype=np.int64)
    offset = 0
    for c in sorted(set(classes.tolist())):
        idx = rng.permutation(np.flatnonzero(classes == c))
        fold[idx] = (offset + np.arange(len(idx))) % k
        offset += len(idx)
    return fold


def standardizer(X):
    """(mean, scale) of the rows: scale = 1/std, 0 for a (near-)constant feature."""
    mean = X.mean(axis=0)
    std = X.std(axis=0)
    scale = np.where(std > MIN_STD, 1.0 / np.where(std > MIN_STD, std, 1.0), 0.0)
    return mean, scale


def _sigmoid(m):
    return np.exp(-np.logaddexp(0.0, -m))


def _newton(F, y, w, C, theta, iters=100, tol=1e-10):
    """Minimize sum w*logloss/sum w + |gamma|^2/(2C) over theta = (gamma, bias); F: (n, r)."""
    A = np.hstack([F, np.ones((len(F), 1))])
    W = w / w.sum()
    pen = np.full(A.shape[1], 1.0 / C)
    pen[-1] = 0.0

    def objective(t):
        m = A @ t
        return float(W @ (np.logaddexp(0.0, m) - y * m) + 0.5 * pen @ (t * t))

    f = objective(theta)
    for _ in range(iters):
        p = _sigmoid(A @ theta)
        grad = A.T @ (W * (p - y)) + pen * theta
        hess = (A * (W * p * (1 - p))[:, None]).T @ A + np.diag(pen + 1e-12)
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while t > 1e-6:  # halve until the objective does not rise
            cand = theta - t * step
            fc = objective(cand)
            if fc <= f + 1e-15:
                break
            t /= 2
        else:
            break
        theta, f = cand, fc
        if np.max(np.abs(t * step)) < tol:
            break
    return theta


def fit_path(X, y, w, Cs):
    """Heads (mean, scale, weights, bias) for each C, trained on rows X with targets y and
    weights w, sharing one standardization and one SVD; fitted from the largest penalty down,
    each warm-starting the next."""
    mean, scale = standardizer(X)
    Z = (X - mean) * scale
    U, s, Vt = np.linalg.svd(Z, full_matrices=False)
    keep = s > s[0] * 1e-10 if len(s) and s[0] > 0 else np.zeros(len(s), dtype=bool)
    F, V = U[:, keep] * s[keep], Vt[keep].T  # Z = F @ V.T; beta = V @ gamma
    ybar = float(np.clip((w @ y) / w.sum(), 1e-6, 1 - 1e-6))
    theta = np.zeros(F.shape[1] + 1)
    theta[-1] = np.log(ybar / (1 - ybar))
    heads = {}
    for C in sorted(Cs):
        theta = _newton(F, y, w, C, theta)
        weights = V @ theta[:-1]
        weights[scale == 0] = 0.0  # exactly: V's rows there are rounding noise
        heads[C] = (mean, scale, weights, float(theta[-1]))
    return heads


def score(head, X):
    mean, scale, weights, bias = head
    return _sigmoid(bias + ((np.asarray(X, dtype=np.float64) - mean) * scale) @ weights)


def logloss(y, w, p):
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return float(w @ -(y * np.log(p) + (1 - y) * np.log(1 - p)) / w.sum())


def choose_C(X, y, w, classes, k, seed, Cs=C_GRID):
    """(best C, {C: held-out log-loss}) by stratified k-fold CV on these rows only."""
    fold = stratified_folds(classes, k, seed)
    pred = {C: np.zeros(len(y)) for C in Cs}
    for f in range(k):
        tr, te = fold != f, fold == f
        if w[tr].sum() <= 0 or not te.any():
            continue
        for C, head in fit_path(X[tr], y[tr], w[tr], Cs).items():
            pred[C][te] = score(head, X[te])
    losses = {C: logloss(y, w, pred[C]) for C in Cs}
    best = min(Cs, key=lambda C: (losses[C], C))  # ties: the stronger penalty
    return best, losses


def cross_validate(X, g, kind, k=5, seed=0, Cs=C_GRID):
    """Out-of-fold scores, the fold of each row and the C chosen in each fold."""
    y, w = label(g, kind)
    classes = strata(g)
    fold = stratified_folds(classes, k, seed)
    oof = np.zeros(len(g))
    chosen = []
    for f in range(k):
        tr, te = fold != f, fold == f
        C, _ = choose_C(X[tr], y[tr], w[tr], classes[tr], k, seed + 1 + f, Cs)
        oof[te] = score(fit_path(X[tr], y[tr], w[tr], [C])[C], X[te])
        chosen.append(C)
    return oof, fold, chosen


def train_final(X, g, kind, k=5, seed=0, Cs=C_GRID):
    y, w = label(g, kind)
    C, losses = choose_C(X, y, w, strata(g), k, seed, Cs)
    return fit_path(X, y, w, [C])[C], C, losses


def auc(scores, positive):
    """P(score of a positive > score of a negative), ties counted half (Mann-Whitney)."""
    scores, positive = np.asarray(scores, dtype=np.float64), np.asarray(positive, dtype=bool)
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if not n_pos or not n_neg:
        return float("nan")
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    sorted_scores = scores[order]
    i = 0
    while i < len(scores):  # average ranks over ties
        j = i
        while j + 1 < len(scores) and sorted_scores[j + 1] == sorted_scores[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


# ---- the head file -------------------------------------------------------------------------


def _plain(obj):
    """info as plain JSON: numpy numbers as Python ones, NaN / inf as null (JSON has none)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if np.isfinite(obj) else None
    return obj


def head_json(head, info):
    mean, scale, weights, bias = head
    doc = {"format": FORMAT, "version": VERSION, "n_embd": len(weights),
           "mean": [float(x) for x in mean], "scale": [float(x) for x in scale],
           "weights": [float(x) for x in weights], "bias": float(bias), "info": _plain(info)}
    check_head(doc, "the trained head")
    return doc


def check_head(doc, what):
    """The checks folio's loader makes; SystemExit with the first failure."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise SystemExit(f"{what}: not a {FORMAT} file")
    if doc.get("version") != VERSION:
        raise SystemExit(f"{what}: version {doc.get('version')!r}, this tool reads {VERSION}")
    n = doc.get("n_embd")
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise SystemExit(f"{what}: n_embd must be a positive integer, got {n!r}")
    for key in ("mean", "scale", "weights"):
        v = doc.get(key)
        if not isinstance(v, list) or len(v) != n:
            raise SystemExit(f"{what}: {key} must be a list of n_embd = {n} numbers")
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v) or \
                not np.isfinite(np.array(v, dtype=np.float64)).all():
            raise SystemExit(f"{what}: {key} holds a non-finite or non-numeric value")
    b = doc.get("bias")
    if not isinstance(b, (int, float)) or isinstance(b, bool) or not np.isfinite(b):
        raise SystemExit(f"{what}: bias must be a finite number, got {b!r}")
    if not isinstance(doc.get("info", {}), dict):
        raise SystemExit(f"{what}: info must be an object")


def read_head(path):
    with open(path, encoding="utf-8") as f:
        try:
            doc = json.load(f)
        except json.JSONDecodeError as e:
            raise SystemExit(f"{path}: not JSON: {e}")
    check_head(doc, path)
    return doc, (np.array(doc["mean"], dtype=np.float64), np.array(doc["scale"], np.float64),
                 np.array(doc["weights"], dtype=np.float64), float(doc["bias"]))


# ---- tables --------------------------------------------------------------------------------


def score_rows(ids, scores, records, name, extra=None):
    """Rows tradeoff.py reads as a router's scores; scores_only: no answers of their own."""
    rows = []
    for k, i in enumerate(ids):
        row = {"id": i, "kind": records[i]["kind"], "difficulty": records[i]["difficulty"],
               "requested_model": name, "route_score": float(scores[k]), "scores_only": True}
        for key, values in (extra or {}).items():
            row[key] = values[k]
        rows.append(row)
    return rows


def sweep_summary(result, name):
    """Mean accuracy minus random over the router's sweep rows strictly between 0 and 1."""
    deltas = [r["delta"] for r in result["rows"]
              if r["policy"].startswith(f"{name} score") and 0 < r["share"] < 1]
    return float(np.mean(deltas)) if deltas else float("nan")


def table(rows, small, large, out=None):
    out = out or sys.stdout
    result = tradeoff.analyze(rows, small, large)
    tradeoff.render(result, rows, small, large, out)
    return result


def print_summary(name, g, scores, result, out=None):
    out = out or sys.stdout
    g = np.asarray(g)
    decisive = g != 0
    out.write(f"\n{name}: AUC large-only-right vs rest {auc(scores, g > 0):.3f}; "
              f"AUC large-better vs small-better (the {int(decisive.sum())} prompts where "
              f"they differ) {auc(scores[decisive], g[decisive] > 0):.3f}; "
              f"mean accuracy vs random over shares strictly between 0 and 1: "
              f"{sweep_summary(result, name):+.1%}\n")
    out.flush()


# ---- CLI -----------------------------------------------------------------------------------


def get_vectors(args, records):
    """({id: vector}, model) from --embeddings or fetched from --url (and saved)."""
    if bool(args.url) == bool(args.embeddings):
        raise SystemExit("give either --embeddings E.jsonl or --url URL --embed-model NAME")
    if args.embeddings:
        return load_embeddings(args.embeddings, records)
    if not args.embed_model:
        raise SystemExit("--url needs --embed-model (the small model's served name)")
    rows = fetch_embeddings(args.url, args.embed_model, list(records.values()),
                            args.concurrency, args.timeout)
    if args.save_embeddings:
        write_rows(args.save_embeddings, rows)
    return {r["id"]: r["embedding"] for r in rows}, args.embed_model


def open_out(path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    return open(path, "w", encoding="utf-8")


def write_rows(path, rows):
    with open_out(path) as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)


def file_sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def share_thresholds(scores, steps=10):
    """{share q: score threshold t} sending the top q of these scores large (score >= t)."""
    ordered = sorted(float(s) for s in scores)
    return {f"{k / steps:.1f}": tradeoff.quantile(ordered, 1 - k / steps) for k in range(1, steps)}


def compare_labels(X, g, args, out=None):
    out = out or sys.stdout
    out.write("| label | mean vs random (0 < share < 1) | AUC large-only right | "
              "AUC large vs small better | C per fold |\n|---|---:|---:|---:|---|\n")
    for kind in LABELS:
        try:
            check_learnable(g, kind, args.folds)
        except SystemExit as e:
            out.write(f"| {kind} | {e} | | | |\n")
            continue
        oof, _, chosen = cross_validate(X, g, kind, args.folds, args.seed)
        rows = args.rows + score_rows(args.ids, oof, args.records, "head-cv")
        result = tradeoff.analyze(rows, args.small, args.large, ["head-cv"])
        d = g != 0
        out.write(f"| {kind} | {sweep_summary(result, 'head-cv'):+.2%} | {auc(oof, g > 0):.3f} | "
                  f"{auc(oof[d], g[d] > 0):.3f} | {', '.join(f'{c:g}' for c in chosen)} |\n")


def train(args, X, g):
    check_learnable(g, args.label, args.folds)
    oof, fold, chosen = cross_validate(X, g, args.label, args.folds, args.seed)
    print(f"label {args.label}, {args.folds}-fold CV (seed {args.seed}), C per fold: "
          f"{', '.join(f'{c:g}' for c in chosen)}; out-of-fold scores as router head-cv\n")
    oof_rows = score_rows(args.ids, oof, args.records, "head-cv",
                          {"fold": fold.tolist(), "gain": g.tolist()})
    result = table(args.rows + oof_rows, args.small, args.large)
    print_summary("head-cv", g, oof, result)
    if args.oof_out:
        write_rows(args.oof_out, oof_rows)
    if not args.out:
        return
    head, C, losses = train_final(X, g, args.label, args.folds, args.seed)
    s = strata(g)
    info = {
        "tool": "bench/route/train_head.py", "label": args.label, "C": C,
        "C_grid_logloss": {f"{c:g}": round(v, 6) for c, v in losses.items()},
        "folds": args.folds, "fold_seed": args.seed, "set": os.path.basename(args.set),
        "set_sha256": file_sha(args.set), "set_seed": args.set_seed, "n_prompts": len(g),
        "small": args.small, "large": args.large, "embed_model": args.embed_model_used,
        "counts": {"large_only_right": int((s > 0).sum()), "small_only_right": int((s < 0).sum()),
                   "same": int((s == 0).sum())},
        "cv": {"C_per_fold": chosen, "auc_large_only_right": auc(oof, g > 0),
               "auc_large_vs_small_better": auc(oof[g != 0], g[g != 0] > 0),
               "mean_vs_random": sweep_summary(result, "head-cv"),
               "sweep": [{"policy": r["policy"], "share": r["share"], "acc": r["acc"],
                          "random": r["random"]} for r in result["rows"]
                         if r["policy"].startswith("head-cv score")]},
        "share_thresholds_in_sample": share_thresholds(score(head, X)),
        "trained_prompts": sorted(messages_sha(args.records[i]) for i in args.ids),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    with open_out(args.out) as f:
        json.dump(head_json(head, info), f, allow_nan=False)
        f.write("\n")
    print(f"\nwrote {args.out}: label {args.label}, C {C:g}, {len(g)} prompts", file=sys.stderr)


def evaluate(args, vectors):
    doc, head = read_head(args.evaluate_head)
    info = doc.get("info", {})
    ids, g = (args.ids, args.g) if args.results else (sorted(args.records), None)
    seen = set(info.get("trained_prompts") or [])
    keep = [messages_sha(args.records[i]) not in seen for i in ids]
    if not all(keep) and not args.keep_seen:
        # make_set's fact and code kinds draw from fixed pools: other seeds repeat prompts
        print(f"note: {len(ids) - sum(keep)} prompts of {args.set} were in the head's training "
              f"set; left out (--keep-seen keeps them)", file=sys.stderr)
        if not any(keep):
            raise SystemExit("every prompt of the set was in the head's training set")
        ids = [i for i, k in zip(ids, keep) if k]
        g = None if g is None else g[np.array(keep)]
    X = matrix(vectors, ids, args.embeddings or args.url)
    if X.shape[1] != doc["n_embd"]:
        raise SystemExit(f"embeddings have {X.shape[1]} values, the head's n_embd is "
                         f"{doc['n_embd']} (a head for another model?)")
    scores = score(head, X)
    print(f"head {args.evaluate_head}: label {info.get('label')}, trained on "
          f"{info.get('set')} ({info.get('n_prompts')} prompts), C {info.get('C')}\n",
          file=sys.stderr)
    rows = score_rows(ids, scores, args.records, args.name)
    if args.results:
        result = table(args.rows + rows, args.small, args.large)
        print_summary(args.name, g, scores, result)
    else:
        q = np.quantile(scores, [0, 0.1, 0.5, 0.9, 1])
        print(f"{len(ids)} prompts scored; min / 10 % / median / 90 % / max score: "
              + " / ".join(f"{v:.4g}" for v in q))
    if args.oof_out:
        write_rows(args.oof_out, rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", required=True, help="the prompt set (make_set.py output)")
    ap.add_argument("--set-seed", type=int, help="the set's make_set.py --seed (recorded)")
    ap.add_argument("--results", nargs="+", default=[], help="evaluate.py results JSONL")
    ap.add_argument("--small", help="requested_model of the small model's run")
    ap.add_argument("--large", help="requested_model of the large model's run")
    ap.add_argument("--embeddings", help="embeddings cache JSONL (--save-embeddings output)")
    ap.add_argument("--url", help="server base URL to fetch embeddings from (/v1 is added)")
    ap.add_argument("--embed-model", help="model name for /v1/embeddings (the small model)")
    ap.add_argument("--save-embeddings", help="write fetched embeddings to this JSONL")
    ap.add_argument("--concurrency", type=int, default=4, help="embedding requests in flight")
    ap.add_argument("--timeout", type=float, default=120, help="per-request timeout, seconds")
    ap.add_argument("--label", choices=LABELS, default="gain", help="target (see above)")
    ap.add_argument("--folds", type=int, default=5, help="k of the stratified k-fold CV")
    ap.add_argument("--seed", type=int, default=0, help="seed of the fold assignment")
    ap.add_argument("--compare-labels", action="store_true",
                    help="also cross-validate every label choice on the same folds")
    ap.add_argument("--out", help="write the head trained on all rows here (JSON)")
    ap.add_argument("--oof-out", "--scores-out", dest="oof_out",
                    help="write score rows (out-of-fold, or --evaluate-head's) for tradeoff.py")
    ap.add_argument("--evaluate-head", metavar="HEAD.json", help="score the set with this head")
    ap.add_argument("--name", default="head", help="router name of --evaluate-head's scores")
    ap.add_argument("--keep-seen", action="store_true",
                    help="--evaluate-head: keep prompts the head was trained on")
    args = ap.parse_args(argv)
    if args.folds < 2:
        ap.error("--folds must be at least 2")
    if not args.evaluate_head and not (args.results and args.small and args.large):
        ap.error("training needs --results, --small and --large")
    if args.results and not (args.small and args.large):
        ap.error("--results needs --small and --large")

    args.records = {r["id"]: r for r in load_jsonl(args.set)}
    vectors, args.embed_model_used = get_vectors(args, args.records)
    if args.results:
        args.rows = [r for path in args.results for r in load_jsonl(path)]
        gain = gains(args.rows, args.small, args.large, args.records)
        args.ids = sorted(gain)
        args.g = np.array([gain[i] for i in args.ids])
        args.rows = [r for r in args.rows if r["id"] in gain]
    if args.evaluate_head:
        evaluate(args, vectors)
        return 0
    X = matrix(vectors, args.ids, args.embeddings or args.url)
    if args.compare_labels:
        compare_labels(X, args.g, args)
        print()
    train(args, X, args.g)
    return 0


if __name__ == "__main__":
    sys.exit(main())
