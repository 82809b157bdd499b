// quant/quantize.h: float32 rows to the block formats folio can write (the
// inverse of dequantize.h). The per-type rules are in quantize_legacy.cpp,
// quantize_kquant.cpp and quantize_plain.cpp; the searches they share in
// scale_search.h.
#pragma once

#include <cstdint>
#include <span>

#include "gguf/tensor_type.h"

namespace folio::quant {

// Whether folio can write `type` (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0, Q4_K, Q5_K, Q6_K).
bool can_quantize(gguf::TensorType type);

// Quantizes one row: src.size() elements (a whole number of blocks) into dst
// (exactly quantized_bytes(type, src.size()) bytes). `importance` is empty for
// round-to-nearest, or one non-negative importance per column of the row
// (e.g. the mean square of that input channel's calibration activations) for
// the importance-weighted search. Throws folio::Error naming the type and
// sizes on an unsupported type or mismatched sizes. Deterministic: the same
// input gives the same bytes on every host.
void quantize_row(gguf::TensorType type, std::span<const float> src,
                  std::span<const float> importance, std::span<std::uint8_t> dst);

}  // namespace folio::quant
