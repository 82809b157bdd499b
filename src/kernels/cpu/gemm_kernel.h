// kernels/cpu/gemm_kernel.h: the per-type building blocks of matmul (internal).
//
// The fast path multiplies weights with activations that were converted once
// per call into the format the weight type's integer dot product wants:
//
//   ActFormat::kF32   plain floats (F32/F16/BF16 weights, and the generic
//                     dequantize-then-dot path for Q2_K/Q3_K)
//   ActFormat::kQ8_32 ActQ8Block per 32 values (Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 with
//                     ActivationBits::k8, llama.cpp's q8 activations)
//   ActFormat::kQ16_32 ActQ16Block per 32 values (the same types with
//                     ActivationBits::k16, the default: Q5_0/Q5_1 panels
//                     and the scalar tiles)
//   ActFormat::kI16_32 ActI16Block per 32 values: the same 16-bit values as
//                     int16 (the Q4_0/Q4_1/Q8_0 panels with ActivationBits::k16)
//   ActFormat::kQ8_K  quant::BlockQ8_K per 256 values with 16-value sums (k-quants)
//
// A tile kernel computes a block of outputs for `nr` consecutive weight rows
// and nc <= kMaxTileCols activation rows, loading/unpacking each weight block
// once for all nc activation rows (that is what makes prefill compute-bound
// instead of unpack-bound):
//
//   for r < nr, c < nc:  y[c * ldy + r] = dot(W row r, activation row c)
//
// Invariant (batch invariance): the value computed for (r, c) depends only on
// weight row r and activation row c, never on nc or on the other rows: every
// (r, c) pair runs the same sequence of floating-point operations.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gguf/tensor_type.h"
#include "kernels/matmul.h"

namespace folio::kernels::cpu {

inline constexpr std::size_t kMaxTileCols = 4;

enum class ActFormat { kF32, kQ8_32, kQ16_32, kI16_32, kQ8_K };

// One 32-value block of a quantized activation row: x[i] ~= d * qs[i],
// s = d * sum(qs) (used for the offset/min terms of Q4_0/Q4_1/Q5_0/Q5_1).
struct ActQ8Block {
  float d;
  float s;
  std::int8_t qs[32];
};
static_assert(sizeof(ActQ8Block) == 40);

// One 32-value block of a 16-bit quantized activation row: x[i] ~= d * q[i]
// with d = max|x| / kActQ16Max, |q| <= kActQ16Max, q = kActQ16Base * hi + lo.
// The two signed bytes let the 8-bit multiply-add instructions compute
// sum(w * q) as kActQ16Base * sum(w * hi) + sum(w * lo), exactly in int32.
// The base is 254 rather than 256 so that |lo| <= 127: the Q8_0 kernels move
// the weight's sign onto the activation byte, and -(-128) does not fit.
// s = d * sum(q) as for ActQ8Block, and neg8_qsum = -8 * sum(q) exactly:
// Q4_0's offset term (w = d * (q - 8)) in the integer sums, which the 16-bit
// kernels add to theirs (Q5_0's -16 doubles it: offset_sum below). Stored
// premultiplied so that the kernels broadcast it straight from memory.
inline constexpr int kActQ16Base = 254;
inline constexpr int kActQ16Max = 127 * kActQ16Base;  // 32258
struct ActQ16Block {
  float d;
  float s;
  std::int8_t hi[32];
  std::int8_t lo[32];
  std::int32_t neg8_qsum;
};
static_assert(sizeof(ActQ16Block) == 76);

// The same 16-bit values as ActQ16Block (identical d, q and s), stored as
// int16 for the kernels that multiply 16-bit lanes directly (vpmaddwd). Each
// group of four values is stored in the order x0, x2, x1, x3 (value j at
// q[i16_slot(j)]): the panel kernels multiply the pairs (x_j, x_j+2) that one
// 32-bit load then gives.
struct ActI16Block {
  float d;
  float s;
  std::int16_t q[32];
  std::int32_t neg8_qsum;  // -8 * sum(q), as in ActQ16Block
};
static_assert(sizeof(ActI16Block) == 76);

// offset * sum(q) of a 16-bit activation block, for the Q4_0 (-8) and Q5_0
// (-16) offsets: exact in int32 (|16 * 32 * 32258| < 2^24).
template <int kOffset, class Act>
inline std::int32_t offset_sum(const Act& b) {
  static_assert(kOffset == -8 || kOffset == -16);
  return kOffset / -8 * b.neg8_qsum;
}
constexpr int i16_slot(int j) {
  return (j & ~3) | ((j & 1) << 1) | ((j >> 1) & 1);
}

// Converts one row of `cols` floats into the activation format.
using QuantizeRowFn = void (*)(const float* x, std::size_t cols, void* out);

using TileFn = void (*)(const std::uint8_t* w, std::size_t w_stride, std::size_t nr,
                        std::size_t cols, const std::uint8_t* x, std::size_t x_stride,
                        std::size_t nc, float* y, std::size_t ldy);

struct GemmKernel {
  ActFormat act;
  QuantizeRowFn quantize;  // null for kF32 (activations are used in place)
  TileFn tile;
};

// Bytes of one activation row of `cols` values in `act` format.
std::size_t act_row_bytes(ActFormat act, std::size_t cols);

// Kernel tables; nullptr when the type has no kernel at that level. `bits`
// picks the activation format of the 32-value block types (others ignore it).
const GemmKernel* scalar_gemm_kernel(gguf::TensorType type, ActivationBits bits);
const GemmKernel* avx2_gemm_kernel(gguf::TensorType type, ActivationBits bits);

// ---- panel kernels: weights repacked once at load ----------------------------
//
// A panel holds kPanelRows consecutive weight rows (the last panel of a matrix
// is zero-padded), stored block by block: one "group" per block index holds
// that block of all kPanelRows rows, scales first, then the quants
// interleaved so one 32-byte load gives a few values of every row (layout in
// gemm_avx2_panel.cpp). The panel kernel keeps one SIMD lane per weight row,
// so no horizontal sums are needed and the weights are unpacked once per
// kMaxTileCols activation rows.
//
// Batch invariance holds per lane: output (r, c) is accumulated in lane r of
// activation row c's accumulator with the same operations in the same order
// for every nc, nr, panel position and thread split.
inline constexpr std::size_t kPanelRows = 8;

// src: rows x cols weights in GGUF layout; dst: panel_count * blocks * group_bytes.
using RepackFn = void (*)(const std::uint8_t* src, std::size_t rows, std::size_t cols,
                          std::uint8_t* dst);

// y[c * ldy + r] = dot(panel row r, activation row c) for r < nr, c < nc
// (nr <= kPanelRows, nc <= kMaxTileCols).
using PanelFn = void (*)(const std::uint8_t* panel, std::size_t cols, const std::uint8_t* x,
                         std::size_t x_stride, std::size_t nc, float* y, std::size_t ldy,
                         std::size_t nr);

// Two consecutive panels at once (the 512-bit kernels: one 32-bit lane per
// row of 16, and 32 registers, so up to kMaxPairCols activation rows per
// call): panel p at `panel`, panel p + 1 at `panel + panel_stride`;
// y[c * ldy + r] for r < nr (kPanelRows < nr <= 2 * kPanelRows), c < nc.
// Per lane the same operations as the one-panel kernel, so the results are
// bit-identical to it.
inline constexpr std::size_t kMaxPairCols = 8;
using PanelPairFn = void (*)(const std::uint8_t* panel, std::size_t panel_stride, std::size_t cols,
                             const std::uint8_t* x, std::size_t x_stride, std::size_t nc, float* y,
                             std::size_t ldy, std::size_t nr);

struct PanelKernel {
  ActFormat act;
  QuantizeRowFn quantize;
  std::size_t block_elems;  // values per block along a row
  std::size_t group_bytes;  // bytes of one block of all kPanelRows rows
  RepackFn repack;
  PanelFn panel;
  PanelPairFn pair = nullptr;  // null: one panel per call
  std::size_t pair_cols = 0;   // activation rows per pair call (<= kMaxPairCols)
};

// The AVX2 panel kernel of `type`, or nullptr when the type has none. Both
// activation widths share one repacked layout, so `bits` may change between
// prepare() and matmul(); every ISA level shares it too.
const PanelKernel* avx2_panel_kernel(gguf::TensorType type, ActivationBits bits);
// The AVX2 kernel of Q4_0 / Q4_1 / Q4_K / Q5_0 / Q5_1 against the int8 halves of
// 16-bit activations (ActQ16Block), the one-panel partner of the AVX-512
// kernels (same layout, bit-identical to the int16 kernels), or nullptr.
const PanelKernel* avx2_panel_kernel_halves(gguf::TensorType type);
// The AVX-512 VNNI panel kernel (one-panel calls are the AVX2 kernel's), or
// nullptr when the type has none at that level (gemm_avx512_panel.cpp).
const PanelKernel* avx512_panel_kernel(gguf::TensorType type, ActivationBits bits);
// For up to kMaxTileCols activation rows (decode) with 16-bit activations at
// the AVX-512 level: one-panel kernels that read the panel as one stream, as
// the AVX2 kernels do, with 256-bit vpdpbusd / vpdpwssd (Q4/Q5 types against the int8
// halves of the activations, Q8_0 / Q6_K against int16), or nullptr
// (gemm_avx2_panel.cpp; why one stream: there).
const PanelKernel* avx512_panel_kernel_narrow(gguf::TensorType type);

// Bytes of the repacked form of a rows x cols matrix.
inline std::size_t panel_matrix_bytes(const PanelKernel& k, std::size_t rows, std::size_t cols) {
  return (rows + kPanelRows - 1) / kPanelRows * (cols / k.block_elems) * k.group_bytes;
}

// ---- AMX tiles: 16 activation rows x 16 weight rows (gemm_amx.cpp) -------
//
// Over the same panels, for prefill. The activations are quantized into
// `act` rows (ActQ16Block / ActQ8Block) and then regrouped 16 rows at a
// time into the tile layout (`regroup`: x_stride apart in, nb blocks of
// `tile_block_bytes` out). One `run` computes m (a multiple of kAmxRows)
// regrouped activation rows against two consecutive panels p0, p1 (p1 null
// for a lone last panel): y[c * ldy + r] for c < m, r < nr <= 16.
// Bit-identical to the panel kernels. `scratch` holds amx_scratch_bytes(cols)
// bytes (C tiles and the unpacked B tiles).
inline constexpr std::size_t kAmxRows = 16;
inline constexpr std::size_t kAmxCBytes = 2 * 2 * 16 * 64;  // two sets of two C tiles
inline constexpr std::size_t kAmxBTileBytes = 8 * 64;
inline std::size_t amx_scratch_bytes(std::size_t cols) {
  return kAmxCBytes + cols / 32 * kAmxBTileBytes;
}
using AmxRegroupFn = void (*)(const std::uint8_t* x, std::size_t x_stride, std::size_t nb,
                              std::uint8_t* out);
using AmxPairFn = void (*)(const std::uint8_t* p0, const std::uint8_t* p1, std::size_t cols,
                           const std::uint8_t* x, std::size_t m, float* y, std::size_t ldy,
                           std::size_t nr, std::uint8_t* scratch);
// 16 rows of `cols` floats (`cols` apart) straight into the tile layout, the
// same bytes as quantize + regroup (16-bit activations).
using AmxQuantizeTilesFn = void (*)(const float* x, std::size_t cols, std::uint8_t* out);
struct AmxKernel {
  ActFormat act;
  QuantizeRowFn quantize;
  AmxRegroupFn regroup;
  AmxQuantizeTilesFn quantize_tiles;  // null: quantize, then regroup
  std::size_t tile_block_bytes;       // one block of 16 regrouped activation rows
  std::size_t group_bytes;            // of the panel layout, as PanelKernel::group_bytes
  AmxPairFn run;
};
// One block of a Q5_0 / Q5_1 panel pair (groups g0, g1; g1 null for a lone
// panel) unpacked into an AMX B tile of 512 bytes (gemm_avx512_panel.cpp;
// AVX-512 code, call only at the avx512 level or above).
namespace avx512 {
void unpack_q5_tile(const std::uint8_t* g0, const std::uint8_t* g1, std::size_t scale_bytes,
                    std::uint8_t* out);
// Activation quantizers (act_quant_avx512.cpp; AVX-512 code): the scalar ones' bytes.
void quantize_row_q8_32(const float* x, std::size_t cols, void* out);
void quantize_row_q16_32(const float* x, std::size_t cols, void* out);
void quantize_row_i16_32(const float* x, std::size_t cols, void* out);
}  // namespace avx512

// The AMX kernel of `type`, or nullptr (call only when the CPU has AMX).
const AmxKernel* amx_kernel(gguf::TensorType type, ActivationBits bits);

// Activation quantizers (scalar); the AVX2 ones produce identical bytes.
void quantize_row_q8_32(const float* x, std::size_t cols, void* out);
void quantize_row_q16_32(const float* x, std::size_t cols, void* out);
void quantize_row_i16_32(const float* x, std::size_t cols, void* out);
void quantize_row_q8_k(const float* x, std::size_t cols, void* out);

}  // namespace folio::kernels::cpu
