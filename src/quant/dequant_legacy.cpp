// quant/dequant_legacy.cpp: reference dequantizers for Q4_0, Q4_1, Q5_0,
// Q5_1 and Q8_0 (formulas and element order in block_legacy.h).
//
// Bit-exact with gguf-py's gguf.quants.dequantize: integer quants convert to
// float exactly, then one float32 multiply (and one add for the _1 types).
#include <cstddef>

#include "base/fp16.h"
#include "quant/block_legacy.h"

namespace folio::quant {

namespace {

constexpr std::size_t kHalf = 16;  // low nibbles hold elements 0..15, high nibbles 16..31

std::uint32_t load_u32_le(const std::uint8_t (&b)[4]) {
  return static_cast<std::uint32_t>(b[0]) | static_cast<std::uint32_t>(b[1]) << 8 |
         static_cast<std::uint32_t>(b[2]) << 16 | static_cast<std::uint32_t>(b[3]) << 24;
}

// The 4-bit value of element j (0..31).
int nibble(const std::uint8_t (&qs)[kHalf], std::size_t j) {
  return j < kHalf ? qs[j] & 0x0F : qs[j - kHalf] >> 4;
}

// The 5-bit value of element j: its nibble plus bit j of qh as bit 4.
int five_bits(const std::uint8_t (&qs)[kHalf], std::uint32_t qh, std::size_t j) {
  return nibble(qs, j) | static_cast<int>((qh >> j) & 1u) << 4;
}

}  // namespace

void dequantize(const BlockQ4_0& b, std::span<float, 32> y) {
  const float d = fp16_to_f32(b.d);
  for (std::size_t j = 0; j < y.size(); ++j) {
    y[j] = d * static_cast<float>(nibble(b.qs, j) - 8);
  }
}

void dequantize(const BlockQ4_1& b, std::span<float, 32> y) {
  const float d = fp16_to_f32(b.d);
  const float m = fp16_to_f32(b.m);
  for (std::size_t j = 0; j < y.size(); ++j) {
    y[j] = d * static_cast<float>(nibble(b.qs, j)) + m;
  }
}

void dequantize(const BlockQ5_0& b, std::span<float, 32> y) {
  const float d = fp16_to_f32(b.d);
  const std::uint32_t qh = load_u32_le(b.qh);
  for (std::size_t j = 0; j < y.size(); ++j) {
    y[j] = d * static_cast<float>(five_bits(b.qs, qh, j) - 16);
  }
}

void dequantize(const BlockQ5_1& b, std::span<float, 32> y) {
  const float d = fp16_to_f32(b.d);
  const float m = fp16_to_f32(b.m);
  const std::uint32_t qh = load_u32_le(b.qh);
  for (std::size_t j = 0; j < y.size(); ++j) {
    y[j] = d * static_cast<float>(five_bits(b.qs, qh, j)) + m;
  }
}

void dequantize(const BlockQ8_0& b, std::span<float, 32> y) {
  const float d = fp16_to_f32(b.d);
  for (std::size_t j = 0; j < y.size(); ++j) {
    y[j] = static_cast<float>(b.qs[j]) * d;
  }
}

}  // namespace folio::quant
