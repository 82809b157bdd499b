// quant/block_legacy.h: ggml's original 32-element block formats
// (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) as types, and their reference dequantizers.
//
// Every block holds 32 weights. Scales `d` and mins `m` are IEEE fp16 bits.
// Element j of a block (j = 0..31):
//
//   Q4_0  x = (nib(j) - 8) * d                nib(j) = j<16 ? qs[j] & 0xF : qs[j-16] >> 4
//   Q4_1  x = nib(j) * d + m
//   Q5_0  x = ((nib(j) | hbit(j) << 4) - 16) * d    hbit(j) = (qh >> j) & 1, qh little-endian u32
//   Q5_1  x = (nib(j) | hbit(j) << 4) * d + m
//   Q8_0  x = qs[j] * d                       qs signed
//
// The arithmetic is float32, one rounding per operation, in exactly the order
// written above (the library is built with -ffp-contract=off so `q * d + m`
// never becomes an FMA): this is what ggml's C and gguf-py's numpy both do.
#pragma once

#include <cstdint>
#include <span>

#include "gguf/tensor_type.h"

namespace folio::quant {

struct BlockQ4_0 {
  static constexpr gguf::TensorType kType = gguf::TensorType::Q4_0;
  static constexpr std::size_t kElems = 32;
  std::uint16_t d;
  std::uint8_t qs[kElems / 2];
};

struct BlockQ4_1 {
  static constexpr gguf::TensorType kType = gguf::TensorType::Q4_1;
  static constexpr std::size_t kElems = 32;
  std::uint16_t d;
  std::uint16_t m;
  std::uint8_t qs[kElems / 2];
};

struct BlockQ5_0 {
  static constexpr gguf::TensorType kType = gguf::TensorType::Q5_0;
  static constexpr std::size_t kElems = 32;
  std::uint16_t d;
  std::uint8_t qh[4];  // 5th bit of each element, little-endian u32 (unaligned in the file)
  std::uint8_t qs[kElems / 2];
};

struct BlockQ5_1 {
  static constexpr gguf::TensorType kType = gguf::TensorType::Q5_1;
  static constexpr std::size_t kElems = 32;
  std::uint16_t d;
  std::uint16_t m;
  std::uint8_t qh[4];
  std::uint8_t qs[kElems / 2];
};

struct BlockQ8_0 {
  static constexpr gguf::TensorType kType = gguf::TensorType::Q8_0;
  static constexpr std::size_t kElems = 32;
  std::uint16_t d;
  std::int8_t qs[kElems];
};

// Sizes as ggml defines them (ggml-common.h); the traits table also checks
// them against gguf/tensor_type.cpp at start-up.
static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);

void dequantize(const BlockQ4_0& b, std::span<float, 32> y);
void dequantize(const BlockQ4_1& b, std::span<float, 32> y);
void dequantize(const BlockQ5_0& b, std::span<float, 32> y);
void dequantize(const BlockQ5_1& b, std::span<float, 32> y);
void dequantize(const BlockQ8_0& b, std::span<float, 32> y);

// Quantizers (quantize_legacy.cpp). `importance` is empty (round to nearest,
// ggml's reference rule) or the block's 32 column importances; row_sigma2 is
// the mean square of the block's whole row (used with importances only).
void quantize(std::span<const float, 32> x, std::span<const float> importance, float row_sigma2,
              BlockQ4_0& b);
void quantize(std::span<const float, 32> x, std::span<const float> importance, float row_sigma2,
              BlockQ4_1& b);
void quantize(std::span<const float, 32> x, std::span<const float> importance, float row_sigma2,
              BlockQ5_0& b);
void quantize(std::span<const float, 32> x, std::span<const float> importance, float row_sigma2,
              BlockQ5_1& b);
void quantize(std::span<const float, 32> x, std::span<const float> importance, float row_sigma2,
              BlockQ8_0& b);

}  // namespace folio::quant
