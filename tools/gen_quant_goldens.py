#!/usr/bin/env python3
"""Golden files for folio's reference dequantizers (tests/quant/).

For every tensor type the quant module supports, writes to tests/data/quant/:
  <TYPE>.bin  raw blocks as stored in a GGUF file
  <TYPE>.f32  the expected dequantized values, float32 little-endian

Expected values come from the `gguf` Python package (gguf.quants.dequantize),
the independent reference; Q8_K, which gguf-py does not implement, uses the
one-line numpy expression of ggml's dequantize_row_q8_K (d * q in float32).

Blocks are random bytes from a fixed seed per type, with every scale field
(fp16 d / dmin / m) overwritten by a controlled value: mostly finite values of
typical magnitude with random sign, plus edge cases in the first blocks
(zero, smallest and largest subnormal, largest finite, negative) and blocks
whose quant bytes are all 0x00 or all 0xFF. Scales stay finite so that the
expected values never depend on how a CPU picks NaN payloads.

Re-runnable: `.venv/bin/python tools/gen_quant_goldens.py` rewrites the same
bytes (the outputs depend only on the seeds and the gguf package).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf.constants import GGML_QUANT_SIZES
from gguf.quants import dequantize

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "quant"

# type -> (byte offsets of its fp16 scale fields, number of blocks)
# Offsets follow the block structs in src/quant/block_*.h (ggml-common.h).
QUANT_TYPES = {
    T.Q4_0: ((0,), 64),
    T.Q4_1: ((0, 2), 64),
    T.Q5_0: ((0,), 64),
    T.Q5_1: ((0, 2), 64),
    T.Q8_0: ((0,), 64),
    T.Q2_K: ((80, 82), 24),
    T.Q3_K: ((108,), 24),
    T.Q4_K: ((0, 2), 24),
    T.Q5_K: ((0, 2), 24),
    T.Q6_K: ((208,), 24),
}

# fp16 bit patterns for the first blocks' scales: zero, -zero, smallest and
# largest subnormal, smallest normal, largest finite, and negative values.
EDGE_SCALES = [0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0xBC00, 0xFBFF, 0x8001]


def random_scales(rng: np.random.Generator, n: int) -> np.ndarray:
    """n finite fp16 values: magnitude 2^U(-16, 2), random sign."""
    mag = np.exp2(rng.uniform(-16.0, 2.0, size=n)).astype(np.float32)
    sign = np.where(rng.random(n) < 0.3, -1.0, 1.0).astype(np.float32)
    return (mag * sign).astype(np.float16).view(np.uint16)


def quant_blocks(qtype: T, scale_offsets: tuple[int, ...], n_blocks: int) -> np.ndarray:
    _, type_size = GGML_QUANT_SIZES[qtype]
    rng = np.random.default_rng(1000 + int(qtype))
    blocks = rng.integers(0, 256, size=(n_blocks, type_size), dtype=np.uint8)
    blocks[len(EDGE_SCALES)] = 0x00  # all quant bytes zero (scales set below)
    blocks[len(EDGE_SCALES) + 1] = 0xFF  # all quant bytes one
    for k, off in enumerate(scale_offsets):
        scales = random_scales(rng, n_blocks)
        # Edge scales on d (k == 0) in the first blocks; the mins get them
        # rotated by one so that d and dmin edge cases are not always paired.
        for b, s in enumerate(EDGE_SCALES):
            scales[(b + k) % len(EDGE_SCALES)] = s
        blocks[:, off:off + 2] = scales.reshape(-1, 1).view(np.uint8).reshape(n_blocks, 2)
    return blocks


def q8_k_blocks() -> tuple[np.ndarray, np.ndarray]:
    """Q8_K: float32 d | int8 qs[256] | int16 bsums[16]. gguf-py lacks it."""
    n_blocks, type_size = 16, GGML_QUANT_SIZES[T.Q8_K][1]
    rng = np.random.default_rng(1000 + int(T.Q8_K))
    blocks = rng.integers(0, 256, size=(n_blocks, type_size), dtype=np.uint8)
    d = (np.exp2(rng.uniform(-20.0, 4.0, size=n_blocks)) *
         np.where(rng.random(n_blocks) < 0.3, -1.0, 1.0)).astype(np.float32)
    d[:4] = np.array([0.0, -0.0, 1e-45, 3.4e38], dtype=np.float32)  # zero, -zero, subnormal, huge
    blocks[:, 0:4] = d.reshape(-1, 1).view(np.uint8)
    qs = blocks[:, 4:260].copy().view(np.int8).astype(np.float32)
    with np.errstate(over="ignore"):  # 3.4e38 * 127 overflows to inf: that is the expected value
        expected = (d.reshape(-1, 1) * qs).astype(np.float32)
    return blocks, expected.reshape(-1)


def plain_values(qtype: T) -> np.ndarray:
    """Raw bit patterns for F32 / F16 / BF16: random plus specials (NaNs with payloads)."""
    rng = np.random.default_rng(1000 + int(qtype))
    if qtype == T.F32:
        special = [0x00000000, 0x80000000, 0x00000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF,
                   0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF, 0x3F800000]
        bits = rng.integers(0, 2**32, size=256, dtype=np.uint32)
        return np.concatenate([np.array(special, dtype=np.uint32), bits]).view(np.uint8)
    special = [0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01,
               0xFFFF, 0x3C00, 0x7F80, 0xFF80, 0x7FC0, 0x7F81]
    bits = rng.integers(0, 2**16, size=256, dtype=np.uint16)
    return np.concatenate([np.array(special, dtype=np.uint16), bits]).view(np.uint8)


def write(name: str, raw: np.ndarray, expected: np.ndarray) -> None:
    assert expected.dtype == np.float32
    (OUT / f"{name}.bin").write_bytes(raw.tobytes())
    (OUT / f"{name}.f32").write_bytes(expected.astype("<f4").tobytes())
    print(f"{name}: {raw.size} bytes -> {expected.size} floats")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    for qtype in (T.F32, T.F16, T.BF16):
        raw = plain_values(qtype)
        write(qtype.name, raw, np.asarray(dequantize(raw, qtype), dtype=np.float32).reshape(-1))
    for qtype, (offsets, n_blocks) in QUANT_TYPES.items():
        raw = quant_blocks(qtype, offsets, n_blocks)
        write(qtype.name, raw, dequantize(raw.reshape(-1), qtype).reshape(-1))
    raw, expected = q8_k_blocks()
    write("Q8_K", raw, expected)


if __name__ == "__main__":
    main()
