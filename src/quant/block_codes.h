// quant/block_codes.h: element-level access to a quantized block: the grid
// element i of a block lies on once the block's scales are fixed, and
// writing the code chosen for it. GPTQ uses it to round one column at a time
// against scales chosen at the start of the column's group.
//
// Element i of a block decodes as  a * (code - offset) + b, code in [lo, hi]
// (the formats' own formulas, block_legacy.h / block_kquant.h):
//   Q4_0  a = d, offset 8            Q4_1  a = d, b = m          codes 0..15
//   Q5_0  a = d, offset 16           Q5_1  a = d, b = m          codes 0..31
//   Q8_0  a = d                      codes -127..127 (signed)
//   Q4_K / Q5_K  a = d*sc(j), b = -dmin*m(j), j = i/32           codes 0..15 / 0..31
//   Q6_K  a = d*scale(i/16), offset 32                           codes 0..63
#pragma once

#include <cstdint>
#include <span>

#include "gguf/tensor_type.h"

namespace folio::quant {

struct ElementGrid {
  float a;     // step
  int offset;  // code that decodes to b
  float b;     // value of code `offset`
  int lo, hi;  // code range
  // The code nearest to x (a == 0: every code decodes to b; returns offset).
  int nearest(float x) const;
  float value(int code) const { return a * static_cast<float>(code - offset) + b; }
};

// Whether block_codes supports `type` (the quantized types folio writes).
bool has_element_codes(gguf::TensorType type);

// The grid of every element of the block at `block` (block_bytes of `type`);
// out.size() == block_elems.
void block_grids(gguf::TensorType type, std::span<const std::uint8_t> block,
                 std::span<ElementGrid> out);

// Every element's code, read (out.size() == block_elems).
void block_codes(gguf::TensorType type, std::span<const std::uint8_t> block, std::span<int> out);

// Writes every element's code (each within its grid's range), keeping the
// block's scales.
void set_block_codes(gguf::TensorType type, std::span<std::uint8_t> block,
                     std::span<const int> codes);

}  // namespace folio::quant
