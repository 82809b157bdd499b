"""bench/route: the seeded routing prompt set (make_set.py), its graders (grade.py) and the
trade-off arithmetic (tradeoff.py), without a model or a server.

Checked: a seed gives the same set every time and another seed a different one; every kind and
difficulty is present; the recorded answers are right (arithmetic recomputed, sorted lists
sorted, letter counts recounted, code tasks' reference solutions pass their hidden tests);
grading accepts known right answers and rejects wrong ones per kind, including code that fails,
hangs (timeout) or tries the network.

Run: .venv/bin/python -m pytest -q tests/python/test_route_eval.py
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "route"))

import grade  # noqa: E402
import make_set  # noqa: E402
import tradeoff  # noqa: E402


def by_kind(records, kind):
    return [r for r in records if r["kind"] == kind]


# ---- make_set ------------------------------------------------------------------------------

def test_same_seed_same_output_and_cli_matches():
    a = make_set.make_set(seed=0, per_kind=10)
    assert a == make_set.make_set(seed=0, per_kind=10)
    out = subprocess.run([sys.executable, str(ROOT / "bench/route/make_set.py"), "--per-kind",
                          "10"], capture_output=True, text=True, check=True).stdout
    assert [json.loads(line) for line in out.splitlines()] == a


def test_different_seed_different_output():
    a, b = make_set.make_set(seed=0, per_kind=10), make_set.make_set(seed=1, per_kind=10)
    assert [r["messages"] for r in a] != [r["messages"] for r in b]


def test_kinds_difficulties_and_record_shape():
    recs = make_set.make_set(seed=3, per_kind=10)
    assert len(recs) == 60 and len({r["id"] for r in recs}) == 60
    for kind in make_set.KINDS:
        assert sorted(r["difficulty"] for r in by_kind(recs, kind)) == sorted(list(range(1, 6)) * 2)
    assert [r["kind"] for r in recs[:6]] == list(make_set.KINDS)  # interleaved
    for r in recs:
        assert set(r) >= {"id", "kind", "difficulty", "messages", "answer", "grader", "max_tokens"}
        assert r["messages"][0]["role"] == "user" and r["messages"][0]["content"]
        assert r["grader"]["type"] in grade.GRADERS and r["max_tokens"] > 0


@pytest.fixture(scope="module")
def records():
    return [r for seed in range(5) for r in make_set.make_set(seed=seed, per_kind=10)]


def test_arithmetic_answers(records):
    for r in by_kind(records, "arith"):
        expr = r["meta"]["expr"]
        assert set(expr) <= set("0123456789+-*() ")
        assert r["answer"] == r["grader"]["value"] == eval(expr)
        assert expr in r["messages"][0]["content"]


def test_recall_answers(records):
    for r in by_kind(records, "recall"):
        text = r["messages"][0]["content"]
        pairs = dict(line.split(": ") for line in text.split("\n\n")[1].splitlines())
        assert len(pairs) == r["meta"]["pairs"]
        assert int(pairs[r["meta"]["key"]]) == r["answer"]
        assert f"'{r['meta']['key']}'" in text.split("\n\n")[2]


def test_sort_answers(records):
    for r in by_kind(records, "sort"):
        items = r["meta"]["input"]
        assert r["answer"] == sorted(items) == r["grader"]["items"] != items
        assert ", ".join(map(str, items)) in r["messages"][0]["content"]


def test_letter_counts(records):
    for r in by_kind(records, "letters"):
        word, letter = r["meta"]["word"], r["meta"]["letter"]
        assert r["answer"] == sum(1 for c in word if c == letter) >= 1
        assert f"'{letter}'" in r["messages"][0]["content"]


def test_facts_and_code_tasks_are_drawn_from_their_tables(records):
    facts = {q: aliases for _, q, aliases in make_set.FACTS}
    for r in by_kind(records, "fact"):
        q = r["messages"][0]["content"].rsplit("?", 1)[0] + "?"
        assert r["grader"]["aliases"] == facts[q] and r["answer"] == facts[q][0]
    assert len(make_set.FACTS) == 40
    assert len({q for _, q, _ in make_set.FACTS}) == 40
    names = {t[1] for t in make_set.CODE_TASKS}
    assert {r["grader"]["function"] for r in by_kind(records, "code")} <= names


REFERENCE = {
    "add": "def add(a, b):\n    return a + b\n",
    "square": "def square(x):\n    return x * x\n",
    "is_even": "def is_even(n):\n    return n % 2 == 0\n",
    "reverse_string": "def reverse_string(s):\n    return s[::-1]\n",
    "max_of_list": "def max_of_list(xs):\n    return max(xs)\n",
    "count_vowels": "def count_vowels(s):\n    return sum(c in 'aeiouAEIOU' for c in s)\n",
    "is_prime": "def is_prime(n):\n    return n > 1 and all(n % d for d in range(2, n))\n",
    "factorial": "import math\ndef factorial(n):\n    return math.factorial(n)\n",
    "sum_digits": "def sum_digits(n):\n    return sum(map(int, str(n)))\n",
    "fibonacci": "def fibonacci(n):\n    a, b = 0, 1\n    for _ in range(n):\n"
                 "        a, b = b, a + b\n    return a\n",
    "is_palindrome": "def is_palindrome(s):\n    t = [c.lower() for c in s if c.isalnum()]\n"
                     "    return t == t[::-1]\n",
    "gcd": "import math\ndef gcd(a, b):\n    return math.gcd(a, b)\n",
    "second_largest": "def second_largest(xs):\n    return sorted(set(xs))[-2]\n",
    "run_length_encode": "import itertools\ndef run_length_encode(s):\n    return ''.join("
                         "k + str(len(list(g))) for k, g in itertools.groupby(s))\n",
    "flatten": "def flatten(xs):\n    out = []\n    for x in xs:\n"
               "        out += flatten(x) if isinstance(x, list) else [x]\n    return out\n",
}


def test_code_tasks_reference_solutions_pass_and_wrong_ones_fail():
    assert set(REFERENCE) == {t[1] for t in make_set.CODE_TASKS}
    for _, name, _, _, tests in make_set.CODE_TASKS:
        rec = {"grader": {"type": "code", "function": name, "tests": tests, "timeout": 5}}
        assert grade.grade(rec, f"```python\n{REFERENCE[name]}```"), name
    rec = {"grader": {"type": "code", "function": "add", "tests": [[[2, 3], 5]]}}
    assert not grade.grade(rec, "```python\ndef add(a, b):\n    return a - b\n```")


# ---- grade ---------------------------------------------------------------------------------

def num(value):
    return {"grader": {"type": "number", "value": value}}


@pytest.mark.parametrize("text", [
    "68", "23 + 45 = 68", "The answer is 68.", "Answer: 68", "**68**", "68.0",
    "The value of the key 'falcon' is 68.", "Let me think.\nThe answer is 68",
    "23 + 45 = 68\n\nThis is a classic example of addition with 23 and 45.",
])
def test_number_right(text):
    assert grade.grade(num(68), text)


@pytest.mark.parametrize("text", [
    "", "67", "23 + 45", "23 + 45 = 67", "The answer is 67, not 68.", "no idea",
    "25 + 25 = 5\n\nIn this case, the answer is simply 5.",
])
def test_number_wrong(text):
    assert not grade.grade(num(68), text)


def test_number_words_and_separators():
    assert grade.grade(num(3), "The letter 'r' appears three times in 'strawberry'.")
    assert grade.grade(num(3), "The letter 'r' appears 3 times in 'strawberry'.")
    assert not grade.grade(num(3), "The letter 'r' appears 2 times in 'strawberry'.")
    assert grade.grade(num(1776), "975 + 801 = 1,776")


def lst(items, numeric):
    return {"grader": {"type": "list", "items": items, "numeric": numeric}}


def test_list_grading():
    g = lst([2, 5, 12], True)
    for ok in ["2, 5, 12", "[2, 5, 12]", "The sorted list is: 2, 5, 12.", "2\n5\n12",
               "Sure!\n\n2, 5, 12"]:
        assert grade.grade(g, ok), ok
    for bad in ["12, 5, 2", "2, 12, 5", "2, 5", "2, 5, 12, 2, 5", "5, 2, 12\n\n2, 5, 12",
                "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12"]:
        assert not grade.grade(g, bad), bad
    w = lst(["apple", "kiwi", "zebra"], False)
    assert grade.grade(w, "Apple, Kiwi, Zebra")
    assert grade.grade(w, "Sorted: apple, kiwi, zebra")
    assert not grade.grade(w, "zebra, apple, kiwi")
    assert not grade.grade(w, "apple, kiwi, zebra, apple, zebra")


def test_alias_grading():
    g = {"grader": {"type": "alias", "aliases": ["Gabriel Garcia Marquez", "Marquez"]}}
    assert grade.grade(g, "It was written by Gabriel García Márquez.")
    assert grade.grade(g, "MARQUEZ")
    assert not grade.grade(g, "Henry James")
    assert not grade.grade(g, "Henry James\n\nSome say Marquez.")  # only the first paragraph
    na = {"grader": {"type": "alias", "aliases": ["Na"]}}
    assert grade.grade(na, "The chemical symbol for sodium is Na.")
    assert not grade.grade(na, "The symbol is Nat.") and not grade.grade(na, "It is K.")


def code(tests, name="add"):
    return {"grader": {"type": "code", "function": name, "tests": tests, "timeout": 5}}


ADD = [[[2, 3], 5], [[-1, 1], 0]]


def test_code_extraction_forms():
    assert grade.grade(code(ADD), "```python\ndef add(a, b):\n    return a + b\n```\nThis adds.")
    assert grade.grade(code(ADD), "Here:\n```\ndef add(a, b):\n    return a + b\n```")
    assert grade.grade(code(ADD), "def add(a, b):\n    return a + b\nThis function adds.")
    assert grade.grade(code(ADD), "```python\ndef add(a, b):\n    return a + b\n")  # cut off
    assert grade.grade(code(ADD), "Sure.\n\n    def add(a, b):\n        return a + b\n")
    # A different name is accepted when it is the answer's only function.
    assert grade.grade(code(ADD), "```python\ndef plus(a, b):\n    return a + b\n```")
    assert grade.grade(code(ADD), "```python\nimport operator\n\ndef add(a, b):\n"
                                  "    return operator.add(a, b)\n\nprint(add(1, 2))\n```")


def test_code_failures():
    assert not grade.grade(code(ADD), "I cannot write code.")
    assert not grade.grade(code(ADD), "```python\ndef add(a, b):\n    return a - b\n```")
    assert not grade.grade(code(ADD), "```python\ndef add(a, b):\n    return a +\n```")
    assert not grade.grade(code(ADD), "```python\ndef add(a, b):\n    raise ValueError\n```")
    assert not grade.grade(code(ADD), "```python\ndef f(a, b):\n    return a + b\n"
                                      "def g(a, b):\n    return a + b\n```")  # which one?


def test_code_that_hangs_times_out():
    rec = code(ADD)
    rec["grader"]["timeout"] = 1
    ok, detail = grade.run_code("def add(a, b):\n    while True:\n        pass\n", "add", ADD,
                                timeout=1)
    assert (ok, detail) == (False, "timeout")
    assert not grade.grade(rec, "```python\nimport time\ntime.sleep(30)\ndef add(a, b):\n"
                                "    return a + b\n```")


def test_code_has_no_network_and_runs_in_a_temp_dir(tmp_path):
    net = ("```python\nimport socket\ndef add(a, b):\n"
           "    socket.create_connection(('127.0.0.1', 9))\n    return a + b\n```")
    assert not grade.grade(code(ADD), net)
    ok, _ = grade.run_code("import os\ndef add(a, b):\n"
                           "    return a + b if 'route-code-' in os.getcwd() else 0\n",
                           "add", ADD)
    assert ok


def test_grade_cli(tmp_path):
    recs = make_set.make_set(seed=0, per_kind=1)
    (tmp_path / "set.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    arith = next(r for r in recs if r["kind"] == "arith")
    run = [sys.executable, str(ROOT / "bench/route/grade.py"), "--set", str(tmp_path / "set.jsonl"),
           "--id", arith["id"]]
    assert subprocess.run(run, input=f"The answer is {arith['answer']}.", text=True,
                          capture_output=True).returncode == 0
    assert subprocess.run(run, input="The answer is -1.", text=True,
                          capture_output=True).returncode == 1


# ---- tradeoff ------------------------------------------------------------------------------

def test_tradeoff_random_diagonal_oracle_and_router():
    # 4 prompts: small right on a, b; large right on b, c; nobody on d.
    right = {"s": {"a", "b"}, "l": {"b", "c"}}
    rows = []
    for m in ("s", "l"):
        rows += [{"id": i, "kind": "k", "requested_model": m, "correct": i in right[m]}
                 for i in "abcd"]
    # A router sending c and d to the large model, scoring them highest.
    score = {"a": 0.1, "b": 0.2, "c": 0.9, "d": 0.8}
    pick = {"a": "s", "b": "s", "c": "l", "d": "l"}
    rows += [{"id": i, "kind": "k", "requested_model": "auto", "route_model": pick[i],
              "route_score": score[i], "correct": i in right[pick[i]]} for i in "abcd"]
    res = tradeoff.analyze(rows, "s", "l")
    got = {r["policy"]: r for r in res["rows"]}
    assert got["small only (s)"]["acc"] == 0.5 and got["large only (l)"]["acc"] == 0.5
    assert got["random p=0.5"]["acc"] == 0.5
    assert got["oracle (better answer per prompt)"]["acc"] == 0.75
    assert got["oracle (better answer per prompt)"]["share"] == 0.25
    measured = got["**auto measured**"]
    assert (measured["share"], measured["acc"]) == (0.5, 0.75) and measured["delta"] == 0.25
    sweep = [r for r in res["rows"] if r["policy"].startswith("auto score")]
    assert [r["share"] for r in sweep] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert [r["acc"] for r in sweep] == [0.5, 0.75, 0.75, 0.75, 0.5]
