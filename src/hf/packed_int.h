// hf/packed_int.h: the packed integer weight layouts of HF quantized
// checkpoints, unpacked to one form, and that form mapped onto GGUF blocks.
//
// GPTQ (AutoGPTQ / GPTQModel, checkpoint_format "gptq" = v1, "gptq_v2"):
//   qweight int32 [in * bits / 32, out]  values packed along the input dim,
//                                        lowest bits first
//   qzeros  int32 [groups, out * bits / 32]  packed along the output dim
//   scales  fp16  [groups, out]
//   g_idx   int32 [in]   the group of each input column (absent: i / group)
//   w[o][i] = scales[g][o] * (q[i][o] - zero[g][o]),  g = g_idx[i]
//   v1 stores zero - 1 (so a stored 2^bits - 1 means 2^bits); v2 stores zero.
// AutoAWQ "GEMM" (and vLLM's awq):
//   qweight int32 [in, out / 8]   packed along the output dim in the order
//                                 0 2 4 6 1 3 5 7 (nibble p holds column 8c + order[p])
//   qzeros  int32 [in / group, out / 8] the same packing; scales fp16 [in / group, out]
//   w[o][i] = scales[i / g][o] * (q[i][o] - zero[i / g][o])
//
// Mapping onto GGUF 32-value blocks (a row is an output channel, the blocks
// run along the input dim), exact where the block type allows:
//   every block inside one group, every zero 2^(bits-1)  -> Q4_0 (4 bit) / Q8_0 (8 bit), exact
//   every block inside one group, 4 bit, other zeros     -> Q4_1, the min -zero*scale
//                                                           rounded to fp16 (the only loss)
//   every block inside one group, 8 bit, q - zero fits int8 -> Q8_0, exact
//   otherwise (act-order groups across blocks, in % 32 != 0, 8-bit asym out of range)
//                                                        -> F16 of the dequantized weight
// The caller learns which, and why, to say so at load.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gguf/tensor_type.h"

namespace folio::hf {

// One linear layer's weight as integers with a scale and zero per (group, row).
struct GroupQuant {
  int bits = 4;
  std::uint64_t rows = 0;  // output features
  std::uint64_t cols = 0;  // input features
  std::uint32_t n_groups = 0;
  std::vector<std::uint8_t> q;          // [rows][cols], 0 .. 2^bits - 1
  std::vector<std::uint16_t> scale;     // [rows][n_groups], fp16 bits as stored
  std::vector<std::uint16_t> zero;      // [rows][n_groups], 0 .. 2^bits
  std::vector<std::uint32_t> group_of;  // [cols]

  float dequant(std::uint64_t r, std::uint64_t c) const;
};

// Raw int32 / fp16 tensors as views with their shapes (row-major).
struct I32Matrix {
  std::span<const std::uint8_t> data;  // little-endian int32
  std::uint64_t rows = 0, cols = 0;
};
struct F16Matrix {
  std::span<const std::uint8_t> data;  // fp16
  std::uint64_t rows = 0, cols = 0;
};

// `name` prefixes error messages (the HF module name). Shapes, g_idx values and
// zero ranges are checked; a mismatch is a folio::Error naming the tensor.
GroupQuant unpack_gptq(const std::string& name, int bits, bool v1, std::uint64_t in,
                       std::uint64_t out, I32Matrix qweight, I32Matrix qzeros, F16Matrix scales,
                       std::span<const std::uint8_t> g_idx /* int32 [in] or empty */,
                       std::int64_t group_size /* -1: one group */);
GroupQuant unpack_awq(const std::string& name, std::uint64_t in, std::uint64_t out,
                      I32Matrix qweight, I32Matrix qzeros, F16Matrix scales,
                      std::int64_t group_size);

struct MappedWeight {
  gguf::TensorType type = gguf::TensorType::F16;
  std::vector<std::uint8_t> data;  // rows x (cols in blocks of `type`), row-major
  bool exact = true;               // false: Q4_1 min rounding or F16 fallback
  std::string why;                 // for F16 fallback / Q4_1: the reason, for the load report
};

MappedWeight map_to_blocks(const GroupQuant& g);

// Reorders the rows of a row-major matrix of `row_bytes`-byte rows:
// out row r = in row perm[r]. perm must be a permutation of 0 .. rows-1.
std::vector<std::uint8_t> permute_rows(std::span<const std::uint8_t> in, std::size_t row_bytes,
                                       std::span<const std::uint32_t> perm);

// llama.cpp's convert_hf_to_gguf `permute()` for Llama q_proj/k_proj rows:
// HF's rotate-half (NeoX) layout to GGUF llama's interleaved pairs, per head.
// out row h*d + 2i + j = in row h*d + j*d/2 + i  (d = rows / n_head).
std::vector<std::uint32_t> llama_rope_permutation(std::uint64_t rows, std::uint32_t n_head);

}  // namespace folio::hf
