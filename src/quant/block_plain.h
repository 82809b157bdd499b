// quant/block_plain.h: the unquantized element types (F32, F16, BF16) as
// one-element "blocks", so they go through the same traits table and row
// loop as the quantized formats.
#pragma once

#include <cstdint>
#include <span>

#include "gguf/tensor_type.h"

namespace folio::quant {

struct BlockF32 {
  static constexpr gguf::TensorType kType = gguf::TensorType::F32;
  static constexpr std::size_t kElems = 1;
  std::uint32_t bits;  // raw IEEE binary32; copied as bits so NaN payloads survive
};

struct BlockF16 {
  static constexpr gguf::TensorType kType = gguf::TensorType::F16;
  static constexpr std::size_t kElems = 1;
  std::uint16_t h;  // IEEE binary16
};

struct BlockBF16 {
  static constexpr gguf::TensorType kType = gguf::TensorType::BF16;
  static constexpr std::size_t kElems = 1;
  std::uint16_t b;  // bfloat16: the top half of a binary32
};

static_assert(sizeof(BlockF32) == 4);
static_assert(sizeof(BlockF16) == 2);
static_assert(sizeof(BlockBF16) == 2);

void dequantize(const BlockF32& b, std::span<float, 1> y);
void dequantize(const BlockF16& b, std::span<float, 1> y);
void dequantize(const BlockBF16& b, std::span<float, 1> y);

// Conversions from float32 (round to nearest even; the importance is unused).
void quantize(std::span<const float, 1> x, std::span<const float> importance, float row_sigma2,
              BlockF32& b);
void quantize(std::span<const float, 1> x, std::span<const float> importance, float row_sigma2,
              BlockF16& b);
void quantize(std::span<const float, 1> x, std::span<const float> importance, float row_sigma2,
              BlockBF16& b);

}  // namespace folio::quant
