// quant/quantize_plain.cpp: float32 to F32, F16 and BF16 (round to nearest
// even, as ggml's conversions; F32 copies the bits).
#include <bit>

#include "base/fp16.h"
#include "quant/block_plain.h"

namespace folio::quant {

void quantize(std::span<const float, 1> x, std::span<const float> /*importance*/,
              float /*row_sigma2*/, BlockF32& b) {
  b.bits = std::bit_cast<std::uint32_t>(x[0]);
}

void quantize(std::span<const float, 1> x, std::span<const float> /*importance*/,
              float /*row_sigma2*/, BlockF16& b) {
  b.h = f32_to_fp16(x[0]);
}

void quantize(std::span<const float, 1> x, std::span<const float> /*importance*/,
              float /*row_sigma2*/, BlockBF16& b) {
  b.b = f32_to_bf16(x[0]);
}

}  // namespace folio::quant
