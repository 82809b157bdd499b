// quant/dequant_plain.cpp: F32, F16 and BF16 to float. Exact conversions that
// keep every bit pattern (NaN payloads included), as gguf-py's numpy does.
#include <bit>

#include "base/fp16.h"
#include "quant/block_plain.h"

namespace folio::quant {

void dequantize(const BlockF32& b, std::span<float, 1> y) {
  y[0] = std::bit_cast<float>(b.bits);
}

void dequantize(const BlockF16& b, std::span<float, 1> y) {
  y[0] = fp16_to_f32(b.h);
}

void dequantize(const BlockBF16& b, std::span<float, 1> y) {
  y[0] = bf16_to_f32(b.b);
}

}  // namespace folio::quant
