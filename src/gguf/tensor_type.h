// gguf/tensor_type.h: the ggml tensor element types as stored in GGUF files.
//
// This is part of the file format: the numeric ids are fixed by ggml, and the
// layout (elements per block, bytes per block) is what the reader needs to
// bounds-check tensor data. How to dequantize or multiply a type lives in
// quant/ (one traits table), not here.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace folio::gguf {

enum class TensorType : std::uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
};

struct TensorTypeLayout {
  std::string_view name;
  std::uint32_t block_elems;  // elements per block (1 for plain types)
  std::uint32_t block_bytes;  // bytes per block
};

// Layout of a type id read from a file; nullopt for ids ggml does not define.
std::optional<TensorTypeLayout> tensor_type_layout(std::uint32_t type_id);

// Name of a type ("Q4_K"), or "type#<id>" for unknown ids.
std::string_view tensor_type_name(TensorType type);

}  // namespace folio::gguf
