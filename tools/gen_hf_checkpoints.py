#!/usr/bin/env python3
"""Tiny Hugging Face checkpoint directories (safetensors, GPTQ, AutoAWQ) and their numpy references.

Run:  .venv/bin/python tools/gen_hf_checkpoints.py OUTDIR [--only NAME ...]
Used by tests/python/test_hf_checkpoint.py, which calls generate() once per session into a pytest
tmp dir. Nothing is committed but this script; everything is deterministic (fixed seeds, no clock,
no network), so two runs write byte-identical files.

Every variant is a directory OUTDIR/<name>/ as a model hub repository holds it:
  config.json                 architectures, sizes, rope_theta, rms_norm_eps, torch_dtype, and for
                              the packed ones the quantization_config their quantizer writes
  *.safetensors               one model.safetensors, or model-0000k-of-00002.safetensors plus
                              model.safetensors.index.json ({"metadata": {"total_size"},
                              "weight_map"})
  tokenizer.json              SmolLM2's real tokenizer (see below)
  tokenizer_config.json       SmolLM2-135M-Instruct's: bos <|im_start|>, eos/pad <|im_end|>,
                              unk <|endoftext|>, no BOS added, its chat template
and each packed (GPTQ/AWQ) variant has OUTDIR/<name>.ref/: the same model with every packed linear
dequantized by numpy to float32 (everything else copied as stored), no quantization_config, a
checkpoint transformers loads as it is. For the float variants the directory is its own reference.

The models (random weights; sizes small enough that a whole variant converts in milliseconds):
  llama  LlamaForCausalLM:  hidden 128, 2 layers, 4 heads, 2 KV heads (head_dim 32), FFN 256,
         vocab 49152, rope_theta 1e5, rms_norm_eps 1e-5, max_position_embeddings 2048
  qwen2  Qwen2ForCausalLM:  the same sizes with q/k/v biases, rope_theta 1e6, rms_norm_eps 1e-6,
         max_position_embeddings 4096
  gemma3 Gemma3ForCausalLM: the same with head_dim 64 (q_proj 256 rows), q/k norms, pre/post
         feed-forward norms, norm weights around 0 (Gemma scales by 1 + w), gelu_pytorch_tanh,
         layer_types [sliding_attention, full_attention] with sliding_window 32,
         query_pre_attn_scalar 48 (not head_dim), rope_theta 1e6, rope_local_base_freq 1e4
Weights are drawn once per architecture (numpy PCG64, seeds 20251203/4/5 for llama/qwen2/gemma3)
with scales that keep activations O(1), make attention neither uniform nor one-hot (q/k
std 0.2, so RoPE's pairing of rows matters) and give logits a spread of a few nats over the
vocabulary (embedding / lm_head std 0.25, logit std about 3). Every variant of an architecture
starts from the same weights, rounded to its storage dtype.

Packed variants quantize the f16-rounded weights with plain round-to-nearest per group (the
method does not matter, only the packing; GPTQ's min-max rules: sym zero = 2^(bits-1), scale =
2·absmax/maxq; asym range includes 0, zero = round(-min/scale); AWQ: zero = -round(min/scale)).
Scales are rounded to fp16 before the integers are computed, so the reference
w[o, i] = float32(scale) * (q - zero) is exact in float32. Layouts, as read from upstream code:
  GPTQ (AutoGPTQ qlinear_cuda_old.py pack(), GPTQModel; vLLM gptq.py: v1 zero offset 1, v2 0):
    qweight int32 [in*bits/32, out]: word [r, o] holds inputs r*pf .. r*pf+pf-1 (pf = 32/bits),
            input r*pf+j in bits [bits*j, bits*j+bits) (low bits first)
    qzeros  int32 [n_groups, out*bits/32]: packed the same way along the output dim; stored
            zero - 1 when checkpoint_format is "gptq" (v1, also the default when the key is
            absent), stored as is for "gptq_v2"
    scales  fp16 [n_groups, out];  g_idx int32 [in] (group of each input column; absent in
            old GPTQ-for-LLaMa files, then i // group)
    w[o, i] = scales[g_idx[i], o] * (q[i, o] - zero[g_idx[i], o])
  AutoAWQ GEMM (awq/modules/linear/gemm.py from_linear(), awq/utils/packing_utils.py):
    qweight int32 [in, out/8]: nibble p (bits 4p..4p+3) of column c holds output c*8 + ORDER[p],
            ORDER = [0, 2, 4, 6, 1, 3, 5, 7];  qzeros int32 [in/group, out/8] packed the same way
            (stored as is);  scales fp16 [in/group, out]
    w[o, i] = (q[i, o] - zero[i // group, o]) * scales[i // group, o]
The packers below write those layouts and an independent unpacker (written from the same
upstream semantics, not by inverting the packer) must give back the reference exactly before a
variant is written; a disagreement stops the script.

The variants (VARIANTS below; "tied" = tie_word_embeddings, no lm_head.weight stored):
  llama-f16 (tied), llama-f16-sharded (untied, 2 shards + index, with the rotary_emb.inv_freq
  buffers old transformers saved), llama-bf16, llama-f32,
  qwen2-f16 (untied), gemma3-bf16 (untied: a random tied Gemma predicts its input token);
  GPTQ 4-bit on llama: sym-g32 (v1), sym-g128 (untied, config without checkpoint_format),
  sym-gall (group_size -1), asym-g64 (v1), v2-asym-g32 (gptq_v2), actorder-g64 (desc_act,
  permuted g_idx), actorder-static (desc_act, g_idx = i // 64), sym-g64-nogidx; GPTQ 8-bit sym
  g64 (llama-gptq-8bit-sym); qwen2-gptq-sym-g32 and gemma3-gptq-sym-g32 (untied);
  AutoAWQ GEMM on llama: awq-g64, awq-g128 (untied).

Edge cases put in on purpose: packed words with the top nibble >= 8 (negative int32) everywhere;
asym zeros at the ends of their range (0 and 15 for gptq_v2 and AWQ; 1 and 15 for v1, whose
stored zero - 1 cannot hold 0 and whose 16 is read differently by AutoGPTQ (nibble + 1) and
GPTQModel (adds 0x11111111 to the word, carrying)); act-order g_idx a seeded permutation
(g_idx[perm[j]] = j // group, so no 32-column block lies in one group) and a static one (desc_act
true, g_idx = i // group); a config without checkpoint_format (v1 by default); a GPTQ file
without g_idx.

SmolLM2's tokenizer: built from models/SmolLM2-135M-Instruct.Q4_1.gguf with the repo's builder
(tools/gen_tokenizer_goldens.py build_byte_level_bpe: vocab, merges, special tokens, and SmolLM2's
real pre-tokenizer Sequence[Digits(individual), ByteLevel], checked there against upstream
vectors), with SmolLM2's ByteLevel post-processor. transformers' GGUF route
(AutoTokenizer.from_pretrained(dir, gguf_file=...)) was not used: it drops the Digits
pre-tokenizer that SmolLM2's tokenizer.json has. llama variants store merges as ["a", "b"] pairs
(tokenizers >= 0.20), qwen2 variants as "a b" strings (older files, SmolLM2's own), so both
spellings are exercised. The tokenizer files are hard links when the filesystem allows.

Made with numpy 2.4.6, tokenizers 0.23.3, gguf 0.19.0 (requirements.txt).
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import shutil
import struct
import sys
import types
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TOKENIZER_GGUF = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"

VOCAB = 49152
HIDDEN = 128
FF = 256
LAYERS = 2
HEADS = 4
KV_HEADS = 2
HEAD_DIM = HIDDEN // HEADS
GEMMA_HEAD_DIM = 64  # Gemma 3's head_dim is its own (q_proj has heads * 64 = 256 rows)

AWQ_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)  # nibble p of a word holds output column c*8 + AWQ_ORDER[p]

ARCHS = {
    "llama": {
        "seed": 20251203,
        "config": {
            "architectures": ["LlamaForCausalLM"], "model_type": "llama",
            "attention_bias": False, "attention_dropout": 0.0, "mlp_bias": False,
            "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
            "hidden_size": HIDDEN, "intermediate_size": FF, "initializer_range": 0.02,
            "max_position_embeddings": 2048, "num_attention_heads": HEADS,
            "num_hidden_layers": LAYERS, "num_key_value_heads": KV_HEADS, "pretraining_tp": 1,
            "rms_norm_eps": 1e-5, "rope_scaling": None, "rope_theta": 100000.0,
            "use_cache": True, "vocab_size": VOCAB,
        },
        "biases": False,
    },
    "qwen2": {
        "seed": 20251204,
        "config": {
            "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
            "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2,
            "hidden_act": "silu", "hidden_size": HIDDEN, "intermediate_size": FF,
            "initializer_range": 0.02, "max_position_embeddings": 4096, "max_window_layers": LAYERS,
            "num_attention_heads": HEADS, "num_hidden_layers": LAYERS,
            "num_key_value_heads": KV_HEADS, "rms_norm_eps": 1e-6, "rope_scaling": None,
            # Qwen2 files carry a sliding_window that use_sliding_window false switches off; a
            # window shorter than the tests' 128-token chunks shows if it is applied anyway.
            "rope_theta": 1000000.0, "sliding_window": 32, "use_sliding_window": False,
            "use_cache": True, "vocab_size": VOCAB,
        },
        "biases": True,
    },
    "gemma3": {
        "seed": 20251205,
        "config": {
            "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
            "attention_bias": False, "attention_dropout": 0.0, "attn_logit_softcapping": None,
            "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 2,
            "final_logit_softcapping": None, "head_dim": GEMMA_HEAD_DIM,
            "hidden_activation": "gelu_pytorch_tanh", "hidden_size": HIDDEN,
            "initializer_range": 0.02, "intermediate_size": FF,
            "layer_types": ["sliding_attention", "full_attention"],
            "max_position_embeddings": 8192, "num_attention_heads": HEADS,
            "num_hidden_layers": LAYERS, "num_key_value_heads": KV_HEADS,
            "query_pre_attn_scalar": 48, "rms_norm_eps": 1e-6, "rope_local_base_freq": 10000.0,
            "rope_scaling": None, "rope_theta": 1000000.0, "sliding_window": 32,
            "use_bidirectional_attention": False, "use_cache": True, "vocab_size": VOCAB,
        },
        "biases": False,
    },
}


@dataclasses.dataclass(frozen=True)
class Variant:
    arch: str                 # key of ARCHS
    dtype: str = "F16"        # storage dtype of the unpacked tensors: F32, F16, BF16
    tied: bool = True         # tie_word_embeddings (no lm_head.weight stored)
    shards: int = 1           # 1: model.safetensors; 2: two shards + index
    inv_freq: bool = False    # store rotary_emb.inv_freq buffers (transformers < 4.31 did)
    quant: dict | None = None  # quantization_config as written to config.json
    act_order: str = ""       # "", "permuted" or "static" (desc_act true, g_idx = i // group)
    g_idx: bool = True        # GPTQ: store g_idx (old GPTQ-for-LLaMa files have none: i // group)


def gptq(bits: int, group: int, sym: bool, fmt: str | None = "gptq",
         desc_act: bool = False) -> dict:
    q = {"quant_method": "gptq", "bits": bits, "group_size": group, "desc_act": desc_act,
         "sym": sym, "static_groups": False, "true_sequential": True, "damp_percent": 0.01,
         "lm_head": False, "meta": {"quantizer": ["folio tools/gen_hf_checkpoints.py"]}}
    if fmt is not None:
        q["checkpoint_format"] = fmt
    return q


def awq(group: int) -> dict:
    return {"quant_method": "awq", "bits": 4, "group_size": group, "zero_point": True,
            "version": "gemm", "modules_to_not_convert": None}


VARIANTS: dict[str, Variant] = {
    "llama-f16": Variant("llama"),
    "llama-f16-sharded": Variant("llama", tied=False, shards=2, inv_freq=True),
    "llama-bf16": Variant("llama", dtype="BF16"),
    "llama-f32": Variant("llama", dtype="F32"),
    "qwen2-f16": Variant("qwen2", tied=False),
    "llama-gptq-sym-g32": Variant("llama", quant=gptq(4, 32, True)),
    "llama-gptq-sym-g128": Variant("llama", tied=False, quant=gptq(4, 128, True, fmt=None)),
    "llama-gptq-sym-gall": Variant("llama", quant=gptq(4, -1, True)),
    "llama-gptq-asym-g64": Variant("llama", quant=gptq(4, 64, False)),
    "llama-gptq-v2-asym-g32": Variant("llama", quant=gptq(4, 32, False, fmt="gptq_v2")),
    "llama-gptq-actorder-g64": Variant("llama", quant=gptq(4, 64, True, desc_act=True),
                                       act_order="permuted"),
    "llama-gptq-actorder-static": Variant("llama", quant=gptq(4, 64, True, desc_act=True),
                                          act_order="static"),
    "llama-gptq-sym-g64-nogidx": Variant("llama", quant=gptq(4, 64, True), g_idx=False),
    "llama-gptq-8bit-sym": Variant("llama", quant=gptq(8, 64, True)),
    "llama-awq-g64": Variant("llama", quant=awq(64)),
    "llama-awq-g128": Variant("llama", tied=False, quant=awq(128)),
    "qwen2-gptq-sym-g32": Variant("qwen2", tied=False, quant=gptq(4, 32, True)),
    "gemma3-bf16": Variant("gemma3", dtype="BF16", tied=False),
    "gemma3-gptq-sym-g32": Variant("gemma3", tied=False, quant=gptq(4, 32, True)),
}

LINEARS = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
           "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")


# ---- float helpers --------------------------------------------------------------------------

def round_f16(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float32)


def f32_to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """Round-to-nearest-even float32 -> bfloat16 bit patterns (finite values: no overflow)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    return ((u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))) >> 16).astype(np.uint16)


def bf16_bits_to_f32(b: np.ndarray) -> np.ndarray:
    return (b.astype(np.uint32) << 16).view(np.float32)


def round_to(x: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "F32":
        return np.asarray(x, dtype=np.float32)
    if dtype == "F16":
        return round_f16(x)
    return bf16_bits_to_f32(f32_to_bf16_bits(x))


# ---- safetensors ----------------------------------------------------------------------------

ST_DTYPES = {"F32": "<f4", "F16": "<f2", "I32": "<i4", "BF16": "<u2"}


def encode_tensor(arr: np.ndarray, dtype: str) -> bytes:
    if dtype == "BF16":
        return f32_to_bf16_bits(arr).tobytes()
    return np.ascontiguousarray(arr, dtype=ST_DTYPES[dtype]).tobytes()


def write_safetensors(path: Path, tensors: dict[str, tuple[str, np.ndarray]]) -> int:
    """Writes {name: (dtype, array)} in name order; returns the data size (for index.json)."""
    header: dict = {"__metadata__": {"format": "pt"}}
    blobs = []
    off = 0
    for name in sorted(tensors):
        dtype, arr = tensors[name]
        b = encode_tensor(arr, dtype)
        header[name] = {"dtype": dtype, "shape": [int(d) for d in arr.shape],
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # data starts 8-aligned, as the safetensors library writes
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    return off


# ---- base weights ---------------------------------------------------------------------------

def base_weights(arch: str) -> dict[str, np.ndarray]:
    """HF-named float32 weights, drawn in a fixed order; lm_head.weight always present."""
    rng = np.random.default_rng(ARCHS[arch]["seed"])
    gemma = arch == "gemma3"
    hd = GEMMA_HEAD_DIM if gemma else HEAD_DIM
    q_rows, kv = HEADS * hd, KV_HEADS * hd
    norm_mean = 0.0 if gemma else 1.0  # Gemma's RMSNorm scales by 1 + weight
    w: dict[str, np.ndarray] = {}

    def normal(shape, std, mean=0.0):
        return (rng.standard_normal(shape, dtype=np.float32) * std + mean).astype(np.float32)

    w["model.embed_tokens.weight"] = normal((VOCAB, HIDDEN), 0.25)
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = normal((HIDDEN,), 0.1, norm_mean)
        w[p + "self_attn.q_proj.weight"] = normal((q_rows, HIDDEN), 0.2)
        w[p + "self_attn.k_proj.weight"] = normal((kv, HIDDEN), 0.2)
        w[p + "self_attn.v_proj.weight"] = normal((kv, HIDDEN), 0.15)
        if ARCHS[arch]["biases"]:
            for proj, n in (("q_proj", q_rows), ("k_proj", kv), ("v_proj", kv)):
                w[p + f"self_attn.{proj}.bias"] = normal((n,), 0.5)
        if gemma:
            w[p + "self_attn.q_norm.weight"] = normal((hd,), 0.1)
            w[p + "self_attn.k_norm.weight"] = normal((hd,), 0.1)
        w[p + "self_attn.o_proj.weight"] = normal((HIDDEN, q_rows), 0.15)
        w[p + "post_attention_layernorm.weight"] = normal((HIDDEN,), 0.1, norm_mean)
        if gemma:
            w[p + "pre_feedforward_layernorm.weight"] = normal((HIDDEN,), 0.1)
            w[p + "post_feedforward_layernorm.weight"] = normal((HIDDEN,), 0.1)
        w[p + "mlp.gate_proj.weight"] = normal((FF, HIDDEN), 0.15)
        w[p + "mlp.up_proj.weight"] = normal((FF, HIDDEN), 0.15)
        w[p + "mlp.down_proj.weight"] = normal((HIDDEN, FF), 0.1)
    w["model.norm.weight"] = normal((HIDDEN,), 0.1, norm_mean)
    w["lm_head.weight"] = normal((VOCAB, HIDDEN), 0.25)
    return w


# ---- quantization (round to nearest) --------------------------------------------------------

@dataclasses.dataclass
class Quantized:
    q: np.ndarray      # int64 [out, in], 0 .. 2^bits - 1
    zero: np.ndarray   # int64 [n_groups, out]: the real zero point (what dequantization subtracts)
    scale: np.ndarray  # float16 [n_groups, out]
    g_idx: np.ndarray  # int32 [in]

    def dequantize(self) -> np.ndarray:
        """float32 [out, in]: exact (an fp16 times an integer of <= 9 bits fits float32)."""
        s = self.scale.astype(np.float32)[self.g_idx].T        # [out, in]
        z = self.zero[self.g_idx].T                            # [out, in]
        return s * (self.q - z).astype(np.float32)


def group_index(n_in: int, group: int, act_order: str, seed_name: str) -> np.ndarray:
    g = n_in if group == -1 else group
    if act_order == "permuted":
        perm = np.random.default_rng(zlib.crc32(seed_name.encode())).permutation(n_in)
        g_idx = np.empty(n_in, dtype=np.int32)
        g_idx[perm] = np.arange(n_in) // g  # column perm[j] is the j-th in quantization order
        return g_idx
    return (np.arange(n_in) // g).astype(np.int32)


def quantize(w: np.ndarray, g_idx: np.ndarray, bits: int, method: str) -> Quantized:
    """method: "sym" / "asym" (GPTQ's min-max rules) or "awq" (AutoAWQ's)."""
    maxq = (1 << bits) - 1
    n_out, _ = w.shape
    n_groups = int(g_idx.max()) + 1
    zero = np.zeros((n_groups, n_out), dtype=np.int64)
    scale = np.zeros((n_groups, n_out), dtype=np.float16)
    q = np.zeros(w.shape, dtype=np.int64)
    w64 = w.astype(np.float64)
    for g in range(n_groups):
        cols = np.flatnonzero(g_idx == g)
        x = w64[:, cols]
        if method == "sym":
            amax = np.abs(x).max(1)
            s = np.where(amax > 0, 2 * amax / maxq, 1.0)
            z = np.full(n_out, (maxq + 1) // 2)
        elif method == "asym":
            lo, hi = np.minimum(x.min(1), 0), np.maximum(x.max(1), 0)
            s = np.where(hi > lo, (hi - lo) / maxq, 1.0)
            z = np.round(-lo / s).astype(np.int64)
        else:  # awq
            lo, hi = x.min(1), x.max(1)
            s = np.maximum(hi - lo, 1e-5) / maxq
            z = np.clip(-np.round(lo / s), 0, maxq).astype(np.int64)
        s16 = s.astype(np.float16)
        scale[g] = s16
        zero[g] = z
        q[:, cols] = np.clip(np.round(x / s16.astype(np.float64)[:, None]) + z[:, None], 0, maxq)
    return Quantized(q, zero, scale, g_idx)


def force_zero_edges(qz: Quantized, w: np.ndarray, lo: int, hi: int) -> None:
    """Sets a few zeros to the ends of the storable range (requantizing those groups' rows)."""
    n_groups, n_out = qz.zero.shape
    maxq = 15
    for k, (g, o, z) in enumerate([(0, 0, lo), (0, 9, hi), (n_groups - 1, n_out - 1, lo),
                                   (n_groups - 1, n_out // 2 + 3, hi)]):
        cols = np.flatnonzero(qz.g_idx == g)
        qz.zero[g, o] = z
        s = np.float64(qz.scale[g, o])
        qz.q[o, cols] = np.clip(np.round(w[o, cols] / s) + z, 0, maxq)


# ---- packing (writers) and unpacking (independent readers, for the self-check) --------------

def pack_along_rows(vals: np.ndarray, bits: int) -> np.ndarray:
    """[n, m] -> int32 [n*bits/32, m]: word r holds rows r*pf + j at bits*j (GPTQ qweight)."""
    pf = 32 // bits
    v = vals.astype(np.uint64).reshape(vals.shape[0] // pf, pf, vals.shape[1])
    word = np.zeros((v.shape[0], v.shape[2]), dtype=np.uint64)
    for j in range(pf):
        word |= v[:, j, :] << np.uint64(bits * j)
    return word.astype(np.uint32).view(np.int32)


def pack_along_cols(vals: np.ndarray, bits: int, order=None) -> np.ndarray:
    """[n, m] -> int32 [n, m*bits/32]: word c holds column c*pf + order[j] at bits*j."""
    pf = 32 // bits
    order = list(range(pf)) if order is None else list(order)
    v = vals.astype(np.uint64).reshape(vals.shape[0], vals.shape[1] // pf, pf)
    word = np.zeros(v.shape[:2], dtype=np.uint64)
    for j in range(pf):
        word |= v[:, :, order[j]] << np.uint64(bits * j)
    return word.astype(np.uint32).view(np.int32)


def unpack_gptq(t: dict[str, np.ndarray], bits: int, v1: bool, group: int) -> np.ndarray:
    """float32 [out, in] from qweight/qzeros/scales/g_idx, element by element as AutoGPTQ reads."""
    qweight = t["qweight"].view(np.uint32)
    qzeros = t["qzeros"].view(np.uint32)
    mask = (1 << bits) - 1
    pf = 32 // bits
    n_in = qweight.shape[0] * pf
    i = np.arange(n_in)
    q = (qweight[i // pf, :] >> (bits * (i % pf))[:, None].astype(np.uint32)) & mask  # [in, out]
    o = np.arange(qzeros.shape[1] * pf)
    z = (qzeros[:, o // pf] >> (bits * (o % pf)).astype(np.uint32)) & mask             # [G, out]
    z = z.astype(np.int64) + (1 if v1 else 0)
    if "g_idx" in t:
        g = t["g_idx"].astype(np.int64)
    else:  # one group per group_size inputs (all of them for group_size -1)
        g = i // (n_in if group == -1 else group)
    s = t["scales"].astype(np.float32)
    return (s[g] * (q.astype(np.int64) - z[g]).astype(np.float32)).T


def unpack_awq(t: dict[str, np.ndarray], group: int) -> np.ndarray:
    """float32 [out, in] from AutoAWQ GEMM qweight/qzeros/scales."""
    qweight = t["qweight"].view(np.uint32)
    qzeros = t["qzeros"].view(np.uint32)
    n_in, n_words = qweight.shape
    out_col = np.empty(n_words * 8, dtype=np.int64)  # nibble index -> output column
    shifts = np.empty(n_words * 8, dtype=np.uint32)
    for c in range(n_words):
        for p in range(8):
            out_col[c * 8 + p] = c * 8 + AWQ_ORDER[p]
            shifts[c * 8 + p] = 4 * p
    words = np.repeat(np.arange(n_words), 8)
    q = np.empty((n_in, n_words * 8), dtype=np.int64)
    q[:, out_col] = (qweight[:, words] >> shifts) & 0xF
    z = np.empty((qzeros.shape[0], n_words * 8), dtype=np.int64)
    z[:, out_col] = (qzeros[:, words] >> shifts) & 0xF
    g = np.arange(n_in) // group
    s = t["scales"].astype(np.float32)
    return ((q - z[g]).astype(np.float32) * s[g]).T


def packed_tensors(v: Variant, qz: Quantized) -> dict[str, tuple[str, np.ndarray]]:
    """{suffix: (dtype, array)} as the quantizer stores one linear."""
    qc = v.quant
    bits = qc["bits"]
    if qc["quant_method"] == "awq":
        return {"qweight": ("I32", pack_along_cols(qz.q.T, 4, AWQ_ORDER)),
                "qzeros": ("I32", pack_along_cols(qz.zero, 4, AWQ_ORDER)),
                "scales": ("F16", qz.scale)}
    v1 = qc.get("checkpoint_format", "gptq") == "gptq"
    stored_zero = qz.zero - (1 if v1 else 0)
    assert stored_zero.min() >= 0 and stored_zero.max() < (1 << bits), "zero not storable"
    out = {"qweight": ("I32", pack_along_rows(qz.q.T, bits)),
           "qzeros": ("I32", pack_along_cols(stored_zero, bits)),
           "scales": ("F16", qz.scale)}
    if v.g_idx:
        out["g_idx"] = ("I32", qz.g_idx)
    return out


def check_unpack(v: Variant, packed: dict[str, tuple[str, np.ndarray]], ref: np.ndarray,
                 what: str) -> None:
    t = {k: (a.astype(np.float16) if d == "F16" else a) for k, (d, a) in packed.items()}
    qc = v.quant
    if qc["quant_method"] == "awq":
        got = unpack_awq(t, qc["group_size"])
    else:
        got = unpack_gptq(t, qc["bits"], qc.get("checkpoint_format", "gptq") == "gptq",
                          qc["group_size"])
    if not np.array_equal(got.view(np.uint32), ref.view(np.uint32)):
        sys.exit(f"gen_hf_checkpoints: {what}: the unpacker disagrees with the packer")


# ---- tokenizer ------------------------------------------------------------------------------

def build_tokenizer_files(dest: Path) -> None:
    """Writes tokenizer.json (pair merges), tokenizer-str-merges.json and tokenizer_config.json."""
    spec = importlib.util.spec_from_file_location(
        "gen_tokenizer_goldens", ROOT / "tools" / "gen_tokenizer_goldens.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not TOKENIZER_GGUF.exists():
        sys.exit(f"gen_hf_checkpoints: {TOKENIZER_GGUF} is missing: run scripts/setup")
    import gguf
    from tokenizers import processors
    r = gguf.GGUFReader(str(TOKENIZER_GGUF))  # parsed once (seconds): the builder reuses it
    mod.gguf = types.SimpleNamespace(GGUFReader=lambda _path: r)
    tok = mod.build_byte_level_bpe(str(TOKENIZER_GGUF), digits_individual=True)
    tok.post_processor = processors.ByteLevel(trim_offsets=False)  # SmolLM2's: adds nothing
    dest.mkdir(parents=True, exist_ok=True)
    tok.save(str(dest / "tokenizer.json"))
    j = json.loads((dest / "tokenizer.json").read_text(encoding="utf-8"))
    j["model"]["merges"] = [" ".join(m) for m in j["model"]["merges"]]
    (dest / "tokenizer-str-merges.json").write_text(
        json.dumps(j, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")

    tokens = r.fields["tokenizer.ggml.tokens"].contents()
    token_types = r.fields["tokenizer.ggml.token_type"].contents()
    template = r.fields["tokenizer.chat_template"].contents()
    special = [i for i, t in enumerate(token_types) if t in (2, 3)]
    cfg = {
        "add_prefix_space": False,
        "added_tokens_decoder": {
            str(i): {"content": tokens[i], "lstrip": False, "normalized": False,
                     "rstrip": False, "single_word": False, "special": True} for i in special},
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
        "bos_token": "<|im_start|>",
        "chat_template": template,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "model_max_length": 8192,
        "pad_token": "<|im_end|>",
        "tokenizer_class": "GPT2Tokenizer",
        "unk_token": "<|endoftext|>",
        "vocab_size": VOCAB,
    }
    (dest / "tokenizer_config.json").write_text(json.dumps(cfg, ensure_ascii=False, indent=2)
                                                + "\n", encoding="utf-8")


def link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


# ---- one variant ----------------------------------------------------------------------------

def write_checkpoint(d: Path, config: dict, tensors: dict[str, tuple[str, np.ndarray]],
                     shards: int, tok_dir: Path, str_merges: bool) -> None:
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    link_or_copy(tok_dir / ("tokenizer-str-merges.json" if str_merges else "tokenizer.json"),
                 d / "tokenizer.json")
    link_or_copy(tok_dir / "tokenizer_config.json", d / "tokenizer_config.json")
    if shards == 1:
        write_safetensors(d / "model.safetensors", tensors)
        return
    # Shard 1: the embedding and layer 0; shard 2: the rest (as split by size on the hub).
    names = sorted(tensors)
    first = [n for n in names if n.startswith("model.embed_tokens") or
             n.startswith("model.layers.0.")]
    parts = [first, [n for n in names if n not in first]]
    weight_map, total = {}, 0
    for k, part in enumerate(parts, 1):
        fname = f"model-{k:05d}-of-{len(parts):05d}.safetensors"
        total += write_safetensors(d / fname, {n: tensors[n] for n in part})
        weight_map.update({n: fname for n in part})
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    (d / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")


def build_variant(name: str, v: Variant, base: dict[str, np.ndarray]) -> tuple[dict, dict, dict]:
    """(config, stored tensors, reference tensors) of one variant."""
    arch = ARCHS[v.arch]
    config = dict(arch["config"])
    config["tie_word_embeddings"] = v.tied
    config["torch_dtype"] = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[v.dtype]
    stored: dict[str, tuple[str, np.ndarray]] = {}
    ref: dict[str, tuple[str, np.ndarray]] = {}
    for hf_name, w in base.items():
        if hf_name == "lm_head.weight" and v.tied:
            continue
        linear = hf_name.endswith(".weight") and any(f".{m}." in hf_name for m in LINEARS)
        if v.quant is None or not linear:
            wr = round_to(w, v.dtype)
            stored[hf_name] = (v.dtype, wr)
            ref[hf_name] = (v.dtype, wr)
            continue
        qc = v.quant
        w16 = round_f16(w)
        g_idx = group_index(w.shape[1], qc["group_size"], v.act_order, f"{name}/{hf_name}")
        method = "awq" if qc["quant_method"] == "awq" else ("sym" if qc["sym"] else "asym")
        qz = quantize(w16, g_idx, qc["bits"], method)
        if method != "sym":
            v1 = qc["quant_method"] == "gptq" and qc.get("checkpoint_format", "gptq") == "gptq"
            force_zero_edges(qz, w16, 1 if v1 else 0, 15)
        dq = qz.dequantize()
        prefix = hf_name[: -len("weight")]
        packed = packed_tensors(v, qz)
        check_unpack(v, packed, dq, f"{name} {hf_name}")
        for suffix, t in packed.items():
            stored[prefix + suffix] = t
        ref[hf_name] = ("F32", dq)
    if v.inv_freq:  # a buffer, not a weight: converters skip it
        hd = config["hidden_size"] // config["num_attention_heads"]
        inv = (1.0 / config["rope_theta"] ** (np.arange(0, hd, 2) / hd)).astype(np.float32)
        for i in range(LAYERS):
            stored[f"model.layers.{i}.self_attn.rotary_emb.inv_freq"] = ("F32", inv)
    if v.quant is not None:
        config["quantization_config"] = v.quant
    return config, stored, ref


def generate(outdir: str | os.PathLike, names=None) -> dict:
    """Writes the variants (all, or `names`) and OUTDIR/manifest.json; returns the manifest."""
    chosen = list(VARIANTS) if names is None else list(names)
    unknown = [n for n in chosen if n not in VARIANTS]
    if unknown:
        sys.exit(f"gen_hf_checkpoints: unknown variants {unknown}; known: {list(VARIANTS)}")
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    tok_dir = out / "_tokenizer"
    build_tokenizer_files(tok_dir)
    bases: dict[str, dict[str, np.ndarray]] = {}
    manifest = {"generator": "tools/gen_hf_checkpoints.py", "variants": {}}
    for name in chosen:
        v = VARIANTS[name]
        if v.arch not in bases:
            bases[v.arch] = base_weights(v.arch)
        config, stored, ref = build_variant(name, v, bases[v.arch])
        d = out / name
        write_checkpoint(d, config, stored, v.shards, tok_dir, str_merges=v.arch == "qwen2")
        ref_dir = d
        if v.quant is not None:
            ref_dir = out / f"{name}.ref"
            ref_config = {k: val for k, val in config.items() if k != "quantization_config"}
            ref_config["torch_dtype"] = "float32"
            write_checkpoint(ref_dir, ref_config, ref, 1, tok_dir, str_merges=v.arch == "qwen2")
        manifest["variants"][name] = {
            "dir": d.name, "ref": ref_dir.name,  # relative to OUTDIR
            "arch": v.arch, "dtype": v.dtype,
            "tied": v.tied, "shards": v.shards, "act_order": v.act_order,
            "quantization_config": v.quant, "config": config,
        }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    for info in manifest["variants"].values():
        info["dir"], info["ref"] = str(out / info["dir"]), str(out / info["ref"])
    return manifest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--only", nargs="+", metavar="NAME", help=f"a subset of {list(VARIANTS)}")
    a = ap.parse_args()
    m = generate(a.outdir, a.only)
    for name, info in m["variants"].items():
        print(f"{name:28s} {info['dir']}" + (f"  (reference {info['ref']})"
                                             if info["ref"] != info["dir"] else ""))


if __name__ == "__main__":
    main()
