#!/usr/bin/env python3
"""Seeded generator of a labeled prompt set for routing measurements (`model: "auto"`).

Six kinds of chat requests whose answers a program can check (bench/route/grade.py), each at
difficulty 1..5:

  arith   arithmetic: 1-digit, 2+1-digit and 2-digit addition, 2x1-digit multiplication,
          then 2x2-digit multiplication or a multi-step expression
  recall  key-value recall: a list of "key: value" pairs (3 .. 48 of them), ask one key
  sort    sort 3 .. 8 numbers or 3 .. 5 words; the answer is the sorted list
  letters count a letter in a word (short words .. long words .. a phrase)
  fact    short factual questions from a fixed list of 40 facts with accepted aliases
  code    write a named Python function; graded by running it on hidden test cases

One JSON object per line:
  {"id", "kind", "difficulty", "messages": [{"role": "user", "content"}], "answer",
   "grader": {"type": "number"|"list"|"alias"|"code", ...}, "max_tokens", "meta"}

Difficulties cycle 1..5 within a kind, and records are interleaved across kinds (record i of
every kind, then record i+1 ...), so any prefix of the file covers all kinds and difficulties.
Each kind draws from its own random.Random("<seed>:<kind>"): the same seed gives the same file.

  python3 bench/route/make_set.py                      # 10 per kind, seed 0, to stdout
  python3 bench/route/make_set.py --per-kind 20 --seed 1 --out bench/.work/route/set.jsonl
"""
import argparse
import json
import random
import sys

KINDS = ("arith", "recall", "sort", "letters", "fact", "code")

# ---- arithmetic ------------------------------------------------------------------------------


def make_arith(rng, d):
    if d == 1:
        expr = f"{rng.randint(2, 9)} + {rng.randint(2, 9)}"
    elif d == 2:
        expr = f"{rng.randint(11, 89)} + {rng.randint(2, 9)}"
    elif d == 3:
        expr = f"{rng.randint(11, 49)} + {rng.randint(11, 49)}"
    elif d == 4:
        expr = f"{rng.randint(12, 99)} * {rng.randint(3, 9)}"
    elif rng.random() < 0.5:
        expr = f"{rng.randint(12, 99)} * {rng.randint(12, 99)}"
    else:
        a, b, c, e = rng.randint(10, 49), rng.randint(10, 49), rng.randint(3, 9), rng.randint(10, 99)
        expr = f"({a} + {b}) * {c} - {e}"
    value = eval(expr)  # only digits, + - * ( ) built above
    prompt = f"What is {expr}? Answer with just the number."
    return prompt, value, {"type": "number", "value": value}, 64, {"expr": expr}


# ---- key-value recall ------------------------------------------------------------------------

KEYS = """falcon otter maple cobalt quartz lantern harbor willow saddle meadow ember glacier
pepper canyon violet tundra orchid anchor beacon cinder dagger fable garnet hollow ivory jasper
kettle lagoon marble nectar oyster pebble quiver raven sparrow thistle umber velvet walnut
yonder zephyr basil cedar delta fennel gopher hazel indigo juniper kiwi lotus mango""".split()

RECALL_PAIRS = {1: 3, 2: 6, 3: 12, 4: 24, 5: 48}


def make_recall(rng, d):
    n = RECALL_PAIRS[d]
    keys = rng.sample(KEYS, n)
    values = rng.sample(range(100, 1000), n)
    pos = rng.randrange(n)
    lines = "\n".join(f"{k}: {v}" for k, v in zip(keys, values))
    prompt = (f"Here is a list of key: value pairs.\n\n{lines}\n\n"
              f"What is the value of the key '{keys[pos]}'? Answer with just the number.")
    return prompt, values[pos], {"type": "number", "value": values[pos]}, 64, \
        {"key": keys[pos], "pairs": n, "position": pos}


# ---- sorting ---------------------------------------------------------------------------------

WORDS = """apple banana cherry grape lemon mango peach plum melon kiwi orange pear tiger zebra
horse camel eagle whale shark snake mouse otter panda koala river ocean cloud storm stone
forest desert island valley bread cheese honey sugar salt""".split()


def make_sort(rng, d):
    # (count, numeric, low, high)
    count, numeric, lo, hi = {1: (3, True, 1, 9), 2: (3, False, 0, 0), 3: (5, True, 1, 99),
                              4: (5, False, 0, 0), 5: (8, True, 1, 999)}[d]
    while True:
        items = rng.sample(range(lo, hi + 1), count) if numeric else rng.sample(WORDS, count)
        if items != sorted(items):
            break
    want = sorted(items)
    what = "numbers" if numeric else "words"
    order = "ascending order" if numeric else "alphabetical order"
    shown = ", ".join(str(x) for x in items)
    prompt = (f"Sort these {what} in {order}: {shown}. "
              f"Answer with just the sorted list, separated by commas.")
    return prompt, want, {"type": "list", "items": want, "numeric": numeric}, \
        64 if count <= 5 else 96, {"input": items}


# ---- letter counting -------------------------------------------------------------------------

LETTER_WORDS = {
    1: "cat dog sun tree book moon ball fish door star".split(),
    2: "banana letter coffee yellow butter pepper rabbit summer".split(),
    3: "strawberry committee assessment chocolate engineer raspberry blueberry".split(),
    4: "mississippi bookkeeper possession parallelogram nevertheless abracadabra "
       "onomatopoeia unnecessary".split(),
    5: ["peter piper picked a peck of pickled peppers", "she sells sea shells by the sea shore",
        "the quick brown fox jumps over the lazy dog", "red lorry yellow lorry",
        "a big black bug bit a big black bear", "how much wood would a woodchuck chuck"],
}


def make_letters(rng, d):
    word = rng.choice(LETTER_WORDS[d])
    letters = sorted(set(word.replace(" ", "")))
    if d >= 3:  # harder: a letter that occurs more than once
        letters = [c for c in letters if word.count(c) >= 2] or letters
    letter = rng.choice(letters)
    count = word.count(letter)
    what = "phrase" if " " in word else "word"
    prompt = (f"How many times does the letter '{letter}' appear in the {what} '{word}'? "
              f"Answer with just the number.")
    return prompt, count, {"type": "number", "value": count}, 64, {"word": word, "letter": letter}


# ---- facts -----------------------------------------------------------------------------------

# (difficulty, question, accepted aliases); the first alias is the canonical answer.
FACTS = [
    (1, "What is the capital of France?", ["Paris"]),
    (1, "What is the capital of Japan?", ["Tokyo"]),
    (1, "What is the largest planet in our solar system?", ["Jupiter"]),
    (1, "What color is the sky on a clear day?", ["blue"]),
    (1, "What is frozen water called?", ["ice"]),
    (1, "Which animal says 'moo'?", ["cow", "cows", "cattle"]),
    (1, "What is the opposite of hot?", ["cold"]),
    (1, "Which planet do humans live on?", ["Earth"]),
    (2, "What is the capital of Italy?", ["Rome"]),
    (2, "What is the capital of Germany?", ["Berlin"]),
    (2, "What is the capital of Spain?", ["Madrid"]),
    (2, "Which planet is known as the Red Planet?", ["Mars"]),
    (2, "Who wrote 'Romeo and Juliet'?", ["William Shakespeare", "Shakespeare"]),
    (2, "What is the largest ocean on Earth?", ["Pacific", "Pacific Ocean"]),
    (2, "Which planet has the most famous rings?", ["Saturn"]),
    (2, "What gas do plants take in from the air for photosynthesis?",
     ["carbon dioxide", "CO2"]),
    (3, "What is the chemical symbol for gold?", ["Au"]),
    (3, "What is the capital of Australia?", ["Canberra"]),
    (3, "Who wrote the novel '1984'?", ["George Orwell", "Orwell"]),
    (3, "Which planet is closest to the Sun?", ["Mercury"]),
    (3, "What is the capital of Canada?", ["Ottawa"]),
    (3, "Who painted the Mona Lisa?", ["Leonardo da Vinci", "da Vinci", "Leonardo"]),
    (3, "What is the hardest natural substance?", ["diamond", "diamonds"]),
    (3, "What is the longest river in Africa?", ["Nile", "the Nile"]),
    (4, "What is the chemical symbol for sodium?", ["Na"]),
    (4, "What is the chemical symbol for iron?", ["Fe"]),
    (4, "What is the capital of Turkey?", ["Ankara"]),
    (4, "Who wrote 'Pride and Prejudice'?", ["Jane Austen", "Austen"]),
    (4, "Who wrote 'War and Peace'?", ["Leo Tolstoy", "Tolstoy"]),
    (4, "What is the capital of Brazil?", ["Brasilia", "Brasília"]),
    (4, "What is the capital of New Zealand?", ["Wellington"]),
    (4, "Who composed the opera 'The Magic Flute'?", ["Wolfgang Amadeus Mozart", "Mozart"]),
    (5, "What is the chemical symbol for silver?", ["Ag"]),
    (5, "What is the chemical symbol for lead?", ["Pb"]),
    (5, "What is the capital of Kazakhstan?", ["Astana", "Nur-Sultan"]),
    (5, "What is the capital of Mongolia?", ["Ulaanbaatar", "Ulan Bator", "Ulaanbaator"]),
    (5, "Who wrote 'One Hundred Years of Solitude'?",
     ["Gabriel Garcia Marquez", "Gabriel García Márquez", "Garcia Marquez", "García Márquez",
      "Marquez", "Márquez"]),
    (5, "Who wrote 'The Brothers Karamazov'?",
     ["Fyodor Dostoevsky", "Dostoevsky", "Dostoyevsky"]),
    (5, "Which planet has the longest day (slowest rotation)?", ["Venus"]),
    (5, "What is the smallest prime number greater than 100?", ["101"]),
]


def make_fact(rng, d, used):
    pool = [f for f in FACTS if f[0] == d and f[1] not in used]
    if not pool:  # every fact of this difficulty used: start over
        used.difference_update(f[1] for f in FACTS if f[0] == d)
        pool = [f for f in FACTS if f[0] == d]
    _, question, aliases = rng.choice(pool)
    used.add(question)
    hint = ("the number" if aliases[0].isdigit() else
            "the symbol" if "symbol" in question else "the name or word")
    prompt = f"{question} Answer with just {hint}."
    return prompt, aliases[0], {"type": "alias", "aliases": aliases}, 64, {}


# ---- code ------------------------------------------------------------------------------------

# (difficulty, function name, signature, description, hidden tests [[args], expected])
CODE_TASKS = [
    (1, "add", "add(a, b)", "returns the sum of a and b",
     [[[2, 3], 5], [[-4, 10], 6], [[0, 0], 0], [[123, 877], 1000]]),
    (1, "square", "square(x)", "returns x multiplied by itself",
     [[[3], 9], [[-5], 25], [[0], 0], [[12], 144]]),
    (1, "is_even", "is_even(n)", "returns True if the integer n is even, else False",
     [[[4], True], [[7], False], [[0], True], [[-3], False]]),
    (2, "reverse_string", "reverse_string(s)", "returns the string s reversed",
     [[["hello"], "olleh"], [[""], ""], [["ab"], "ba"], [["racecar"], "racecar"]]),
    (2, "max_of_list", "max_of_list(xs)", "returns the largest number in the non-empty list xs",
     [[[[3, 9, 2]], 9], [[[-5, -2, -9]], -2], [[[7]], 7], [[[1, 5, 5, 0]], 5]]),
    (2, "count_vowels", "count_vowels(s)",
     "returns how many vowels (a, e, i, o, u, upper or lower case) the string s contains",
     [[["hello"], 2], [["sky"], 0], [["AEIOU"], 5], [["Programming"], 3]]),
    (3, "is_prime", "is_prime(n)", "returns True if the integer n is a prime number, else False",
     [[[2], True], [[1], False], [[9], False], [[13], True], [[0], False], [[97], True],
      [[91], False]]),
    (3, "factorial", "factorial(n)", "returns n! for a non-negative integer n (factorial(0) == 1)",
     [[[0], 1], [[1], 1], [[5], 120], [[10], 3628800]]),
    (3, "sum_digits", "sum_digits(n)", "returns the sum of the decimal digits of a non-negative "
     "integer n", [[[0], 0], [[7], 7], [[123], 6], [[9999], 36]]),
    (4, "fibonacci", "fibonacci(n)", "returns the n-th Fibonacci number, with fibonacci(0) == 0 "
     "and fibonacci(1) == 1", [[[0], 0], [[1], 1], [[2], 1], [[10], 55], [[20], 6765]]),
    (4, "is_palindrome", "is_palindrome(s)", "returns True if the string s reads the same "
     "forwards and backwards, ignoring case and any character that is not a letter or digit",
     [[["racecar"], True], [["A man, a plan, a canal: Panama"], True], [["hello"], False],
      [[""], True], [["No lemon, no melon"], True]]),
    (4, "gcd", "gcd(a, b)", "returns the greatest common divisor of two positive integers a and b",
     [[[12, 18], 6], [[7, 5], 1], [[100, 75], 25], [[9, 9], 9]]),
    (5, "second_largest", "second_largest(xs)", "returns the second largest distinct value in "
     "the list xs (which has at least two distinct values)",
     [[[[1, 2, 3]], 2], [[[5, 5, 4]], 4], [[[-1, -7, -3]], -3], [[[10, 9, 10, 8]], 9]]),
    (5, "run_length_encode", "run_length_encode(s)", "returns the run-length encoding of the "
     "string s as letter followed by count, e.g. run_length_encode('aaabcc') == 'a3b1c2'",
     [[["aaabcc"], "a3b1c2"], [[""], ""], [["a"], "a1"], [["zzzzzzzzzzzz"], "z12"],
      [["abab"], "a1b1a1b1"]]),
    (5, "flatten", "flatten(xs)", "returns a flat list of all the values in the arbitrarily "
     "nested list xs, in order, e.g. flatten([1, [2, [3]], 4]) == [1, 2, 3, 4]",
     [[[[1, [2, [3]], 4]], [1, 2, 3, 4]], [[[]], []], [[[[[[]]]]], []],
      [[[[1, 2], [3, [4, [5]]]]], [1, 2, 3, 4, 5]]]),
]


def make_code(rng, d):
    _, name, sig, desc, tests = rng.choice([t for t in CODE_TASKS if t[0] == d])
    prompt = (f"Write a Python function `def {sig}:` that {desc}. "
              f"Answer with just the code in a ```python block.")
    grader = {"type": "code", "function": name, "tests": tests, "timeout": 5}
    return prompt, f"def {sig}: ...", grader, 160, {}


# ---- the set ---------------------------------------------------------------------------------


def kind_records(kind, seed, n):
    rng = random.Random(f"{seed}:{kind}")
    used = set()
    out = []
    for i in range(n):
        d = i % 5 + 1
        if kind == "fact":
            prompt, answer, grader, max_tokens, meta = make_fact(rng, d, used)
        else:
            make = {"arith": make_arith, "recall": make_recall, "sort": make_sort,
                    "letters": make_letters, "code": make_code}[kind]
            prompt, answer, grader, max_tokens, meta = make(rng, d)
        out.append({"id": f"{kind}-{i:03d}", "kind": kind, "difficulty": d,
                    "messages": [{"role": "user", "content": prompt}], "answer": answer,
                    "grader": grader, "max_tokens": max_tokens, "meta": meta})
    return out


def make_set(seed=0, per_kind=10, kinds=KINDS):
    """The records, interleaved: record i of each kind in KINDS order, then i+1 ..."""
    per = [kind_records(k, seed, per_kind) for k in kinds]
    return [recs[i] for i in range(per_kind) for recs in per]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--per-kind", type=int, default=10, help="records per kind (default 10)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated subset of kinds")
    ap.add_argument("--out", help="output file (default: stdout)")
    args = ap.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        ap.error(f"unknown kinds {bad}; known: {','.join(KINDS)}")
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n"
                    for r in make_set(args.seed, args.per_kind, kinds))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(lines)
    else:
        sys.stdout.write(lines)


if __name__ == "__main__":
    main()
