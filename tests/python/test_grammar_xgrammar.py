"""folio's token masks against xgrammar's, step by step (independent reference).

For each constraint (JSON schemas, any JSON object, regexes, choice lists,
hand-written GBNF) and each model vocabulary (SmolLM2: byte-level BPE, 49152
tokens; Gemma 3: SentencePiece with byte fallback, 262144 tokens):

  * the GBNF text is folio's own (`folio grammar ... --print-gbnf`); xgrammar
    compiles the SAME text (Grammar.from_ebnf), so any difference is in the
    matchers, not in the schema translation;
  * xgrammar's vocabulary is built from `folio grammar --vocab`: the same bytes
    per token, VocabType.RAW; tokens folio marks as non-text (control, unused,
    no bytes) are given as b"", which xgrammar 0.2.9 classifies as special
    (never allowed) -- checked below; the GGUF's EOS is the one stop token;
  * walks are generated with xgrammar's matcher (seeded), picking among its
    allowed tokens with biases toward long tokens, tokens that span terminals
    (`",` `"}` `}]`), partial UTF-8 tokens (byte-level pieces, Gemma's <0xNN>
    byte fallback), whitespace runs up to the bound, digits and EOS;
    adversarial walks end in a token xgrammar refuses, picked as a near miss
    (an allowed token plus more bytes, same first byte, EOS before the end,
    a non-text token, a stray UTF-8 byte);
  * all walks of one (model, constraint) go through one `folio grammar
    --masks` run; the allowed sets must be identical at every step, EOS
    included exactly where the grammar may end, and folio must refuse each
    adversarial walk's last token.

A difference prints the walk's prefix bytes and the tokens (id, bytes) only
one engine allows.

Run: FOLIO_BIN=build/release/folio .venv/bin/python -m pytest tests/python/test_grammar_xgrammar.py
"""

import json
import os
import random
import subprocess
import threading
import zlib

import numpy as np
import pytest

xgr = pytest.importorskip("xgrammar")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOLIO = os.environ.get("FOLIO_BIN", os.path.join(ROOT, "build", "release", "folio"))
MODELS = {
    "smollm2": os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf"),
    "gemma3": os.path.join(ROOT, "models", "gemma-3-270m-q4_k_m.gguf"),
}
# Walks per constraint: (random walks, max steps). Gemma's masks are 5x
# larger, so it gets fewer; the adversarial walks come on top (one per
# random walk, cut at a seeded step).
WALKS = {"smollm2": (12, 48), "gemma3": (5, 28)}

# ---- constraints ---------------------------------------------------------------
SCHEMAS = {
    "nested": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 12},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "address": {
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
                },
                "required": ["zip"],
                "additionalProperties": False,
            },
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
        },
        "required": ["name", "age"],
        "additionalProperties": False,
    },
    "enum_anyof": {
        "type": "object",
        "properties": {
            "kind": {"enum": ["a", "b", "c d", "日本", 3, None]},
            "value": {"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 4}, {"type": "null"}]},
            "flag": {"type": "boolean"},
        },
        "required": ["kind", "value"],
    },
    "ranges": {
        "type": "object",
        "properties": {
            "x": {"type": "integer", "minimum": -5, "maximum": 1234},
            "y": {"type": "number"},
            "z": {"type": "integer", "exclusiveMinimum": 0, "maximum": 99},
        },
        "required": ["x", "y", "z"],
        "additionalProperties": False,
    },
    "formats": {
        "type": "object",
        "properties": {f: {"type": "string", "format": f}
                       for f in ["date", "date-time", "uuid", "email", "ipv4"]},
        "additionalProperties": False,
    },
    "array_of_objects": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "id": {"type": "integer"},
                "label": {"type": "string", "minLength": 1, "maxLength": 8},
                "ok": {"type": "boolean"},
            },
            "required": ["id", "label"],
            "additionalProperties": False,
        },
        "minItems": 1,
        "maxItems": 4,
    },
    "pattern_strings": {
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{2,4}$"},
            "word": {"type": "string", "pattern": "^(é|ü|日本|[a-z])+$"},
            "short": {"type": "string", "minLength": 2, "maxLength": 5},
        },
        "required": ["code"],
        "additionalProperties": False,
    },
}

REGEXES = {
    "email_like": r"[a-z]{1,8}@[a-z]+\.(com|org|de)",
    "phone": r"\(?\d{3}\)? ?\d{3}-\d{4}",
    "unicode_words": r"(héllo|wörld|日本語|😀)( (héllo|wörld|日本語|😀)){0,3}[0-9]{0,3}",
}

CHOICES = {
    "overlapping": ["yes", "no", "yes please", "maybe not", "日本"],
}

GBNF = {
    "arithmetic": r'''
root   ::= expr
expr   ::= term (ws [-+] ws term)*
term   ::= factor (ws [*/] ws factor)*
factor ::= number | "(" ws expr ws ")" | "-" factor
number ::= [0-9]+ ("." [0-9]+)?
ws     ::= [ ]{0,3}
''',
    "csv_unicode": r'''
root   ::= header ("\n" row){1,4} "\n"?
header ::= field ("," field){1,3}
row    ::= field ("," field){1,3}
field  ::= quoted | bare
bare   ::= ([a-zA-Z0-9 .] | [^\x00-\x7F])*
quoted ::= "\"" ([^"\x00-\x1F] | "\"\"")* "\""
''',
    "unicode_ranges": r'''
root   ::= (greek | cjk | "€" | [\u00C0-\u024F] | [\U0001F600-\U0001F64F])+ "."?
greek  ::= [α-ω]
cjk    ::= [\u4e00-\u9fff]{1,2}
''',
}


def constraints():
    out = [("json_object", ["--json-object"])]
    out += [(f"schema_{k}", ("schema", v)) for k, v in SCHEMAS.items()]
    out += [(f"regex_{k}", ["--regex", v]) for k, v in REGEXES.items()]
    for k, v in CHOICES.items():
        args = []
        for c in v:
            args += ["--choice", c]
        out.append((f"choice_{k}", args))
    out += [(f"gbnf_{k}", ("gbnf", v)) for k, v in GBNF.items()]
    return out


CONSTRAINTS = constraints()


def constraint_args(spec, tmpdir):
    """CLI arguments for a constraint; schemas and grammars go to files."""
    if isinstance(spec, list):
        return spec
    kind, body = spec
    path = os.path.join(tmpdir, "c.json" if kind == "schema" else "c.gbnf")
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(body) if kind == "schema" else body)
    return ["--json-schema" if kind == "schema" else "--gbnf", path]


def folio(*args, **kw):
    assert os.path.exists(FOLIO), f"{FOLIO} not built (set FOLIO_BIN)"
    return subprocess.run([FOLIO, *args], capture_output=True, timeout=120, **kw)


# ---- vocabularies ----------------------------------------------------------------
class Vocab:
    """The bytes of every token as folio's grammar sees them, plus the
    per-token features the walk generator biases toward."""

    def __init__(self, model):
        r = folio("grammar", "-m", model, "--vocab")
        assert r.returncode == 0, r.stderr.decode()
        self.bytes, text = [], []
        for line in r.stdout.decode().splitlines():
            d = json.loads(line)
            assert d["id"] == len(self.bytes)
            self.bytes.append(bytes.fromhex(d["hex"]))
            text.append(d["text"])
        self.text = np.array(text, dtype=bool)
        info = json.loads(folio("info", "--json", "-m", model).stdout)
        self.eos = info["tokenizer"]["special"]["eos"]
        self.n = len(self.bytes)
        self.length = np.array([len(b) for b in self.bytes])

        def feature(pred):
            return np.array([bool(b) and pred(b) for b in self.bytes], dtype=bool)

        def partial_utf8(b):
            try:
                b.decode("utf-8")
                return False
            except UnicodeDecodeError:
                return True

        structural = set(b'"{}[],:')
        self.features = {
            # tokens that cross a terminal boundary: `",` `"}` `}]` `":"` ...
            "span": feature(lambda b: len(b) >= 2 and any(c in structural for c in b)),
            "ws": feature(lambda b: all(c in b" \t\n\r" for c in b)),
            "digit": feature(lambda b: all(48 <= c <= 57 for c in b)),
            "utf8": feature(partial_utf8),
            "nonascii": feature(lambda b: any(c >= 0x80 for c in b)),
        }
        self.surrogate_tail = feature(lambda b: 0xA0 <= b[0] <= 0xBF)
        self.info = xgr.TokenizerInfo(encoded_vocab=self.bytes, vocab_type=xgr.VocabType.RAW,
                                      stop_token_ids=[self.eos])
        self.compiler = xgr.GrammarCompiler(self.info, max_threads=2, cache_enabled=False)


_VOCABS = {}


def vocab_of(name):
    if name not in _VOCABS:
        if not os.path.exists(MODELS[name]):
            pytest.skip(f"{MODELS[name]} missing: run scripts/setup")
        _VOCABS[name] = Vocab(MODELS[name])
    return _VOCABS[name]


@pytest.mark.parametrize("model", list(MODELS))
def test_vocab_special_tokens_match(model):
    """Non-text tokens (given to xgrammar as b"") are exactly xgrammar's
    special tokens, bar EOS (a stop token): never allowed on either side."""
    v = vocab_of(model)
    non_text = set(np.flatnonzero(~v.text).tolist())
    assert v.eos in non_text
    assert set(v.info.special_token_ids) == non_text - {v.eos}
    assert list(v.info.stop_token_ids) == [v.eos]


# ---- walks ---------------------------------------------------------------------------
class XgrWalker:
    """xgrammar's matcher plus its masks as bool arrays."""

    def __init__(self, compiled, vocab):
        self.m = xgr.GrammarMatcher(compiled)
        self.v = vocab
        self.bitmask = xgr.allocate_token_bitmask(1, vocab.n)

    def mask(self):
        self.m.fill_next_token_bitmask(self.bitmask)
        bits = np.unpackbits(self.bitmask.numpy().view(np.uint8), bitorder="little")
        return bits[: self.v.n].astype(bool)


PROFILES = [  # category weights per walk; a walk keeps one profile
    {"uniform": 4, "long": 2, "span": 2, "utf8": 1, "ws": 1, "digit": 1, "eos": 0.3},
    {"uniform": 1, "long": 5, "span": 3, "eos": 0.2},
    {"uniform": 1, "ws": 6, "span": 1, "eos": 0.1},  # whitespace runs up to the bound
    {"uniform": 1, "utf8": 5, "nonascii": 3, "eos": 0.1},  # split UTF-8, byte fallback
    {"uniform": 1, "digit": 5, "long": 1, "eos": 0.2},
]


def pick(rng, v, allowed, profile):
    ids = np.flatnonzero(allowed)
    cats = list(profile)
    while True:
        cat = rng.choices(cats, weights=[profile[c] for c in cats])[0]
        if cat == "eos":
            if allowed[v.eos]:
                return v.eos
            continue
        if cat == "uniform":
            cand = ids
        elif cat == "long":
            cand = ids[np.argsort(-v.length[ids], kind="stable")[:16]]
        else:
            cand = np.flatnonzero(allowed & v.features[cat])
            if cat == "ws" and len(cand):  # the longest runs first
                cand = cand[np.argsort(-v.length[cand], kind="stable")[:4]]
        cand = cand[cand != v.eos] if len(cand) > 1 else cand
        if len(cand):
            return int(rng.choice(cand.tolist()))


def forbidden(rng, v, allowed, refused):
    """A token xgrammar refuses, preferably a near miss."""
    kinds = ["extends", "first_byte", "eos", "nontext", "utf8", "any"]
    while True:
        kind = rng.choice(kinds)
        if kind == "eos":
            if refused[v.eos]:
                return v.eos, kind
            continue
        if kind == "nontext":
            cand = np.flatnonzero(~v.text & refused)
        elif kind == "utf8":
            cand = np.flatnonzero(v.features["utf8"] & refused)
        elif kind == "any":
            cand = np.flatnonzero(refused & v.text)
        else:
            ok = [v.bytes[i] for i in rng.sample(np.flatnonzero(allowed & v.text).tolist(),
                                                 min(32, int((allowed & v.text).sum())))]
            if not ok:
                continue
            if kind == "first_byte":
                firsts = {b[:1] for b in ok}
                cand = [i for i in np.flatnonzero(refused & v.text)[: 1 << 18].tolist()
                        if v.bytes[i][:1] in firsts]
            else:  # an allowed token followed by more bytes
                base = rng.choice(ok)
                cand = [i for i in np.flatnonzero(refused & v.text).tolist()
                        if len(v.bytes[i]) > len(base) and v.bytes[i].startswith(base)]
            cand = np.array(cand, dtype=np.int64)
        if len(cand):
            return int(rng.choice(cand.tolist())), kind


def make_walks(compiled, v, seed, n_walks, max_steps, stats):
    """Random walks (with xgrammar's mask before every step and after the
    last token) and adversarial walks (a prefix of one, then a refused
    token)."""
    rng = random.Random(seed)
    walks, masks, adversarial = [], [], []
    for w in range(n_walks):
        profile = PROFILES[w % len(PROFILES)]
        xm = XgrWalker(compiled, v)
        cut = rng.randrange(0, max_steps)
        toks, ms = [], []
        for step in range(max_steps):
            raw = allowed = xm.mask()
            if toks and v.bytes[toks[-1]].endswith(b"\xed"):
                # xgrammar 0.2.9 expands a character class over code points
                # (e.g. [^\x00-\x7F], JSON's [^"\\]) to UTF-8 without cutting
                # out the surrogates U+D800..U+DFFF: after a lead byte 0xED it
                # allows 0xA0..0xBF, which encode a surrogate (invalid UTF-8,
                # RFC 3629; no text decodes from it). folio allows 0x80..0x9F
                # only, which is right. Those tokens are dropped from
                # xgrammar's side (and never picked), nothing else.
                allowed = raw & ~v.surrogate_tail
                stats["surrogate_excluded"] += int((raw & v.surrogate_tail).sum())
            ms.append(np.packbits(allowed, bitorder="little"))
            if step == cut and (~allowed).any():
                bad, kind = forbidden(rng, v, allowed, ~raw)
                assert not xm.m.accept_token(bad), (bad, v.bytes[bad])
                adversarial.append((toks + [bad], ms[-1], kind))
            if not allowed.any():
                break
            t = pick(rng, v, allowed, profile)
            assert xm.m.accept_token(t), (t, v.bytes[t])
            toks.append(t)
            if t == v.eos:
                break
        else:
            ms.append(np.packbits(xm.mask(), bitorder="little"))
        if toks and toks[-1] == v.eos:
            ms.append(None)  # after EOS: folio's mask is empty; xgrammar's terminated
        walks.append(toks)
        masks.append(ms)
    return walks, masks, adversarial


# ---- folio's side ------------------------------------------------------------------------
def folio_masks(args, model, lines, wanted):
    """Streams `folio grammar --masks`: yields (record, allowed ids or None);
    the ids are parsed only where wanted(walk, step)."""
    p = subprocess.Popen([FOLIO, "grammar", *args, "-m", model, "--masks"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def feed():
        p.stdin.write("".join(" ".join(map(str, ids)) + "\n" for ids in lines).encode())
        p.stdin.close()

    t = threading.Thread(target=feed)
    t.start()
    head = '{"allowed":['
    for raw in p.stdout:
        line = raw.decode()
        if line.startswith(head):
            end = line.index("]")
            rec = json.loads("{" + line[end + 2:])
            if not wanted(rec["walk"], rec["step"]):
                continue
            body = line[len(head):end]
            ids = np.array(body.split(","), dtype=np.int64) if body else np.zeros(0, np.int64)
            yield rec, ids
        else:
            yield json.loads(line), None
    t.join()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 0, err


def describe(v, ids):
    return [(int(i), v.bytes[i]) for i in ids[:12]] + (["..."] if len(ids) > 12 else [])


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("name,spec", CONSTRAINTS, ids=[c[0] for c in CONSTRAINTS])
def test_masks_match_xgrammar(model, name, spec, tmp_path):
    v = vocab_of(model)
    args = constraint_args(spec, str(tmp_path))
    r = folio("grammar", *args, "--print-gbnf")
    assert r.returncode == 0, r.stderr.decode()
    gbnf = r.stdout.decode()
    compiled = v.compiler.compile_grammar(xgr.Grammar.from_ebnf(gbnf, root_rule_name="root"))

    n_walks, max_steps = WALKS[model]
    seed = zlib.crc32(f"{model}/{name}".encode())
    stats = {"surrogate_excluded": 0}
    walks, xmasks, adversarial = make_walks(compiled, v, seed, n_walks, max_steps, stats)
    lines = walks + [a[0] for a in adversarial]

    diffs, refused_seen, steps = [], set(), 0
    def wanted(w, step):  # an adversarial walk's prefix repeats a random walk's steps
        return w < len(walks) or step == len(lines[w]) - 1

    for rec, ids in folio_masks(args, MODELS[model], lines, wanted):
        w, step = rec["walk"], rec["step"]
        if "refused" in rec:
            refused_seen.add(w)
            assert w >= len(walks), f"folio refused token {rec['refused']} of random walk {w} " \
                f"step {step}: {v.bytes[rec['refused']]!r} after {b''.join(v.bytes[t] for t in walks[w][:step])!r}"
            assert step == len(lines[w]) - 1, (w, step)
            continue
        adv = w >= len(walks)
        toks = lines[w]
        if adv:
            expect = adversarial[w - len(walks)][1]
        else:
            expect = xmasks[w][step]
        steps += 1
        mine = np.zeros(v.n, dtype=bool)
        mine[ids] = True
        if expect is None:  # after EOS
            assert not mine.any(), "folio allows tokens after EOS"
            continue
        assert rec["can_end"] == bool(mine[v.eos]), rec
        theirs = np.unpackbits(expect, bitorder="little")[: v.n].astype(bool)
        if (mine != theirs).any():
            prefix = b"".join(v.bytes[t] for t in toks[:step] if t != v.eos)
            diffs.append({
                "walk": w, "step": step, "prefix": prefix,
                "only_folio": describe(v, np.flatnonzero(mine & ~theirs)),
                "only_xgrammar": describe(v, np.flatnonzero(theirs & ~mine)),
            })
    missing = set(range(len(walks), len(lines))) - refused_seen
    assert not missing, [(lines[w][-1], v.bytes[lines[w][-1]]) for w in missing]
    assert steps > len(walks)
    assert not diffs, f"{len(diffs)} steps differ; first: " + "\n".join(
        repr(d) for d in diffs[:4]) + "\nGBNF:\n" + gbnf
