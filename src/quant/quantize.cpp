// quant/quantize.cpp: size-checked entry point over the traits table.
#include "quant/quantize.h"

#include <string>

#include "base/error.h"
#include "quant/dequantize.h"
#include "quant/traits.h"

namespace folio::quant {

bool can_quantize(gguf::TensorType type) {
  const TypeTraits* t = find_traits(type);
  return t != nullptr && t->quantize_row != nullptr;
}

void quantize_row(gguf::TensorType type, std::span<const float> src,
                  std::span<const float> importance, std::span<std::uint8_t> dst) {
  const TypeTraits& t = traits(type);
  if (t.quantize_row == nullptr) {
    throw Error("folio cannot write " + std::string(t.name) +
                " (it writes F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K)");
  }
  const std::size_t need = quantized_bytes(type, src.size());
  if (dst.size() != need) {
    throw Error("quantize " + std::string(t.name) + ": " + std::to_string(src.size()) +
                " elements need " + std::to_string(need) + " bytes, got " +
                std::to_string(dst.size()));
  }
  if (!importance.empty() && importance.size() != src.size()) {
    throw Error("quantize " + std::string(t.name) + ": " + std::to_string(importance.size()) +
                " importances for a row of " + std::to_string(src.size()));
  }
  t.quantize_row(src, importance, dst);
}

}  // namespace folio::quant
