// quant/block_kquant.h: ggml's k-quant super-block formats (Q2_K .. Q6_K,
// Q8_K) as types, and their reference dequantizers.
//
// A super-block holds 256 weights in sub-blocks of 16 (Q2_K, Q3_K, Q6_K) or
// 32 (Q4_K, Q5_K) that share a small integer scale (and min) multiplied by the
// super-block's fp16 `d` (and `dmin`). Element i = 128*h + 32*s + l
// (h = 0..1 half, s = 0..3 slot, l = 0..31 lane) reads its low bits from byte
// `32*h + l` of qs at shift 2*s (2-bit formats), or from byte `32*(i/64) + l`
// at shift 4*((i/32)%2) (4-bit formats):
//
//   Q2_K  y = (d * sc_lo[i/16]) * q2 - (dmin * sc_hi[i/16])
//   Q3_K  y = (d * (sc6[i/16] - 32)) * (q2 - (hmask bit i/32 of byte l ? 0 : 4))
//   Q4_K  y = (d * sc6[i/32]) * q4 - (dmin * m6[i/32])
//   Q5_K  y = (d * sc6[i/32]) * (q4 | qh bit i/32 of byte l << 4) - (dmin * m6[i/32])
//   Q6_K  y = (d * scales[i/16]) * ((q4 | q2hi << 4) - 32)
//   Q8_K  y = d * qs[i]                      (d is float32 here, not fp16)
//
// Products in parentheses are rounded to float32 first, as in ggml's C
// (`dl = d * sc; y = dl * q - ml`) and gguf-py's numpy; no FMA contraction.
#pragma once

#include <cstdint>
#include <span>

#include "gguf/tensor_type.h"

namespace folio::quant {

inline constexpr std::size_t kQK_K = 256;       // weights per k-quant super-block
inline constexpr std::size_t kScaleBytes = 12;  // packed 6-bit scales+mins (Q4_K/Q5_K), Q3_K scales

struct BlockQ2_K {
  static constexpr gguf::TensorType kType = gguf::TensorType::Q2_K;
  static constexpr std::size_t kElems = kQK_K;
  std::uint8_t scales[kQK_K / 16];  // low nibble: scale, high nibble: min (per 16 weights)
  std::uint8_t qs[kQK_K / 4];       // 2-bit quants
  std::uint16_t d;                  // fp16 scale of the scales
  std::uint16_t dmin;               // fp16 scale of the mins
};

struct BlockQ3_K {
  static constexpr gguf::TensorType kType = gguf::TensorType::Q3_K;
  static constexpr std::size_t kElems = kQK_K;
  std::uint8_t hmask[kQK_K / 8];     // high bit of each 3-bit quant (inverted: 0 means -4)
  std::uint8_t qs[kQK_K / 4];        // low 2 bits
  std::uint8_t scales[kScaleBytes];  // 16 x 6-bit scales, biased by 32
  std::uint16_t d;
};

struct BlockQ4_K {
  static constexpr gguf::TensorType kType = gguf::TensorType::Q4_K;
  static constexpr std::size_t kElems = kQK_K;
  std::uint16_t d;
  std::uint16_t dmin;
  std::uint8_t scales[kScaleBytes];  // 8 x (6-bit scale, 6-bit min)
  std::uint8_t qs[kQK_K / 2];        // 4-bit quants
};

struct BlockQ5_K {
  static constexpr gguf::TensorType kType = gguf::TensorType::Q5_K;
  static constexpr std::size_t kElems = kQK_K;
  std::uint16_t d;
  std::uint16_t dmin;
  std::uint8_t scales[kScaleBytes];
  std::uint8_t qh[kQK_K / 8];  // 5th bit: bit (i/32) of byte (i%32)
  std::uint8_t qs[kQK_K / 2];
};

struct BlockQ6_K {
  static constexpr gguf::TensorType kType = gguf::TensorType::Q6_K;
  static constexpr std::size_t kElems = kQK_K;
  std::uint8_t ql[kQK_K / 2];      // low 4 bits
  std::uint8_t qh[kQK_K / 4];      // high 2 bits
  std::int8_t scales[kQK_K / 16];  // signed 8-bit scale per 16 weights
  std::uint16_t d;
};

struct BlockQ8_K {
  static constexpr gguf::TensorType kType = gguf::TensorType::Q8_K;
  static constexpr std::size_t kElems = kQK_K;
  float d;
  std::int8_t qs[kQK_K];
  std::int16_t bsums[kQK_K / 16];  // sums of groups of 16 quants (for dot products; unused here)
};

static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);

// Q4_K / Q5_K sub-block j (0..7): its 6-bit scale and min, unpacked from
// the 12 packed bytes:
//   bytes 0..3:  scale j (j<4) low 6 bits; top 2 bits = bits 4..5 of scale j+4
//   bytes 4..7:  min j (j<4) low 6 bits;   top 2 bits = bits 4..5 of min j+4
//   bytes 8..11: low nibble = bits 0..3 of scale j+4, high nibble = bits 0..3 of min j+4
struct ScaleMin {
  int scale;
  int min;
};
inline ScaleMin scale_min_k4(const std::uint8_t (&s)[kScaleBytes], std::size_t j) {
  if (j < 4) return {s[j] & 63, s[j + 4] & 63};
  return {(s[j + 4] & 0x0F) | (s[j - 4] >> 6) << 4, (s[j + 4] >> 4) | (s[j] >> 6) << 4};
}

void dequantize(const BlockQ2_K& b, std::span<float, kQK_K> y);
void dequantize(const BlockQ3_K& b, std::span<float, kQK_K> y);
void dequantize(const BlockQ4_K& b, std::span<float, kQK_K> y);
void dequantize(const BlockQ5_K& b, std::span<float, kQK_K> y);
void dequantize(const BlockQ6_K& b, std::span<float, kQK_K> y);
void dequantize(const BlockQ8_K& b, std::span<float, kQK_K> y);

// Quantizers (quantize_kquant.cpp): Q4_K, Q5_K and Q6_K, the types folio
// writes. `importance` is empty (ggml's reference rule) or the super-block's
// 256 column importances; row_sigma2 is unused (k-quants use their own
// super-block's mean square).
void quantize(std::span<const float, kQK_K> x, std::span<const float> importance, float row_sigma2,
              BlockQ4_K& b);
void quantize(std::span<const float, kQK_K> x, std::span<const float> importance, float row_sigma2,
              BlockQ5_K& b);
void quantize(std::span<const float, kQK_K> x, std::span<const float> importance, float row_sigma2,
              BlockQ6_K& b);

}  // namespace folio::quant
