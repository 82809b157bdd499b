#!/usr/bin/env python3
"""A tiny random Qwen2 model and its HF reference logits, for tests/model/qwen2_test.cpp.

folio's `qwen2` family (src/model/qwen2.cpp) differs from `llama` in Q/K/V
biases and NeoX-style RoPE with unpermuted Q/K rows. This script checks both
against HF `transformers` without any downloaded model:

  * builds a Qwen2ForCausalLM with random weights (fixed seed): every matrix,
    the q/k/v biases (HF would initialise them to zero, which would hide a
    missing bias) and the RMSNorm weights (random around 1) are drawn here;
  * rounds every weight to float16 and loads the rounded values back into
    the HF model, so HF and folio compute with identical weights;
  * writes tests/data/model/qwen2-tiny.gguf as llama.cpp's converter would
    (architecture `qwen2`, F16 matrices, F32 norms and biases, Q/K rows NOT
    permuted). No tokenizer: folio reads the vocabulary size from
    qwen2.vocab_size when tokenizer.ggml.tokens is absent;
  * runs HF (float32, eager attention) on a few fixed random id sequences and
    writes every position's full logits to tests/data/model/qwen2-tiny.json
    (rounded to 7 significant digits);
  * does it all again with YaRN RoPE scaling (factor 4 over an original
    context of 64; the same weights and ids) as qwen2-yarn-tiny.{gguf,json},
    with the GGUF keys llama.cpp's converter writes for it
    (rope.scaling.type/factor/original_context_length).

Deterministic and re-runnable:
  .venv/bin/python tools/gen_qwen2_tiny.py
(the committed files were made with torch 2.15.0 (CPU), transformers 5.24.0,
gguf 0.19.0, numpy 2.4.6; see requirements.txt).
"""
from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import gguf
import numpy as np
import torch
import transformers
from transformers import Qwen2Config, Qwen2ForCausalLM

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "model"
STEM = "qwen2-tiny"

VOCAB = 128
HIDDEN = 64
FF = 96
LAYERS = 2
HEADS = 4
KV_HEADS = 2
CTX = 256
ROPE_THETA = 10000.0
EPS = 1e-6
SEQ_LENGTHS = (24, 40, 7, 120)  # one prefill each in the test, and all together as a ragged batch
YARN_FACTOR = 4.0
YARN_ORIGINAL_CTX = 64  # the 120-token case runs past it

# stem -> HF rope_parameters
VARIANTS = {
    STEM: {"rope_type": "default", "rope_theta": ROPE_THETA},
    "qwen2-yarn-tiny": {"rope_type": "yarn", "rope_theta": ROPE_THETA, "factor": YARN_FACTOR,
                        "original_max_position_embeddings": YARN_ORIGINAL_CTX},
}


def build_model(rope_parameters: dict) -> Qwen2ForCausalLM:
    config = Qwen2Config(
        vocab_size=VOCAB,
        hidden_size=HIDDEN,
        intermediate_size=FF,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        max_position_embeddings=CTX,
        rope_parameters=dict(rope_parameters),
        rms_norm_eps=EPS,
        tie_word_embeddings=False,
        use_sliding_window=False,
        attn_implementation="eager",
    )
    model = Qwen2ForCausalLM(config).to(torch.float32).eval()

    # Every parameter drawn here (in name order, one generator), with scales
    # chosen so that activations stay O(1), attention is neither uniform nor
    # one-hot, and the biases move q/k/v by a visible amount.
    g = torch.Generator().manual_seed(20250611)

    def scale(name: str) -> tuple[float, float]:  # (mean, std)
        if name.endswith("norm.weight"):
            return 1.0, 0.1
        if name.endswith(".bias"):
            return 0.0, 0.5
        if "embed_tokens" in name:
            return 0.0, 1.0
        if "q_proj" in name or "k_proj" in name:
            return 0.0, 0.2
        if "lm_head" in name:
            return 0.0, 0.3
        return 0.0, 0.15

    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            mean, std = scale(name)
            r = torch.randn(p.shape, generator=g, dtype=torch.float32) * std + mean
            p.copy_(r.to(torch.float16).to(torch.float32))  # HF computes on the f16-rounded values
    return model


def f16(t: torch.Tensor) -> np.ndarray:
    return t.detach().to(torch.float16).numpy()


def f32(t: torch.Tensor) -> np.ndarray:
    return t.detach().to(torch.float32).numpy()


def write_gguf(model: Qwen2ForCausalLM, path: Path, stem: str, rope: dict) -> None:
    sd = model.state_dict()
    w = gguf.GGUFWriter(str(path), "qwen2")  # writes general.architecture
    w.add_name(f"{stem} (random weights, tools/gen_qwen2_tiny.py)")
    w.add_vocab_size(VOCAB)
    w.add_context_length(CTX)
    w.add_embedding_length(HIDDEN)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(FF)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_layer_norm_rms_eps(EPS)
    w.add_rope_freq_base(ROPE_THETA)
    if rope["rope_type"] == "yarn":
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(rope["factor"])
        w.add_rope_scaling_orig_ctx_len(rope["original_max_position_embeddings"])
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)

    # Matrices: HF Linear weight [out, in] is GGUF dims {in, out}, same bytes.
    w.add_tensor("token_embd.weight", f16(sd["model.embed_tokens.weight"]))
    for i in range(LAYERS):
        hf = f"model.layers.{i}."
        blk = f"blk.{i}."
        w.add_tensor(blk + "attn_norm.weight", f32(sd[hf + "input_layernorm.weight"]))
        for short, proj in (("q", "q_proj"), ("k", "k_proj"), ("v", "v_proj")):
            w.add_tensor(blk + f"attn_{short}.weight", f16(sd[hf + f"self_attn.{proj}.weight"]))
            w.add_tensor(blk + f"attn_{short}.bias", f32(sd[hf + f"self_attn.{proj}.bias"]))
        w.add_tensor(blk + "attn_output.weight", f16(sd[hf + "self_attn.o_proj.weight"]))
        w.add_tensor(blk + "ffn_norm.weight", f32(sd[hf + "post_attention_layernorm.weight"]))
        w.add_tensor(blk + "ffn_gate.weight", f16(sd[hf + "mlp.gate_proj.weight"]))
        w.add_tensor(blk + "ffn_up.weight", f16(sd[hf + "mlp.up_proj.weight"]))
        w.add_tensor(blk + "ffn_down.weight", f16(sd[hf + "mlp.down_proj.weight"]))
    w.add_tensor("output_norm.weight", f32(sd["model.norm.weight"]))
    w.add_tensor("output.weight", f16(sd["lm_head.weight"]))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def sig7(x: float) -> float:
    return float(f"{x:.7g}")


@torch.no_grad()
def main() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)
    OUT.mkdir(parents=True, exist_ok=True)

    for stem, rope in VARIANTS.items():
        write_variant(stem, rope)


@torch.no_grad()
def write_variant(stem: str, rope: dict) -> None:
    model = build_model(rope)
    for name, p in model.named_parameters():  # all weights random, none left at HF's init
        assert torch.count_nonzero(p) == p.numel(), name
    write_gguf(model, OUT / f"{stem}.gguf", stem, rope)

    rng = np.random.default_rng(7)
    cases = []
    for n, length in enumerate(SEQ_LENGTHS):
        ids = [int(t) for t in rng.integers(0, VOCAB, size=length)]
        logits = model(torch.tensor([ids]), use_cache=False).logits[0].to(torch.float32)
        assert logits.shape == (length, VOCAB)
        cases.append({
            "name": f"seq{n}_len{length}",
            "ids": ids,
            "logits": [[sig7(v) for v in row] for row in logits.tolist()],
        })

    meta = {
        "generator": "tools/gen_qwen2_tiny.py",
        "model": f"{stem}.gguf",
        "rope_parameters": rope,
        "vocab_size": VOCAB,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "gguf": importlib.metadata.version("gguf"),
        "cases": cases,
    }
    (OUT / f"{stem}.json").write_text(json.dumps(meta, separators=(",", ":")) + "\n")
    size = (OUT / f"{stem}.gguf").stat().st_size
    print(f"wrote {stem}.gguf ({size} bytes) and {stem}.json ({len(cases)} cases)")


if __name__ == "__main__":
    main()
