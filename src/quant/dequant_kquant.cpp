// quant/dequant_kquant.cpp: reference dequantizers for the k-quants
// (formulas and element order in block_kquant.h).
//
// Bit-exact with gguf-py's gguf.quants.dequantize and ggml's C reference:
// every sub-block scale is first rounded to float32 (`d * sc`), then one
// multiply per weight and, for the formats with mins, one subtract.
#include <cstddef>

#include "base/fp16.h"
#include "quant/block_kquant.h"

namespace folio::quant {

namespace {

constexpr std::size_t kLanes = 32;  // weights per (half, slot) run: i = 128*h + 32*s + l

// Q3_K sub-block i (0..15): 6-bit scale, low 4 bits from bytes 0..7 (low
// nibbles for 0..7, high nibbles for 8..15), high 2 bits from bytes 8..11.
int scale_q3_k(const std::uint8_t (&s)[kScaleBytes], std::size_t i) {
  const int low = i < 8 ? s[i] & 0x0F : s[i - 8] >> 4;
  const int high = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
  return (low | high << 4) - 32;
}

}  // namespace

void dequantize(const BlockQ2_K& b, std::span<float, kQK_K> y) {
  const float d = fp16_to_f32(b.d);
  const float dmin = fp16_to_f32(b.dmin);
  for (std::size_t i = 0; i < kQK_K; i += kLanes) {
    const std::size_t h = i / 128;
    const unsigned shift = static_cast<unsigned>(2 * ((i / kLanes) % 4));
    for (std::size_t l = 0; l < kLanes; ++l) {
      const std::uint8_t sc = b.scales[(i + l) / 16];
      const float dl = d * static_cast<float>(sc & 0x0F);
      const float ml = dmin * static_cast<float>(sc >> 4);
      const int q = (b.qs[32 * h + l] >> shift) & 3;
      y[i + l] = dl * static_cast<float>(q) - ml;
    }
  }
}

void dequantize(const BlockQ3_K& b, std::span<float, kQK_K> y) {
  const float d = fp16_to_f32(b.d);
  for (std::size_t i = 0; i < kQK_K; i += kLanes) {
    const std::size_t h = i / 128;
    const unsigned shift = static_cast<unsigned>(2 * ((i / kLanes) % 4));
    const unsigned hbit = static_cast<unsigned>(i / kLanes);  // 0..7
    for (std::size_t l = 0; l < kLanes; ++l) {
      const float dl = d * static_cast<float>(scale_q3_k(b.scales, (i + l) / 16));
      const int low = (b.qs[32 * h + l] >> shift) & 3;
      const int q = low - (((b.hmask[l] >> hbit) & 1) ? 0 : 4);
      y[i + l] = dl * static_cast<float>(q);
    }
  }
}

void dequantize(const BlockQ4_K& b, std::span<float, kQK_K> y) {
  const float d = fp16_to_f32(b.d);
  const float dmin = fp16_to_f32(b.dmin);
  for (std::size_t j = 0; j < kQK_K / kLanes; ++j) {  // sub-block of 32
    const ScaleMin sm = scale_min_k4(b.scales, j);
    const float dl = d * static_cast<float>(sm.scale);
    const float ml = dmin * static_cast<float>(sm.min);
    const std::uint8_t* q = b.qs + 32 * (j / 2);
    const unsigned shift = 4 * static_cast<unsigned>(j % 2);
    for (std::size_t l = 0; l < kLanes; ++l) {
      y[32 * j + l] = dl * static_cast<float>((q[l] >> shift) & 0x0F) - ml;
    }
  }
}

void dequantize(const BlockQ5_K& b, std::span<float, kQK_K> y) {
  const float d = fp16_to_f32(b.d);
  const float dmin = fp16_to_f32(b.dmin);
  for (std::size_t j = 0; j < kQK_K / kLanes; ++j) {
    const ScaleMin sm = scale_min_k4(b.scales, j);
    const float dl = d * static_cast<float>(sm.scale);
    const float ml = dmin * static_cast<float>(sm.min);
    const std::uint8_t* q = b.qs + 32 * (j / 2);
    const unsigned shift = 4 * static_cast<unsigned>(j % 2);
    for (std::size_t l = 0; l < kLanes; ++l) {
      const int q5 = ((q[l] >> shift) & 0x0F) | ((b.qh[l] >> j) & 1) << 4;
      y[32 * j + l] = dl * static_cast<float>(q5) - ml;
    }
  }
}

void dequantize(const BlockQ6_K& b, std::span<float, kQK_K> y) {
  const float d = fp16_to_f32(b.d);
  for (std::size_t i = 0; i < kQK_K; i += kLanes) {
    const std::size_t h = i / 128;
    const std::size_t s = (i / kLanes) % 4;
    const std::uint8_t* ql = b.ql + 64 * h + 32 * (s % 2);
    const unsigned lshift = 4 * static_cast<unsigned>(s / 2);
    const unsigned hshift = 2 * static_cast<unsigned>(s);
    for (std::size_t l = 0; l < kLanes; ++l) {
      const std::int8_t scale = b.scales[(i + l) / 16];
      const float dl = d * static_cast<float>(scale);
      const int q = (((ql[l] >> lshift) & 0x0F) | ((b.qh[32 * h + l] >> hshift) & 3) << 4) - 32;
      y[i + l] = dl * static_cast<float>(q);
    }
  }
}

void dequantize(const BlockQ8_K& b, std::span<float, kQK_K> y) {
  for (std::size_t i = 0; i < kQK_K; ++i) y[i] = b.d * static_cast<float>(b.qs[i]);
}

}  // namespace folio::quant
