#!/usr/bin/env python3
"""Generate tests/data/tokenizer/spm_gemma_cases.json: Gemma 3 SentencePiece encodings of plain
text, for tests/tokenizer/spm_test.cpp (the SpmEncoder alone: no special-token parsing, no BOS).

Run:  /work/main/.venv/bin/python tools/gen_spm_cases.py     (about 2-3 minutes: the gguf
      package parses the 262,144-entry vocabulary slowly)

Two independent references, both built from the GGUF's tokenizer metadata:
  * HF: transformers' GGUF tokenizer converter (what AutoTokenizer.from_pretrained(dir,
    gguf_file=...) uses; called directly because transformers' GGUF reader needs torch), with
    encode_special_tokens=True so special-token text is plain text.
  * SentencePiece: a BPE ModelProto holding the GGUF's pieces, scores and types (user-defined
    pieces spelled with U+2581 for ' ' as in the original model; identity normalizer, no dummy
    prefix, whitespace escaping, byte fallback), encoded by the sentencepiece library.

They agree on every case except runs of 32 or more spaces: Gemma's user-defined tokens cover
runs of 2..31 spaces; SentencePiece (and llama.cpp) take them leftmost-longest (31 + 31 + ...),
while the HF conversion rebuilds them as BPE merges and pairs them up (16 + 16 + ...). "ids" is
the SentencePiece result, which Gemma's own tokenizer library gives; where HF differs its ids
are kept as "hf_ids". Any other disagreement stops the script.
"""
import json
import os
import re
import sys

import gguf
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb
from transformers.integrations.gguf.gguf_tokenizer_mapping import (
    GGUF_TOKENIZER_MAPPING,
    convert_gguf_tokenizer,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = "gemma-3-270m-q4_k_m.gguf"
OUT = os.path.join(ROOT, "tests", "data", "tokenizer", "spm_gemma_cases.json")

CASES = [
    "Hello world", " Hello world", "Hello  world", "   leading", "trailing   ", "x", " ", "  ",
    "tab\tsep", "\t\t\tindent", "a\n\nb", "\n\n\n\n", "line1\nline2\r\nline3\r",
    "code:\n    return x  # comment", "def f():\n\tpass\n", "<html><body>hi</body></html>",
    "</iframe>abc", "[multimodal]", "a[multimodal]b", "> </", "x>  </b> y",
    "I saw \U0001F999\U0001F999 and \U0001F468\u200D\U0001F469\u200D\U0001F467 today",
    "\u4f60\u597d\uff0c\u4e16\u754c\uff01", "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645",
    "\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e", "e\u0301cole",
    "\ufb01ne ligature", "1234567890 3.14159 -42", "don't USA's I'm", "hello\u00a0world",
    "a\u3000b", "\u0000null", "\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac",
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043a\u0430\u043a \u0434\u0435\u043b\u0430?",
    "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8", "\ud55c\uad6d\uc5b4",
    "   \n   \n\t  \t", "$x^2 + y^2 = z^2$", "https://example.com/path?q=1&r=2",
    "camelCaseIdentifier snake_case_name", "!!!!!!", "....", "<start_of_turn>user", "<unk>",
    "<0x41>", "\u2581already escaped", "a \u2581 b", "\U000e0100\U0010fffd private use",
    "The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs!",
    " " * 31 + "x", " " * 41 + "forty-one spaces", "\n" * 40, "\t" * 33 + "x",
]


def read_gguf(path):
    r = gguf.GGUFReader(path)

    def get(key):
        f = r.fields.get(key)
        if f is None:
            return None
        if len(f.types) > 1 and f.types[0] == gguf.GGUFValueType.ARRAY:  # fast path for arrays
            parts = [f.parts[i] for i in f.data]
            if f.types[1] == gguf.GGUFValueType.STRING:
                return [bytes(p).decode("utf-8") for p in parts]
            return [p[0].item() for p in parts]
        return f.contents()

    md = {k: get(k) for k in r.fields if k.startswith("tokenizer.")}
    return get("general.architecture"), md


def hf_tokenizer(arch, md):
    d = {name: md["tokenizer." + key] for key, name in GGUF_TOKENIZER_MAPPING["tokenizer"].items()
         if "tokenizer." + key in md}
    tok, _ = convert_gguf_tokenizer(arch, d)
    tok.encode_special_tokens = True  # special-token text is plain text here
    return tok


def sentencepiece_processor(md):
    m = pb.ModelProto()
    m.trainer_spec.model_type = pb.TrainerSpec.BPE
    m.trainer_spec.byte_fallback = True
    m.trainer_spec.unk_id = md["tokenizer.ggml.unknown_token_id"]
    m.trainer_spec.bos_id = md["tokenizer.ggml.bos_token_id"]
    m.trainer_spec.eos_id = md["tokenizer.ggml.eos_token_id"]
    m.trainer_spec.pad_id = md["tokenizer.ggml.padding_token_id"]
    m.normalizer_spec.name = "identity"
    m.normalizer_spec.add_dummy_prefix = bool(md.get("tokenizer.ggml.add_space_prefix", False))
    m.normalizer_spec.remove_extra_whitespaces = False
    m.normalizer_spec.escape_whitespaces = True
    for text, score, ttype in zip(md["tokenizer.ggml.tokens"], md["tokenizer.ggml.scores"],
                                  md["tokenizer.ggml.token_type"]):
        p = m.pieces.add()
        p.piece = text.replace(" ", "\u2581") if ttype == 4 else text  # USER_DEFINED
        p.score = score
        p.type = ttype
    return spm.SentencePieceProcessor(model_proto=m.SerializeToString())


def main():
    path = os.path.join(ROOT, "models", MODEL)
    if not os.path.exists(path):
        sys.exit(f"{path} is missing: run scripts/setup first")
    arch, md = read_gguf(path)
    if md["tokenizer.ggml.model"] != "llama":
        sys.exit(f"{MODEL} is not a SentencePiece ('llama') vocabulary")
    hf = hf_tokenizer(arch, md)
    sp = sentencepiece_processor(md)
    long_space_run = re.compile(" {32,}")
    cases = []
    for text in CASES:
        sp_ids = sp.encode(text)
        hf_ids = hf.encode(text, add_special_tokens=False).ids
        case = {"text": text, "ids": sp_ids}
        if hf_ids != sp_ids:
            if not long_space_run.search(text):
                sys.exit(f"references disagree on {text!r}: HF {hf_ids} SentencePiece {sp_ids}")
            case["hf_ids"] = hf_ids
        cases.append(case)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"model": MODEL, "add_space_prefix": False,
                   "reference": "sentencepiece BPE model built from the GGUF; hf_ids: "
                                "transformers GGUF converter where it differs (space runs >= 32)",
                   "cases": cases}, f, ensure_ascii=True, indent=1)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {OUT} "
          f"({sum('hf_ids' in c for c in cases)} where HF differs)")


if __name__ == "__main__":
    main()
