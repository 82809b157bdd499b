#!/usr/bin/env python3
"""Graders for the routing prompt set (bench/route/make_set.py): grade(record, text) -> bool.

Lenient about the form of an answer, strict about its value:

  number  the answer's number: the first number after "answer" ("the answer is 42",
          "Answer: 42") anywhere in the text; else, in the first non-empty line, the number
          after its last "=" ("23 + 45 = 68"), else that line's last number. Number words
          zero..twenty count ("three times"); "1,234" is 1234; 68.0 equals 68.
  list    in the first paragraph (text up to a blank line) that names any of the items, the
          numbers from the first item on (numeric lists), or the item words named (word lists,
          case-insensitive; other words are skipped), must be exactly the sorted list: "1, 3, 7", "[1, 3, 7]", one per line, and "The sorted
          list is: apple, kiwi" pass; the unsorted input, or the list followed by more items, fails.
  alias   any accepted alias occurs as whole words in the first paragraph of the text (up to
          a blank line), case- and accent-insensitive.
  code    the Python code (the first ```python fence holding `def <function>`, else the first
          fence, else the text from the first `def`) is run with `python3 -I -c` in a temp dir,
          sockets disabled, under CPU/memory limits and a wall-clock timeout (5 s); every hidden
          test `function(*args) == expected` must hold. A timeout, crash or missing function
          is wrong.

As a CLI, regrades the "text" of results rows (evaluate.py's output) against a set:
  python3 bench/route/grade.py --set SET.jsonl RESULTS.jsonl [--out REGRADED.jsonl]
  echo "The answer is 68." | python3 bench/route/grade.py --set SET.jsonl --id arith-000
"""
import argparse
import collections
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import unicodedata

NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}
NUM = r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?"
NUM_OR_WORD = rf"(?:{NUM})|\b(?:{'|'.join(NUMBER_WORDS)})\b"


def _to_number(tok):
    tok = tok.lower()
    if tok in NUMBER_WORDS:
        return NUMBER_WORDS[tok]
    return float(tok.replace(",", ""))


def numbers(text):
    """All numbers in text, in order (digits, and the number words zero..twenty)."""
    return [_to_number(m.group(0)) for m in re.finditer(NUM_OR_WORD, text, re.I)]


def extract_number(text):
    """The number the text gives as its answer (see the module doc), or None."""
    m = re.search(rf"answer\W{{0,3}}(?:is|was|would be|=|:)?\W{{0,3}}({NUM_OR_WORD})", text,
                  re.I)
    if m:
        return _to_number(m.group(1))
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    if "=" in line:
        found = numbers(line.rsplit("=", 1)[1])
        if found:
            return found[0]
    found = numbers(line)
    return found[-1] if found else None


def grade_number(grader, text):
    got = extract_number(text)
    return got is not None and abs(got - grader["value"]) < 1e-9


def grade_list(grader, text):
    want = grader["items"]
    numeric = grader.get("numeric", True)
    if numeric:
        want = [float(x) for x in want]
    else:
        want = [w.lower() for w in want]
    items = set(want)
    for para in re.split(r"\n\s*\n", text):
        if numeric:  # every number from the first item on: "1, 2, 3, 4, 5, 6" is not "1, 3, 6"
            toks = numbers(para)
            start = next((k for k, t in enumerate(toks) if t in items), None)
            if start is not None:
                return toks[start:] == want
        else:
            got = [t for t in re.findall(r"[a-z]+", para.lower()) if t in items]
            if got:
                return got == want
    return False


def _fold(s):
    s = unicodedata.normalize("NFKD", s)
    return "".join(c for c in s if not unicodedata.combining(c)).lower()


def grade_alias(grader, text):
    first = next((p for p in re.split(r"\n\s*\n", text) if p.strip()), "")
    t = _fold(first)
    return any(re.search(rf"(?<![\w]){re.escape(_fold(a))}(?![\w])", t)
               for a in grader["aliases"])


# ---- code --------------------------------------------------------------------------------

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:```|\Z)", re.S)
_CODE_START = ("def ", "class ", "import ", "from ", "@", "#")


def extract_code(text, function=None):
    """The code of an answer: a fenced block (preferring one that defines `function`), else the
    lines from the first top-level `def` (with the imports just above it) up to the first
    unindented line of prose."""
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(text)]
    blocks = [b for b in blocks if b[0] in ("", "python", "py", "python3")]
    if blocks:
        if function:
            for _, body in blocks:
                if re.search(rf"^\s*def\s+{re.escape(function)}\s*\(", body, re.M):
                    return body
        for _, body in blocks:
            if re.search(r"^\s*def\s", body, re.M):
                return body
        return blocks[0][1]
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if re.match(r"\s*def\s", ln)), None)
    if start is None:
        return ""
    while start > 0 and lines[start - 1].startswith(("import ", "from ")):
        start -= 1
    indent = len(lines[start]) - len(lines[start].lstrip())
    out = []
    for ln in lines[start:]:
        body = ln[indent:] if ln[:indent].strip() == "" else ln
        if body.strip() and not body[0].isspace() and not body.startswith(_CODE_START):
            break  # prose after the code
        out.append(body)
    return "\n".join(out).rstrip() + "\n"


_HARNESS = r'''
import json, resource, socket, sys
resource.setrlimit(resource.RLIMIT_CPU, (10, 10))
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
def _no_network(*a, **k):
    raise OSError("network disabled")
socket.socket = socket.create_connection = socket.getaddrinfo = _no_network
code, name, tests = json.loads(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
ns = {"__name__": "answer"}
exec(compile(code, "<answer>", "exec"), ns)
fn = ns.get(name)
if not callable(fn):
    mine = [v for v in ns.values() if callable(v) and getattr(v, "__module__", "") == "answer"
            and getattr(v, "__code__", None) is not None]
    if len(mine) != 1:
        sys.exit(f"no function {name}")
    fn = mine[0]
for args, want in tests:
    got = fn(*args)
    if isinstance(got, tuple):
        got = list(got)
    if got != want:
        sys.exit(f"{name}{tuple(args)!r} = {got!r}, want {want!r}")
print("OK")
'''


def run_code(code, function, tests, timeout=5.0):
    """(passed, detail): runs the code's `function` on tests [[args, expected], ...]."""
    if not code.strip():
        return False, "no code"
    with tempfile.TemporaryDirectory(prefix="route-code-") as tmp:
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "TMPDIR": tmp, "LANG": "C.UTF-8"}
        proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _HARNESS, json.dumps(code), json.dumps(function),
             json.dumps(tests)],
            cwd=tmp, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return False, "timeout"
    if proc.returncode == 0 and out.strip().endswith("OK"):
        return True, "ok"
    return False, (err.strip().splitlines() or ["exit %d" % proc.returncode])[-1][:200]


def grade_code(grader, text):
    code = extract_code(text, grader["function"])
    return run_code(code, grader["function"], grader["tests"], grader.get("timeout", 5))[0]


GRADERS = {"number": grade_number, "list": grade_list, "alias": grade_alias, "code": grade_code}


def grade(record, text):
    """True when text answers the record correctly."""
    if not text:
        return False
    g = record["grader"]
    return GRADERS[g["type"]](g, text)


# ---- CLI ---------------------------------------------------------------------------------


def load_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", required=True, help="the prompt set (make_set.py output)")
    ap.add_argument("results", nargs="?", help="results JSONL with 'id' and 'text' per row")
    ap.add_argument("--id", help="grade stdin's text against this record instead")
    ap.add_argument("--out", help="write the regraded rows here")
    args = ap.parse_args(argv)
    records = {r["id"]: r for r in load_jsonl(args.set)}
    if args.id:
        ok = grade(records[args.id], sys.stdin.read())
        print("correct" if ok else "wrong")
        return 0 if ok else 1
    if not args.results:
        ap.error("give a results file or --id")
    rows = load_jsonl(args.results)
    tally = collections.defaultdict(lambda: [0, 0])
    for row in rows:
        row["correct"] = grade(records[row["id"]], row.get("text") or "")
        for key in ((row.get("requested_model", "?"), "all"),
                    (row.get("requested_model", "?"), row["kind"])):
            tally[key][0] += row["correct"]
            tally[key][1] += 1
    for (model, kind), (ok, n) in sorted(tally.items()):
        print(f"{model:24s} {kind:8s} {ok:4d}/{n:<4d} {ok / n:6.1%}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
