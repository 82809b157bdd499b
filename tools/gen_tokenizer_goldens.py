#!/usr/bin/env python3
"""Generate tokenizer golden files from Hugging Face `tokenizers` (reference implementation).

Run:  /work/main/.venv/bin/python tools/gen_tokenizer_goldens.py [--check-only]

For each model in models/ it builds the HF tokenizer from what the GGUF stores, tokenizes a
deterministic mixed corpus (English, Chinese, code, emoji, whitespace runs, long numbers,
special-token text; no network) and writes tests/data/tokenizer/<name>.jsonl:
  line 1: {"model": file, "reference": how the HF tokenizer was built}
  then one object per case:
    {"text": str, "ids": [...]}          # HF encode, added tokens extracted (parse_special)
    "ids_plain": [...]                    # only when different: special tokens not extracted
                                          # (HF encode_special_tokens=True)
    "decoded": str                        # only when HF decode(ids) != text
    "divergence": str                     # a known, explained difference from HF (see below)

How the references are built (and checked before anything is written):
  * SmolLM2 (gpt2 BPE, pre "smollm"): a tokenizers.Tokenizer assembled here from the GGUF
    vocab + merges with SmolLM2's real pipeline (the StarCoder one): pre_tokenizer
    Sequence[Digits(individual_digits=True), ByteLevel(add_prefix_space=False, use_regex=True)],
    ByteLevel decoder, control tokens as special added tokens. The same builder is first run on
    the reference vectors in shared/tokenizer-vectors (starcoder and gpt-2 vocabularies, whose
    ids came from the upstream HF tokenizers) and must reproduce every case.
  * Gemma 3 (SentencePiece): transformers' GGUF conversion
    (AutoTokenizer.from_pretrained(dir, gguf_file=...)), i.e. tokenizers BPE with byte fallback,
    merges rebuilt from the scores, normalizer ' ' -> U+2581, no prefix space. The same route is
    checked on the llama-spm reference vectors (reported; see below).

Known divergence (flagged per case, not hidden): Gemma's GGUF stores runs of 2..31 spaces as
user-defined tokens. SentencePiece and llama.cpp match user-defined tokens first, longest first
(folio does too), but transformers' GGUF conversion leaves the space runs out of the added tokens,
so HF reaches them through merges and cuts runs longer than 16 spaces differently. Such cases
carry "divergence"; the test checks they round-trip instead of comparing ids.
"""
import argparse
import json
import os
import random
import sys

import gguf
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "tokenizer-vectors")
OUT_DIR = os.path.join(ROOT, "tests", "data", "tokenizer")
SEP = "\n__ggml_vocab_test__\n"


def field(reader, key):
    f = reader.fields.get(key)
    return None if f is None else f.contents()


def build_byte_level_bpe(gguf_path, digits_individual):
    """HF tokenizer for a gpt2-type GGUF vocabulary (StarCoder/SmolLM or GPT-2 pipeline)."""
    r = gguf.GGUFReader(gguf_path)
    tokens = field(r, "tokenizer.ggml.tokens")
    types = field(r, "tokenizer.ggml.token_type")
    merges = [tuple(m.split(" ", 1)) for m in field(r, "tokenizer.ggml.merges")]
    vocab = {}
    for i, t in enumerate(tokens):
        vocab.setdefault(t, i)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, byte_fallback=False))
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if digits_individual:
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Digits(individual_digits=True), byte_level])
    else:
        tok.pre_tokenizer = byte_level
    tok.decoder = decoders.ByteLevel()
    special = [AddedToken(tokens[i], special=True, normalized=False)
               for i, t in enumerate(types) if t in (2, 3)]
    user = [AddedToken(tokens[i], special=False, normalized=False)
            for i, t in enumerate(types) if t == 4]
    tok.add_special_tokens(special)
    tok.add_tokens(user)
    return tok


def load_vectors(name):
    base = os.path.join(SHARED, f"ggml-vocab-{name}.gguf")
    with open(base + ".inp", encoding="utf-8", newline="") as f:
        inp = f.read()
    if inp.endswith(SEP):
        inp = inp[: -len(SEP)]
    cases = inp.split(SEP)
    with open(base + ".out", encoding="utf-8") as f:
        outs = [[int(x) for x in line.split()] for line in f.read().split("\n")[: len(cases)]]
    return base, cases, outs


def check_vectors(tok, name, special_plain=True):
    base, cases, outs = load_vectors(name)
    if special_plain:
        tok.encode_special_tokens = True
    bad = [i for i, (c, o) in enumerate(zip(cases, outs))
           if tok.encode(c, add_special_tokens=False).ids != o]
    tok.encode_special_tokens = False
    print(f"  reference vectors {name}: {len(cases) - len(bad)}/{len(cases)} match"
          + (f" (mismatching cases {bad})" if bad else ""))
    return not bad


def load_transformers_tokenizer(gguf_path):
    from transformers import AutoTokenizer  # slow import; only for SentencePiece models
    d, f = os.path.split(gguf_path)
    return AutoTokenizer.from_pretrained(d, gguf_file=f).backend_tokenizer


# ---- the corpus -------------------------------------------------------------------------------

ENGLISH = [
    "The quick brown fox jumps over the lazy dog.",
    "It's a truth universally acknowledged, that a single man in possession of a good fortune "
    "must be in want of a wife.",
    "I've been 'told he's there, 'RE you sure? 'M not sure I'll make it, 'D you like tea?",
    "Hello, world! How are you doing today?", "e.g. U.S.A., Dr. Smith & Co. -- (see p. 42)",
    "naïve café résumé coöperate façade Führer", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n",
]
CHINESE = ["我想在apple工作1314151天～", "今天天气很好，我们去公园散步吧。", "机器学习是人工智能的一个分支。",
           "日本語のテキストも少し。カタカナ、ひらがな。", "한국어 문장도 있습니다.", "Привет, как дела? Всё хорошо.",
           "مرحبا بالعالم", "नमस्ते दुनिया", "ἀρχὴ ἥμισυ παντός", "ស្វាគមន៍"]
CODE = [
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
    "for (int i = 0; i < n; ++i) {\n\tsum += a[i] * b[i];\n}\n",
    "#include <stdio.h>\nint main(void) { printf(\"%d\\n\", 42); return 0; }",
    "const x = {a: 1, 'b': [2, 3], \"c\": null}; // comment",
    "SELECT id, name FROM users WHERE age >= 18 ORDER BY name;",
    "<div class=\"box\">&nbsp;<b>bold</b></div>", "$ ls -la | grep '^d' && echo \"done\" >> log.txt",
    "x += 1\ny -= 2\nz *= 3\n", "''''''```````\"\"\"\"......!!!!!!??????",
]
EMOJI = ["🚀", "😶‍🌫️", "🦙🦙", "✅", "👩‍👩‍👧‍👦", "🇫🇷", "🤗", "❤️", "1️⃣"]
WHITESPACE = [" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\n\n\n", " \n", "\r\n", "\u3000", "\u00a0",
              "\u2028", "\u0085", "    \n  \t "]
NUMBERS = ["3", "33", "333", "3333", "33333", "123456789012345678901234567890", "3.14159",
           "1,000,000", "-42", "0x1F", "2024-01-01", "١٢٣", "½", "²"]


def corpus(special_texts, seed, n_cases):
    rng = random.Random(seed)
    pools = [ENGLISH, CHINESE, CODE, EMOJI, WHITESPACE, NUMBERS]
    cases = ["", " ", "  ", "\n", "Hello", " Hello", "  Hello", "\n\nHello\n\n",
             "   leading and trailing   ", "a" * 300, " " * 200, "\n" * 50, "9" * 120,
             "🚀" * 30, "中" * 60]
    cases += special_texts[:6]
    cases += [f"{s}hello{s} world {s}" for s in special_texts[:4]]
    while len(cases) < n_cases:
        parts = []
        for _ in range(rng.randint(1, 8)):
            r = rng.random()
            if r < 0.1 and special_texts:
                parts.append(rng.choice(special_texts))
            else:
                parts.append(rng.choice(rng.choice(pools)))
            if rng.random() < 0.6:
                parts.append(rng.choice([" ", "", "\n", "  ", ", "]))
        cases.append("".join(parts))
    return cases


def divergence(text, flag_space_runs):
    if flag_space_runs and " " * 17 in text:
        return "run of >16 spaces: HF-from-GGUF lacks Gemma's space-run user-defined tokens"
    return None


def write_goldens(tok, cases, out_path, header, flag_space_runs=False):
    size = 0
    with open(out_path, "w", encoding="utf-8", newline="\n") as f:
        f.write(json.dumps(header, ensure_ascii=False) + "\n")
        for text in cases:
            ids = tok.encode(text, add_special_tokens=False).ids
            tok.encode_special_tokens = True
            plain = tok.encode(text, add_special_tokens=False).ids
            tok.encode_special_tokens = False
            rec = {"text": text, "ids": ids}
            if plain != ids:
                rec["ids_plain"] = plain
            decoded = tok.decode(ids, skip_special_tokens=False)
            if decoded != text:
                rec["decoded"] = decoded
            note = divergence(text, flag_space_runs)
            if note:
                rec["divergence"] = note
            line = json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n"
            size += len(line.encode())
            f.write(line)
    print(f"  wrote {out_path}: {len(cases)} cases, {size / 1024:.0f} KiB")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check-only", action="store_true", help="only verify against the vectors")
    ap.add_argument("--cases", type=int, default=260)
    args = ap.parse_args()
    os.makedirs(OUT_DIR, exist_ok=True)

    print("checking the byte-level BPE builder against upstream reference vectors")
    ok = check_vectors(build_byte_level_bpe(os.path.join(SHARED, "ggml-vocab-starcoder.gguf"), True),
                       "starcoder")
    ok &= check_vectors(build_byte_level_bpe(os.path.join(SHARED, "ggml-vocab-gpt-2.gguf"), False),
                        "gpt-2")
    if not ok:
        sys.exit("the HF tokenizer built from GGUF does not reproduce the reference vectors")
    print("checking transformers' GGUF conversion of SentencePiece against llama-spm vectors")
    spm_ok = check_vectors(load_transformers_tokenizer(os.path.join(SHARED, "ggml-vocab-llama-spm.gguf")),
                           "llama-spm")
    if not spm_ok:
        print("  (llama-spm differs: see the report; Gemma 3 adds no prefix space, so the "
              "prefix-space handling that Llama needs does not apply to it)")
    if args.check_only:
        return

    smol = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
    tok = build_byte_level_bpe(smol, True)
    specials = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<repo_name>", "<file_sep>",
                "<|im_start|>user\nHi<|im_end|>\n"]
    write_goldens(tok, corpus(specials, 1234, args.cases),
                  os.path.join(OUT_DIR, "smollm2.jsonl"),
                  {"model": os.path.basename(smol),
                   "reference": "tokenizers.Tokenizer built from GGUF vocab+merges, "
                                "Digits(individual)+ByteLevel pipeline"})

    gemma = os.path.join(ROOT, "models", "gemma-3-270m-q4_k_m.gguf")
    tok = load_transformers_tokenizer(gemma)
    specials = ["<start_of_turn>", "<end_of_turn>", "<bos>", "<eos>", "<pad>",
                "<start_of_turn>user\nHi<end_of_turn>\n", "<start_of_image>", "<unused5>"]
    write_goldens(tok, corpus(specials, 5678, args.cases),
                  os.path.join(OUT_DIR, "gemma3.jsonl"),
                  {"model": os.path.basename(gemma),
                   "reference": "transformers AutoTokenizer.from_pretrained(gguf_file=...)"},
                  flag_space_runs=True)


if __name__ == "__main__":
    main()
