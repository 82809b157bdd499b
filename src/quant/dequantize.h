// quant/dequantize.h: reference (scalar, bit-exact) dequantization of any
// supported tensor type to float32. The fast kernels are checked against it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "gguf/tensor_type.h"

namespace folio::quant {

// Bytes that `n_elems` elements of `type` occupy. Throws folio::Error when the
// type is unsupported or n_elems is not a whole number of blocks.
std::size_t quantized_bytes(gguf::TensorType type, std::size_t n_elems);

// Dequantizes dst.size() elements of `type` from src, which must hold exactly
// that many elements' blocks. Throws folio::Error (naming the type and sizes)
// on an unsupported type or a size mismatch; never reads past src.
void dequantize_row(gguf::TensorType type, std::span<const std::uint8_t> src, std::span<float> dst);

}  // namespace folio::quant
