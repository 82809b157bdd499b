// quant/traits.h: the one table that says what folio can do with each tensor
// type. Adding a format = one block struct + its kernels + one row here.
//
// Layouts (ids, elements and bytes per block) are defined once, by the file
// format, in gguf/tensor_type.h; a row's block struct is checked against that
// layout when the table is built, so the two can never drift apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "gguf/tensor_type.h"

namespace folio::quant {

// Dequantizes whole blocks: src.size() == n * block_bytes and
// dst.size() == n * block_elems (callers check; see dequantize_row()).
using DequantizeRowFn = void (*)(std::span<const std::uint8_t> src, std::span<float> dst);

// Quantizes one row of whole blocks: dst.size() == n * block_bytes and
// src.size() == n * block_elems; importance empty or src.size() long (see
// quantize_row() in quantize.h, which checks).
using QuantizeRowFn = void (*)(std::span<const float> src, std::span<const float> importance,
                               std::span<std::uint8_t> dst);

struct TypeTraits {
  gguf::TensorType type;
  std::string_view name;           // "Q4_K"
  std::size_t block_elems;         // weights per block (1 for F32/F16/BF16)
  std::size_t block_bytes;         // bytes per block
  DequantizeRowFn dequantize_row;  // scalar reference, bit-exact with gguf-py
  QuantizeRowFn quantize_row;      // nullptr: folio does not write this type
};

// Every type folio supports, in type-id order.
std::span<const TypeTraits> all_traits();

// The row for `type`, or nullptr when folio does not support it.
const TypeTraits* find_traits(gguf::TensorType type);

// The row for `type`; throws folio::Error naming the type (and listing the
// supported ones) when folio does not support it.
const TypeTraits& traits(gguf::TensorType type);

}  // namespace folio::quant
