"""bench/route/train_head.py: the learned routing head (logistic regression over the small
model's pooled hidden state), without a model or a server.

Checked on synthetic embeddings whose label depends on one direction plus noise: the
out-of-fold ranking beats random (AUC well above 1/2) and the fit is the optimum of its
objective; folds are stratified and seeded; a constant feature gets scale 0; the head file
round-trips, meets the format folio's loader takes, and its score formula is the tool's; the
out-of-fold rows are a router's scores for tradeoff.py; the embeddings client speaks the
/v1/embeddings shape (a fake server in a thread); mismatched inputs stop with a clear message.

Run: .venv/bin/python -m pytest -q tests/python/test_route_head.py
"""
import base64
import http.server
import json
import math
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "route"))

import make_set  # noqa: E402
import tradeoff  # noqa: E402
import train_head as th  # noqa: E402

HEAD_KEYS = {"format", "version", "n_embd", "mean", "scale", "weights", "bias", "info"}


def synthetic(n, d, seed=0, noise=0.5):
    """(X, g): rows with a random offset and scale per feature; large wins (g = +1) where the
    projection on a hidden direction is high, small wins (g = -1) mostly where it is low."""
    rng = np.random.default_rng(seed)
    fixed = np.random.default_rng(99)  # the same direction and feature scales for every seed
    u = fixed.normal(size=d)
    u /= np.linalg.norm(u)
    scale, offset = fixed.uniform(0.01, 0.1, size=d), fixed.normal(size=d)
    Z = rng.normal(size=(n, d))
    t = Z @ u + noise * rng.normal(size=n)
    g = np.where(t > 0.8, 1.0, np.where((t < 0) & (rng.random(n) < 0.6), -1.0, 0.0))
    X = Z * scale + offset
    return X, g


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def files(tmp, seed, d=8, per_kind=20):
    """A make_set set, small/large results and an embeddings cache from synthetic()."""
    recs = make_set.make_set(seed=seed, per_kind=per_kind)
    X, g = synthetic(len(recs), d, seed)
    small, large, emb = [], [], []
    for r, x, gi in zip(recs, X, g):
        base = {"id": r["id"], "kind": r["kind"], "difficulty": r["difficulty"]}
        small.append(dict(base, requested_model="s", correct=bool(gi < 0)))
        large.append(dict(base, requested_model="l", correct=bool(gi > 0)))
        emb.append({"id": r["id"], "sha": th.messages_sha(r), "model": "m",
                    "embedding": x.tolist()})
    return {"set": write_jsonl(tmp / f"set{seed}.jsonl", recs),
            "small": write_jsonl(tmp / f"small{seed}.jsonl", small),
            "large": write_jsonl(tmp / f"large{seed}.jsonl", large),
            "emb": write_jsonl(tmp / f"emb{seed}.jsonl", emb), "records": recs, "g": g}


def train_argv(f, *extra):
    return ["--set", f["set"], "--results", f["small"], f["large"], "--small", "s", "--large",
            "l", "--embeddings", f["emb"], *extra]


# ---- model ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", th.LABELS)
def test_out_of_fold_ranking_beats_random(kind):
    X, g = synthetic(200, 12)
    oof, fold, chosen = th.cross_validate(X, g, kind, k=5, seed=0)
    assert sorted(set(fold.tolist())) == list(range(5)) and len(chosen) == 5
    assert np.isfinite(oof).all() and ((0 < oof) & (oof < 1)).all()
    assert th.auc(oof, g > 0) > 0.8
    assert th.auc(oof[g != 0], g[g != 0] > 0) > 0.8
    shuffled = np.random.default_rng(1).permutation(g)
    assert abs(th.auc(oof, shuffled > 0) - 0.5) < 0.15  # the scores carry no label leak


def test_fit_is_the_optimum_of_its_objective():
    X, g = synthetic(40, 60, seed=3)  # fewer rows than features: solved in the rows' span
    y, w = th.label(g, "gain")
    for C in (0.1, 10.0):
        mean, scale, beta, b = th.fit_path(X, y, w, [C])[C]
        Z = (X - mean) * scale
        p = 1 / (1 + np.exp(-(Z @ beta + b)))
        W = w / w.sum()
        assert abs(W @ (p - y)) < 1e-8  # d/d bias
        assert np.abs(Z.T @ (W * (p - y)) + beta / C).max() < 1e-8  # d/d beta


def test_labels():
    g = np.array([1.0, 0.0, -1.0, 0.5])
    y, w = th.label(g, "gain")
    assert y.tolist() == [1.0, 0.5, 0.0, 0.75] and w.tolist() == [1, 1, 1, 1]
    y, w = th.label(g, "large-only")
    assert y.tolist() == [1.0, 0.0, 0.0, 0.5] and w.tolist() == [1, 1, 1, 1]
    y, w = th.label(g, "decisive")
    assert y.tolist() == [1.0, 0.0, 0.0, 1.0] and w.tolist() == [1, 0, 1, 0.5]


def test_auc_matches_pair_counting():
    rng = np.random.default_rng(5)
    s = rng.integers(0, 6, size=50).astype(float)  # many ties
    pos = rng.random(50) < 0.3
    pairs = [(a > b) + 0.5 * (a == b) for a in s[pos] for b in s[~pos]]
    assert th.auc(s, pos) == pytest.approx(np.mean(pairs))
    assert math.isnan(th.auc(s, np.zeros(50, dtype=bool)))


def test_standardization_guards_constant_features():
    X, g = synthetic(80, 6)
    X[:, 2] = 3.25  # constant
    X[:, 4] = 0.0
    mean, scale = th.standardizer(X)
    assert scale[2] == 0 and scale[4] == 0 and np.isfinite(scale).all()
    assert (scale[[0, 1, 3, 5]] > 0).all()
    y, w = th.label(g, "gain")
    head = th.fit_path(X, y, w, [1.0])[1.0]
    assert head[2][2] == 0 and head[2][4] == 0
    moved = X.copy()
    moved[:, 2] = -100.0  # a feature constant in training moves at serving time: ignored
    assert np.array_equal(th.score(head, X), th.score(head, moved))


def test_folds_are_stratified_and_seeded():
    classes = np.array([1] * 13 + [0] * 70 + [-1] * 27)
    a = th.stratified_folds(classes, 5, seed=7)
    assert np.array_equal(a, th.stratified_folds(classes, 5, seed=7))
    assert not np.array_equal(a, th.stratified_folds(classes, 5, seed=8))
    sizes = np.bincount(a, minlength=5)
    assert sizes.max() - sizes.min() <= 1
    for c in (1, 0, -1):
        per = np.bincount(a[classes == c], minlength=5)
        assert per.max() - per.min() <= 1


# ---- the head file -------------------------------------------------------------------------

def test_head_round_trips_and_score_formula_matches(tmp_path):
    X, g = synthetic(120, 10)
    head, C, losses = th.train_final(X, g, "gain")
    assert C in th.C_GRID and set(losses) == set(th.C_GRID)
    path = tmp_path / "head.json"
    path.write_text(json.dumps(th.head_json(head, {"label": "gain", "C": C})))
    doc, loaded = th.read_head(path)
    for a, b in zip(loaded[:3], head[:3]):
        assert np.array_equal(a, b)
    assert loaded[3] == head[3]
    e = X[:7]
    z = (e - np.array(doc["mean"])) * np.array(doc["scale"])
    direct = 1 / (1 + np.exp(-(doc["bias"] + z @ np.array(doc["weights"]))))
    assert np.allclose(th.score(loaded, e), direct, rtol=0, atol=1e-12)


def test_info_is_plain_json():
    X, g = synthetic(60, 4)
    head = th.fit_path(X, *th.label(g, "gain"), [1.0])[1.0]
    doc = th.head_json(head, {"auc": float("nan"), "n": np.int64(3), "x": [np.float32(0.5)]})
    assert doc["info"] == {"auc": None, "n": 3, "x": [0.5]}
    json.dumps(doc, allow_nan=False)


def bad_head(**change):
    doc = {"format": th.FORMAT, "version": 1, "n_embd": 3, "mean": [0, 0, 0],
           "scale": [1, 1, 1], "weights": [0.5, -0.5, 0], "bias": 0.1, "info": {}}
    doc.update(change)
    return doc


@pytest.mark.parametrize("change, message", [
    ({"format": "other"}, "not a folio-route-head"), ({"version": 2}, "version"),
    ({"n_embd": 4}, "must be a list of n_embd = 4"), ({"n_embd": "3"}, "positive integer"),
    ({"mean": [0, 0]}, "mean must be a list"), ({"scale": [1, float("nan"), 1]}, "non-finite"),
    ({"weights": [1, "x", 0]}, "non-numeric"), ({"bias": float("inf")}, "bias"),
    ({"info": []}, "info"),
])
def test_check_head_refuses_malformed_heads(change, message):
    th.check_head(bad_head(), "ok")
    with pytest.raises(SystemExit, match=message):
        th.check_head(bad_head(**change), "bad")


def test_trained_head_file_meets_the_format(tmp_path, capsys):
    f = files(tmp_path, 0)
    out = tmp_path / "w" / "head.json"
    th.main(train_argv(f, "--out", str(out), "--oof-out", str(tmp_path / "oof.jsonl"),
                       "--set-seed", "0"))
    def strict(name):  # NaN / Infinity are not JSON: folio's parser refuses them
        raise AssertionError(f"{name} in the head file")

    doc = json.loads(out.read_text(), parse_constant=strict)
    assert set(doc) == HEAD_KEYS
    assert doc["format"] == "folio-route-head" and doc["version"] == 1
    assert type(doc["n_embd"]) is int and doc["n_embd"] == 8
    for key in ("mean", "scale", "weights"):
        assert len(doc[key]) == 8
        assert all(type(x) is float and math.isfinite(x) for x in doc[key])
    assert type(doc["bias"]) is float and math.isfinite(doc["bias"])
    info = doc["info"]
    assert info["label"] == "gain" and info["C"] in th.C_GRID and info["folds"] == 5
    assert info["set_seed"] == 0 and info["n_prompts"] == 120 and info["embed_model"] == "m"
    assert info["cv"]["auc_large_only_right"] > 0.7
    assert sum(info["counts"].values()) == 120
    printed = capsys.readouterr().out
    assert "head-cv score >= " in printed and "(top 50%)" in printed and "oracle" in printed


def test_oof_rows_are_router_scores_for_tradeoff(tmp_path, capsys):
    f = files(tmp_path, 0)
    th.main(train_argv(f, "--oof-out", str(tmp_path / "oof.jsonl")))
    capsys.readouterr()
    oof = [json.loads(x) for x in (tmp_path / "oof.jsonl").read_text().splitlines()]
    assert len(oof) == 120 and all(r["requested_model"] == "head-cv" for r in oof)
    assert sorted(r["fold"] for r in oof) == sorted(list(range(5)) * 24)
    rows = [json.loads(x) for p in (f["small"], f["large"]) for x in open(p)] + oof
    res = tradeoff.analyze(rows, "s", "l")
    policies = [r["policy"] for r in res["rows"]]
    assert sum(p.startswith("head-cv score") for p in policies) == 11
    assert not any("measured" in p or "replayed" in p for p in policies)
    auto = [dict(r, requested_model="auto", route_model="l", correct=True, scores_only=False)
            for r in oof]
    policies = [r["policy"] for r in tradeoff.analyze(rows + auto, "s", "l")["rows"]]
    assert "**auto measured**" in policies  # rows without the mark keep their run rows


def test_evaluate_head_on_another_seed(tmp_path, capsys):
    train, test = files(tmp_path, 0), files(tmp_path, 1)
    head = tmp_path / "head.json"
    th.main(train_argv(train, "--out", str(head)))
    capsys.readouterr()
    scores = tmp_path / "scores1.jsonl"
    th.main(["--evaluate-head", str(head), "--set", test["set"], "--results", test["small"],
             test["large"], "--small", "s", "--large", "l", "--embeddings", test["emb"],
             "--oof-out", str(scores)])
    printed = capsys.readouterr()
    assert "head score >= " in printed.out
    rows = [json.loads(x) for x in scores.read_text().splitlines()]
    # fact and code prompts repeat across seeds: those the head was trained on are left out
    trained = {th.messages_sha(r) for r in train["records"]}
    unseen = [r["id"] for r in test["records"] if th.messages_sha(r) not in trained]
    assert 60 < len(unseen) < 120 and f"{120 - len(unseen)} prompts of" in printed.err
    assert sorted(r["id"] for r in rows) == sorted(unseen)
    assert rows[0]["requested_model"] == "head"
    g = dict(zip((r["id"] for r in test["records"]), test["g"]))
    s = np.array([r["route_score"] for r in rows])
    # a held-out set: the direction learned on seed 0 carries over
    assert th.auc(s, np.array([g[r["id"]] for r in rows]) > 0) > 0.75
    th.main(["--evaluate-head", str(head), "--set", test["set"], "--embeddings", test["emb"],
             "--oof-out", str(scores), "--keep-seen"])
    assert len(scores.read_text().splitlines()) == 120


# ---- errors --------------------------------------------------------------------------------

def test_errors_for_mismatched_inputs(tmp_path):
    f = files(tmp_path, 0)
    run = th.main
    with pytest.raises(SystemExit, match="no results rows of --large 'big'"):
        run(["--set", f["set"], "--results", f["small"], f["large"], "--small", "s",
             "--large", "big", "--embeddings", f["emb"]])
    other = files(tmp_path, 1)
    with pytest.raises(SystemExit, match="other messages"):  # a cache of the seed-1 set
        run(train_argv(f)[:-1] + [other["emb"]])
    foreign = tmp_path / "foreign.jsonl"
    write_jsonl(foreign, [{"id": "zzz-000", "kind": "k", "difficulty": 1,
                           "requested_model": "s", "correct": True}])
    with pytest.raises(SystemExit, match="ids not in the set"):
        run(["--set", f["set"], "--results", f["small"], f["large"], str(foreign), "--small",
             "s", "--large", "l", "--embeddings", f["emb"]])
    emb = [json.loads(x) for x in open(f["emb"])]
    short = write_jsonl(tmp_path / "short.jsonl", emb[:-3])
    with pytest.raises(SystemExit, match="no embeddings for 3 prompts"):
        run(train_argv(f)[:-1] + [short])
    ragged = write_jsonl(tmp_path / "ragged.jsonl",
                         emb[:-1] + [dict(emb[-1], embedding=emb[-1]["embedding"][:5])])
    with pytest.raises(SystemExit, match="different lengths"):
        run(train_argv(f)[:-1] + [ragged])
    nan = write_jsonl(tmp_path / "nan.jsonl",
                      emb[:-1] + [dict(emb[-1], embedding=[float("nan")] * 8)])
    with pytest.raises(SystemExit, match="non-finite"):
        run(train_argv(f)[:-1] + [nan])
    with pytest.raises(SystemExit, match="either --embeddings"):
        run(train_argv(f) + ["--url", "http://127.0.0.1:9"])


def test_evaluate_refuses_a_head_of_another_width(tmp_path):
    f = files(tmp_path, 0)
    head = tmp_path / "head.json"
    head.write_text(json.dumps(bad_head()))  # n_embd 3, embeddings have 8
    with pytest.raises(SystemExit, match="n_embd is 3"):
        th.main(["--evaluate-head", str(head), "--set", f["set"], "--embeddings", f["emb"]])


def test_too_few_large_wins_is_a_clear_error():
    X, g = synthetic(60, 4)
    g[g > 0] = 0
    g[:3] = 1
    with pytest.raises(SystemExit, match="only 3 prompts with large right"):
        th.check_learnable(g, "gain", 5)


# ---- the embeddings client -----------------------------------------------------------------

class FakeEmbeddings(http.server.BaseHTTPRequestHandler):
    """/v1/embeddings: the vector is (number of words in the messages, 1, 0), base64 for
    model "b64"; 404 for model "missing"."""
    seen = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeEmbeddings.seen.append((self.path, body))
        if body["model"] == "missing":
            self.send_response(404)
            self.end_headers()
            self.wfile.write(b'{"error": {"message": "model missing not found"}}')
            return
        words = sum(len(m["content"].split()) for m in body["messages"])
        vec = [float(words), 1.0, 0.0]
        emb = (base64.b64encode(np.array(vec, dtype="<f4").tobytes()).decode()
               if body["model"] == "b64" else vec)
        reply = {"object": "list", "model": body["model"], "usage": {"prompt_tokens": words,
                                                                     "total_tokens": words},
                 "data": [{"object": "embedding", "index": 0, "embedding": emb}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeEmbeddings)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def test_fetch_embeddings_sends_the_chat_messages(server, tmp_path, capsys):
    recs = make_set.make_set(seed=0, per_kind=2)
    FakeEmbeddings.seen.clear()
    for model in ("float", "b64"):
        rows = th.fetch_embeddings(server, model, recs, concurrency=3)
        assert [r["id"] for r in rows] == [r["id"] for r in recs]
        for r, rec in zip(rows, recs):
            words = len(rec["messages"][0]["content"].split())
            assert r["embedding"] == [float(words), 1.0, 0.0] and r["prompt_tokens"] == words
            assert r["sha"] == th.messages_sha(rec) and r["model"] == model
    path, body = FakeEmbeddings.seen[0]
    assert path == "/v1/embeddings" and body["add_generation_prompt"] is True
    assert body["messages"] in [r["messages"] for r in recs] and "input" not in body
    with pytest.raises(SystemExit, match="HTTP 404.*model missing not found"):
        th.fetch_embeddings(server + "/v1", "missing", recs[:1])
    # The CLI fetches, saves a cache that loads back, and checks the cache against the set.
    cache = tmp_path / "emb.jsonl"
    write_jsonl(tmp_path / "set.jsonl", recs)
    (tmp_path / "h.json").write_text(json.dumps(bad_head()))
    th.main(["--evaluate-head", str(tmp_path / "h.json"), "--set", str(tmp_path / "set.jsonl"),
             "--url", server, "--embed-model", "float", "--save-embeddings", str(cache)])
    vectors, model = th.load_embeddings(cache, {r["id"]: r for r in recs})
    assert model == "float" and len(vectors) == len(recs)
    assert "prompts scored" in capsys.readouterr().out
