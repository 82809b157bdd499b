// kernels/cpu/panel_layout.h: the byte layout of one panel group of the
// 32-value block formats (internal; the layout itself is described at the top
// of gemm_avx2_panel.cpp, which repacks into it). Shared by every ISA's panel
// kernels: there is one repacked layout per weight type.
#pragma once

#include <cstddef>

#include "gguf/tensor_type.h"
#include "kernels/cpu/gemm_kernel.h"

namespace folio::kernels::cpu {

// Q4_0: d + 16 nibble bytes; Q4_1: d, m + 16; Q8_0: d + 32 bytes;
// Q5_0: d, qh[4], 16 nibble bytes; Q5_1: d, m, qh[4], 16 nibble bytes.
// Scales are fp16 (kScaleWidth 2) or f32 (4).
template <int kScalesN, int kQuantBytesN, int kHbitsN = 0, int kScaleWidthN = 2>
struct PanelLayout {
  static constexpr int kScales = kScalesN;          // scale values per block (d, m)
  static constexpr int kScaleWidth = kScaleWidthN;  // bytes per scale value
  static constexpr int kHbits = kHbitsN;            // bytes of 5th bits per block
  static constexpr int kQuantBytes = kQuantBytesN;  // nibble or byte quants per block
  static constexpr std::size_t kBlockBytes = kScaleWidth * kScales + kHbits + kQuantBytes;
  static constexpr std::size_t kGroupBytes = kPanelRows * kBlockBytes;
  static constexpr std::size_t kScaleBytes = kPanelRows * kScaleWidth * kScales;
  static constexpr std::size_t kMinOffset = kPanelRows * kScaleWidth;  // m after the 8 d's
  static constexpr std::size_t kQuantOffset = kScaleBytes + kPanelRows * kHbits;
  // Q4_0 / Q5_0: w = d * (q + kIntOffset) with q the unsigned 4- or 5-bit value; 0 for the
  // types with a min (Q4_1, Q5_1, Q4_K) or signed bytes (Q8_0, Q6_K). Against 16-bit
  // activations every level adds it to the integer sums: sum (q + offset) * x exactly, and
  // one f32 term per block, not two.
  static constexpr int kIntOffset =
      kScales == 1 && kQuantBytes == 16 ? (kHbits != 0 ? -16 : -8) : 0;
};
using FmtQ4_0 = PanelLayout<1, 16>;
using FmtQ4_1 = PanelLayout<2, 16>;
using FmtQ8_0 = PanelLayout<1, 32>;
using FmtQ5_0 = PanelLayout<1, 16, 4>;
using FmtQ5_1 = PanelLayout<2, 16, 4>;
// Q4_K: each 32-value sub-block j of a super-block becomes a Q4_1 block with
// f32 scales d * sc_j and -dmin * mn_j (both exact in f32: an fp16 times a
// 6-bit integer), its nibbles ordered as Q4_0's (byte l = values l, l + 16).
// 192 bytes per 32 values of 8 rows against the file's 144 per 256 of one:
// a third more bytes for decode to stream.
using FmtQ4_K = PanelLayout<2, 16, 0, 4>;
// Q6_K: each 32-value block as a Q8_0 block of signed bytes q - 32 with two
// f32 scales, d * sc of its first and of its second 16 values (exact: an
// fp16 times an 8-bit integer); the kernels keep one int32 sum per half. 320
// bytes per 32 values of 8 rows against the file's 210 per 256 of one.
using FmtQ6_K = PanelLayout<2, 32, 0, 4>;

// The column of a 32-value block type in the per-level kernel tables
// (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 -> 0..4), or -1 for any other type.
inline constexpr int kBlockTypes = 5;
constexpr int block_type_index(gguf::TensorType type) {
  switch (type) {
    case gguf::TensorType::Q4_0:
      return 0;
    case gguf::TensorType::Q4_1:
      return 1;
    case gguf::TensorType::Q5_0:
      return 2;
    case gguf::TensorType::Q5_1:
      return 3;
    case gguf::TensorType::Q8_0:
      return 4;
    default:
      return -1;
  }
}

}  // namespace folio::kernels::cpu
