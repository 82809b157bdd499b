// tests/kernels/random_weights.h: random weight matrices of any supported
// type, built from random bytes with every fp16 scale/min field (and every
// F16/BF16/F32 element) overwritten with a finite value of moderate size, so
// products neither overflow nor hide errors behind NaN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "base/fp16.h"
#include "gguf/tensor_type.h"
#include "quant/block_kquant.h"
#include "quant/block_legacy.h"
#include "quant/traits.h"

namespace folio::kernels::testing {

// Offsets of the fp16 scale fields inside one block of `type`.
inline std::vector<std::size_t> fp16_field_offsets(gguf::TensorType type) {
  using T = gguf::TensorType;
  switch (type) {
    case T::Q4_0:
      return {offsetof(quant::BlockQ4_0, d)};
    case T::Q4_1:
      return {offsetof(quant::BlockQ4_1, d), offsetof(quant::BlockQ4_1, m)};
    case T::Q5_0:
      return {offsetof(quant::BlockQ5_0, d)};
    case T::Q5_1:
      return {offsetof(quant::BlockQ5_1, d), offsetof(quant::BlockQ5_1, m)};
    case T::Q8_0:
      return {offsetof(quant::BlockQ8_0, d)};
    case T::Q2_K:
      return {offsetof(quant::BlockQ2_K, d), offsetof(quant::BlockQ2_K, dmin)};
    case T::Q3_K:
      return {offsetof(quant::BlockQ3_K, d)};
    case T::Q4_K:
      return {offsetof(quant::BlockQ4_K, d), offsetof(quant::BlockQ4_K, dmin)};
    case T::Q5_K:
      return {offsetof(quant::BlockQ5_K, d), offsetof(quant::BlockQ5_K, dmin)};
    case T::Q6_K:
      return {offsetof(quant::BlockQ6_K, d)};
    case T::F16:
      return {0};
    default:
      return {};
  }
}

inline std::vector<std::uint8_t> random_weights(gguf::TensorType type, std::size_t rows,
                                                std::size_t cols, std::mt19937& rng) {
  const quant::TypeTraits& t = quant::traits(type);
  const std::size_t nblocks = rows * cols / t.block_elems;
  std::vector<std::uint8_t> bytes(nblocks * t.block_bytes);
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(byte(rng));
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f), value(-1.0f, 1.0f);
  if (type == gguf::TensorType::F32) {
    for (std::size_t i = 0; i < nblocks; ++i) {
      const float v = value(rng);
      std::memcpy(bytes.data() + 4 * i, &v, 4);
    }
  } else if (type == gguf::TensorType::BF16) {
    for (std::size_t i = 0; i < nblocks; ++i) {
      const std::uint16_t h = f32_to_bf16(value(rng));
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    }
  } else {
    const bool plain = type == gguf::TensorType::F16;
    for (std::size_t i = 0; i < nblocks; ++i) {
      for (std::size_t off : fp16_field_offsets(type)) {
        const std::uint16_t h = f32_to_fp16(plain ? value(rng) : scale(rng));
        std::memcpy(bytes.data() + i * t.block_bytes + off, &h, 2);
      }
    }
  }
  return bytes;
}

// Activations: mostly in [-1, 1] with occasional larger outliers (as real
// hidden states have), which stresses the per-block activation scales.
inline std::vector<float> random_activations(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 63);
  std::vector<float> x(n);
  for (float& v : x) v = pick(rng) == 0 ? 8.0f * normal(rng) : normal(rng);
  return x;
}

}  // namespace folio::kernels::testing
