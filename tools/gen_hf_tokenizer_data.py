#!/usr/bin/env python3
"""Write Hugging Face tokenizer directories for tests/hf/hf_tokenizer_test.cpp.

Run:  /work/main/.venv/bin/python tools/gen_hf_tokenizer_data.py [--no-gemma]

Both directories are made by transformers itself from the models' GGUF files (offline):
AutoTokenizer.from_pretrained(models/, gguf_file=...) rebuilds the HF tokenizer and
save_pretrained writes tokenizer.json, tokenizer_config.json and chat_template.jinja. The test
converts them back with folio's hf::tokenizer_metadata and compares with the GGUF's own
tokenizer.* metadata and with the HF goldens of tests/data/tokenizer/*.jsonl.

  * SmolLM2 -> tests/data/hf/smollm2/ (committed, ~1.3 MB). Two changes to what the loader
    builds, both to match the real HuggingFaceTB/SmolLM2-135M-Instruct tokenizer.json: the
    pre-tokenizer becomes SmolLM2's Sequence[Digits(individual_digits), ByteLevel] (the GGUF
    loader writes plain ByteLevel, GPT-2's pipeline, which splits digit runs differently) and
    the post-processor ByteLevel(trim_offsets=false). tokenizer.json is rewritten compact with
    "a b" string merges (the form of the hub's file; the test covers the [a, b] form with a
    hand-written case). config.json holds the GGUF's bos/eos/vocab_size.
  * Gemma 3 -> models/hf/gemma-3-270m-tokenizer/ (not committed: tokenizer.json is 33 MB;
    models/ is ignored by git). The loader's output unchanged, plus config.json and
    generation_config.json with Gemma 3's ids (eos_token_id [1, 106]: <eos>, <end_of_turn>).
  * The upstream vocabularies of shared/tokenizer-vectors (gpt-2, starcoder, llama-spm, phi-3)
    -> models/hf/vectors/<name>/ (not committed, 1-2 MB each), StarCoder with its real
    Digits + ByteLevel pre-tokenizer; the test checks folio's ids against the upstream ones.

Each saved tokenizer.json is reloaded with `tokenizers` and must encode every case of its golden
file to the golden ids (with and without special-token parsing), so the directories are the very
tokenizers the goldens came from. For the vectors, the reloaded tokenizer must give the upstream
ids, except llama-spm: transformers' loader writes Metaspace(prepend_scheme="first"), which
differs from SentencePiece on some cases (counted and printed; folio's conversion gives
SentencePiece's ids there).
Output is deterministic: same inputs, same bytes.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

import gguf
from tokenizers import Tokenizer, pre_tokenizers, processors

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "models")
VECTORS = os.path.join(os.path.dirname(ROOT), "shared", "tokenizer-vectors")
SEP = "\n__ggml_vocab_test__\n"
GOLDENS = os.path.join(ROOT, "tests", "data", "tokenizer")


def gguf_field(path, key):
    f = gguf.GGUFReader(path).fields.get(key)
    return None if f is None else f.contents()


def load_from_gguf(gguf_name, folder=MODELS):
    from transformers import AutoTokenizer  # slow import
    return AutoTokenizer.from_pretrained(folder, gguf_file=gguf_name)


def check_goldens(tokenizer_json, golden_name):
    tok = Tokenizer.from_file(tokenizer_json)
    with open(os.path.join(GOLDENS, golden_name), encoding="utf-8") as f:
        lines = [l for l in f.read().split("\n")[1:] if l]
    bad = 0
    for line in lines:
        rec = json.loads(line)
        tok.encode_special_tokens = False
        ids = tok.encode(rec["text"], add_special_tokens=False).ids
        tok.encode_special_tokens = True
        plain = tok.encode(rec["text"], add_special_tokens=False).ids
        bad += ids != rec["ids"]
        bad += plain != rec.get("ids_plain", rec["ids"])
    print(f"  {golden_name}: {len(lines)} cases, {bad} mismatches")
    if bad:
        sys.exit(f"the saved tokenizer does not reproduce {golden_name}")


def write_json(path, obj, compact=False):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        if compact:
            json.dump(obj, f, ensure_ascii=False, separators=(",", ":"))
        else:
            json.dump(obj, f, ensure_ascii=False, indent=2)
        f.write("\n")


def make_smollm2(out_dir):
    name = "SmolLM2-135M-Instruct.Q4_1.gguf"
    path = os.path.join(MODELS, name)
    tok = load_from_gguf(name)
    backend = tok.backend_tokenizer
    backend.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    backend.post_processor = processors.ByteLevel(trim_offsets=False)
    with tempfile.TemporaryDirectory() as tmp:
        tok.save_pretrained(tmp)
        with open(os.path.join(tmp, "tokenizer.json"), encoding="utf-8") as f:
            tj = json.load(f)
        tj["model"]["merges"] = [" ".join(m) for m in tj["model"]["merges"]]
        if any(m.count(" ") != 1 for m in tj["model"]["merges"]):
            sys.exit("a SmolLM2 merge part holds a space: cannot use the string form")
        shutil.rmtree(out_dir, ignore_errors=True)
        os.makedirs(out_dir)
        write_json(os.path.join(out_dir, "tokenizer.json"), tj, compact=True)
        for f in ("tokenizer_config.json", "chat_template.jinja"):
            shutil.copyfile(os.path.join(tmp, f), os.path.join(out_dir, f))
    write_json(os.path.join(out_dir, "config.json"), {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "bos_token_id": int(gguf_field(path, "tokenizer.ggml.bos_token_id")),
        "eos_token_id": int(gguf_field(path, "tokenizer.ggml.eos_token_id")),
        "vocab_size": int(gguf_field(path, "llama.vocab_size")),
    })
    check_goldens(os.path.join(out_dir, "tokenizer.json"), "smollm2.jsonl")


def make_gemma(out_dir):
    tok = load_from_gguf("gemma-3-270m-q4_k_m.gguf")
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    tok.save_pretrained(out_dir)
    write_json(os.path.join(out_dir, "config.json"), {
        "architectures": ["Gemma3ForCausalLM"],
        "model_type": "gemma3_text",
        "bos_token_id": 2,
        "eos_token_id": 1,
        "pad_token_id": 0,
        "vocab_size": 262144,
    })
    write_json(os.path.join(out_dir, "generation_config.json"), {
        "bos_token_id": 2,
        "eos_token_id": [1, 106],
        "pad_token_id": 0,
    })
    check_goldens(os.path.join(out_dir, "tokenizer.json"), "gemma3.jsonl")


def make_vectors(out_root):
    for name, model_type in (("gpt-2", "gpt2"), ("starcoder", "gpt_bigcode"),
                             ("llama-spm", "llama"), ("phi-3", "phi3")):
        base = os.path.join(VECTORS, f"ggml-vocab-{name}.gguf")
        tok = load_from_gguf(os.path.basename(base), VECTORS)
        if name == "starcoder":
            tok.backend_tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
                pre_tokenizers.Digits(individual_digits=True),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
        out_dir = os.path.join(out_root, name)
        shutil.rmtree(out_dir, ignore_errors=True)
        os.makedirs(out_dir)
        tok.save_pretrained(out_dir)
        write_json(os.path.join(out_dir, "config.json"), {"model_type": model_type})
        with open(base + ".inp", encoding="utf-8", newline="") as f:
            inp = f.read()
        cases = (inp[: -len(SEP)] if inp.endswith(SEP) else inp).split(SEP)
        with open(base + ".out", encoding="utf-8") as f:
            outs = [[int(x) for x in line.split()] for line in f.read().split("\n")[: len(cases)]]
        hf = Tokenizer.from_file(os.path.join(out_dir, "tokenizer.json"))
        hf.encode_special_tokens = True
        bad = sum(hf.encode(c, add_special_tokens=False).ids != o for c, o in zip(cases, outs))
        print(f"  {name}: {len(cases)} cases, {bad} where HF-from-GGUF differs from upstream")
        if bad and name != "llama-spm":
            sys.exit(f"the saved {name} tokenizer does not reproduce the upstream ids")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-gemma", action="store_true", help="skip the (uncommitted) Gemma 3 dir")
    args = ap.parse_args()
    smol = os.path.join(ROOT, "tests", "data", "hf", "smollm2")
    print(f"SmolLM2 -> {smol}")
    make_smollm2(smol)
    if not args.no_gemma:
        gemma = os.path.join(MODELS, "hf", "gemma-3-270m-tokenizer")
        print(f"Gemma 3 -> {gemma}")
        make_gemma(gemma)
    vectors = os.path.join(MODELS, "hf", "vectors")
    print(f"reference vectors -> {vectors}")
    make_vectors(vectors)


if __name__ == "__main__":
    main()
