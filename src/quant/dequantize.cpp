// quant/dequantize.cpp: size-checked entry point over the traits table.
#include "quant/dequantize.h"

#include <string>

#include "base/error.h"
#include "quant/traits.h"

namespace folio::quant {

std::size_t quantized_bytes(gguf::TensorType type, std::size_t n_elems) {
  const TypeTraits& t = traits(type);
  if (n_elems % t.block_elems != 0) {
    throw Error(std::to_string(n_elems) + " elements is not a whole number of " +
                std::string(t.name) + " blocks (" + std::to_string(t.block_elems) +
                " elements each)");
  }
  return n_elems / t.block_elems * t.block_bytes;
}

void dequantize_row(gguf::TensorType type, std::span<const std::uint8_t> src,
                    std::span<float> dst) {
  const TypeTraits& t = traits(type);
  const std::size_t need = quantized_bytes(type, dst.size());
  if (src.size() != need) {
    throw Error("dequantize " + std::string(t.name) + ": " + std::to_string(dst.size()) +
                " elements need " + std::to_string(need) + " bytes, got " +
                std::to_string(src.size()));
  }
  t.dequantize_row(src, dst);
}

}  // namespace folio::quant
