#!/usr/bin/env python3
"""Reference logits for folio's model fidelity tests (tests/model/).

HF `transformers` + `torch` (CPU, float32) load the SAME GGUF file folio runs
(transformers dequantizes every tensor to fp32 and undoes llama.cpp's Q/K
permutation), so the only differences left between the two are arithmetic:
the reference-precision path of folio must match to fp32 noise, the fast
(quantized-activation) path must match in distribution.

For every prompt below (English, code, Chinese, a ChatML conversation, ...):
  * the prompt is tokenized with the HF tokenizer read from the GGUF, and the
    ids are stored, so folio's tokenizer is not under test here;
  * a greedy 64-token continuation is computed with a KV cache (pure argmax,
    no logits processors, EOS does not stop it), with the top-1/top-2 margin
    of every step (a tiny margin would make token identity fragile);
  * one teacher-forced forward over prompt + continuation gives logits for
    every position: stored are the top-K ids and logits and the log-sum-exp
    (so log-probs and the tail mass can be recovered), and full vocabulary
    rows for a few positions.

Output (tests/data/model/):
  <stem>.json  cases, token ids, greedy margins, offsets into the .bin
  <stem>.bin   little-endian 4-byte words: int32 top-K ids, float32 top-K
               logits, float32 lse, float32 full rows (offsets in words)

For models with sliding-window layers (Gemma 3: window 512) two more cases are
longer than 1,500 tokens, so the local/global split is exercised: a generated
warehouse ledger (seeded, written for this test) whose last line asks about
its first entries, raw and as a chat. A GGUF without tokenizer.chat_template
is rendered with folio's built-in template for its architecture
(src/chat/templates/<arch>.jinja), as folio itself does.

Re-runnable and deterministic (fixed prompts, argmax, 2 torch threads):
  .venv/bin/python tools/gen_reference_logits.py [--model models/X.gguf]
  .venv/bin/python tools/gen_reference_logits.py --model models/gemma-3-270m-q4_k_m.gguf
Needs torch + transformers + gguf + accelerate, all pinned in requirements.txt
(the committed goldens were made with torch 2.15.0 (CPU), transformers 5.24.0,
gguf 0.19.0, accelerate 1.15.0).
"""
from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "model"
TOP_K = 16
N_GEN = 64

# Texts written for this test (no third-party text). ChatML cases are
# rendered with the model's own chat template.
PROMPTS: list[tuple[str, str | list[dict]]] = [
    ("english_short", "The three primary colors of light are"),
    ("english_long",
     "Maria had kept the lighthouse on the northern cape for eleven years. Every evening she "
     "climbed the one hundred and twelve steps, trimmed the wick, polished the great lens and "
     "wrote the weather into a leather logbook that had belonged to her grandfather. Ships no "
     "longer needed her light, because satellites told them where they were, but the village "
     "still liked to see the beam sweep across the bay at night. One winter a storm knocked "
     "out the power for three days. The radios went quiet, the phones stopped working, and a "
     "small fishing boat that had left before the storm did not come back in the evening. "
     "Maria lit the old oil lamp, the one her grandfather had used before electricity reached "
     "the cape, and she stayed awake all night turning the lens by hand. Just before dawn"),
    ("code_python",
     "def merge_sorted(a: list[int], b: list[int]) -> list[int]:\n"
     "    \"\"\"Merge two sorted lists into one sorted list.\"\"\"\n"
     "    i, j = 0, 0\n"
     "    out = []\n"),
    ("code_cpp",
     "#include <vector>\n#include <cstddef>\n\n"
     "// Returns the sum of all even numbers in v.\n"
     "long sum_even(const std::vector<int>& v) {\n"),
    ("chinese", "人工智能是计算机科学的一个分支，它研究如何让机器"),
    ("chatml", [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What is the boiling point of water at sea level?"},
        {"role": "assistant", "content": "Water boils at 100 degrees Celsius at sea level."},
        {"role": "user", "content": "And in Fahrenheit? Explain how to convert."},
    ]),
    ("numbers", "1, 1, 2, 3, 5, 8, 13, 21,"),
    ("json", '{"name": "folio", "version": "0.1.0", "dependencies": ['),
    ("french", "La recette traditionnelle de la soupe à l'oignon commence par"),
    ("chatml_code", [
        {"role": "user", "content": "Write a Python function that checks whether a string is a "
                                    "palindrome."},
    ]),
]
# Positions (case name -> "last_prompt" or index) whose full row is stored
# (a row is 4 bytes per vocabulary entry: 1 MiB for Gemma's 262,144).
FULL_ROWS = {"english_long": "last_prompt", "code_python": "last_prompt", "chinese": "last_prompt"}
FULL_ROWS_LARGE_VOCAB = {"long_ledger": "last_prompt"}
BUILTIN_TEMPLATES = {"gemma3": "gemma3"}  # general.architecture -> src/chat/templates/<name>.jinja


def ledger(n_entries: int, seed: int) -> str:
    """A warehouse ledger (seeded words written for this test); the question at the end
    refers to its first entries, hundreds of tokens back, beyond a 512-token window."""
    rng = random.Random(seed)
    goods = ["copper pipes", "oak planks", "glass jars", "wool blankets", "steel bolts",
             "paper rolls", "clay bricks", "rubber hoses", "linen sheets", "brass hinges",
             "cotton rope", "tin cans", "cedar boxes", "iron nails", "silk ribbons"]
    people = ["Ana", "Bram", "Chen", "Dalia", "Emeka", "Freya", "Goran", "Hana", "Ivo", "Jun"]
    verbs = ["received", "shipped", "counted", "repaired", "returned", "sorted"]
    lines = ["Warehouse ledger, north depot. Each line is one entry."]
    for i in range(1, n_entries + 1):
        lines.append(f"Entry {i}: {rng.choice(people)} {rng.choice(verbs)} "
                     f"{rng.randint(2, 250)} {rng.choice(goods)} in aisle {rng.randint(1, 40)}, "
                     f"shelf {rng.choice('ABCDEFGH')}.")
    lines.append("Question: who handled entry 2, and what did they do with it? Answer:")
    return "\n".join(lines)


LONG_PROMPTS: list[tuple[str, str | list[dict]]] = [
    ("long_ledger", ledger(90, seed=7)),
    ("long_chat", [{"role": "user", "content": ledger(80, seed=11) + " Explain briefly."}]),
]


def tokenize(tok, prompt, template: str | None) -> list[int]:
    if isinstance(prompt, str):
        return list(tok(prompt, add_special_tokens=True)["input_ids"])
    ids = tok.apply_chat_template(prompt, add_generation_prompt=True, tokenize=True,
                                  chat_template=template)
    if isinstance(ids, dict) or hasattr(ids, "keys"):
        ids = ids["input_ids"]
    return [int(x) for x in ids]


@torch.no_grad()
def greedy(model, ids: list[int]) -> tuple[list[int], list[float]]:
    """Pure-argmax continuation with a KV cache; returns tokens and margins."""
    out = model(torch.tensor([ids]), use_cache=True)
    past, logits = out.past_key_values, out.logits[0, -1]
    tokens, margins = [], []
    for _ in range(N_GEN):
        top2 = torch.topk(logits, 2)
        tokens.append(int(top2.indices[0]))
        margins.append(float(top2.values[0] - top2.values[1]))
        out = model(torch.tensor([[tokens[-1]]]), past_key_values=past, use_cache=True)
        past, logits = out.past_key_values, out.logits[0, -1]
    return tokens, margins


@torch.no_grad()
def teacher_forced_logits(model, seq: list[int]) -> torch.Tensor:
    """Logits (f64) at every position of one forward over seq, through the head in
    chunks of rows (a 1,700 x 262,144 f32 matrix at once would need 1.8 GB)."""
    hidden = model.model(torch.tensor([seq]), use_cache=False).last_hidden_state[0]
    cap = getattr(model.config, "final_logit_softcapping", None)
    rows = []
    for i in range(0, len(seq), 256):
        part = model.lm_head(hidden[i:i + 256])
        if cap is not None:
            part = torch.tanh(part / cap) * cap
        rows.append(part.double())
    return torch.cat(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=str(ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)

    path = Path(args.model)
    tok = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name,
                                                 dtype=torch.float32,
                                                 attn_implementation="eager")
    model.eval()
    template = None
    if tok.chat_template is None:
        name = BUILTIN_TEMPLATES[model.config.model_type.removesuffix("_text")]
        template = (ROOT / "src" / "chat" / "templates" / f"{name}.jinja").read_text()
    prompts, full_rows = PROMPTS, FULL_ROWS
    if getattr(model.config, "sliding_window", None):
        prompts = PROMPTS + LONG_PROMPTS
    if model.config.vocab_size > 100_000:
        full_rows = FULL_ROWS_LARGE_VOCAB

    words: list[np.ndarray] = []
    n_words = 0

    def put(arr: np.ndarray) -> int:
        nonlocal n_words
        off = n_words
        flat = np.ascontiguousarray(arr).reshape(-1)
        assert flat.dtype.itemsize == 4
        words.append(flat.view("<u4"))
        n_words += flat.size
        return off

    cases = []
    for name, prompt in prompts:
        ids = tokenize(tok, prompt, template)
        gen, margins = greedy(model, ids)
        seq = ids + gen
        logits = teacher_forced_logits(model, seq)
        lse = torch.logsumexp(logits, dim=-1)
        top = torch.topk(logits, TOP_K, dim=-1)
        # Teacher forcing must reproduce the cached greedy path (else the
        # reference itself is ambiguous at that step).
        tf_argmax = logits[len(ids) - 1:-1].argmax(-1).tolist()
        case = {
            "name": name,
            "prompt_ids": ids,
            "greedy_ids": gen,
            "greedy_min_margin": min(margins),
            "teacher_forced_agrees": tf_argmax == gen,
            "n_positions": len(seq),
            "topk_ids": put(top.indices.to(torch.int32).numpy()),
            "topk_logits": put(top.values.float().numpy()),
            "lse": put(lse.float().numpy()),
            "full_rows": [],
        }
        if name in full_rows:
            pos = len(ids) - 1
            case["full_rows"].append({"pos": pos, "offset": put(logits[pos].float().numpy())})
        cases.append(case)
        print(f"{name}: {len(ids)} prompt tokens, min greedy margin {min(margins):.4f}, "
              f"text: {tok.decode(gen)[:60]!r}")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = path.stem
    (out / f"{stem}.bin").write_bytes(np.concatenate(words).astype("<u4").tobytes())
    meta = {
        "model": path.name,
        "generator": "tools/gen_reference_logits.py",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "vocab_size": int(model.config.vocab_size),
        "top_k": TOP_K,
        "n_gen": N_GEN,
        "cases": cases,
    }
    (out / f"{stem}.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {out / stem}.json/.bin ({n_words * 4} bytes)")


if __name__ == "__main__":
    main()
