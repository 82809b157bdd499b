// kernels/matmul.h: products of a weight matrix (any supported GGUF type)
// with f32 activations.
//
// Weights are row-major as in GGUF: W has `rows` rows of `cols` elements,
// each row stored as cols / block_elems consecutive blocks of its type.
//
//   Y[n x rows] = X[n x cols] . W^T        (n = 1 is a matrix-vector product)
//
// A WeightMatrix is prepared once at load: it views the mmapped bytes, or
// holds a repacked copy when a SIMD layout is faster (then `repacked()` says
// so and `folio info` reports it). The fast path may quantize activations
// (16-bit blocks of 32 by default; with --activation-bits 8 llama.cpp's 8-bit
// blocks: of 32 for Q4_0/Q4_1/Q5_0/Q5_1/Q8_0, of 256 for the k-quants); the reference
// path dequantizes rows and accumulates in f32/f64 and is the oracle for tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "gguf/tensor_type.h"
#include "kernels/cpu_features.h"
#include "kernels/thread_pool.h"

namespace folio::kernels {

class WeightMatrix {
 public:
  // Throws folio::Error when the type is unsupported or sizes do not match.
  static WeightMatrix prepare(gguf::TensorType type, std::span<const std::uint8_t> bytes,
                              std::size_t rows, std::size_t cols);

  gguf::TensorType type() const { return type_; }
  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  std::span<const std::uint8_t> bytes() const { return bytes_; }
  // The GGUF-layout bytes prepare() was given (== bytes() unless repacked);
  // the reference path, tests and the scalar fallback read these.
  std::span<const std::uint8_t> file_bytes() const { return file_bytes_; }
  bool repacked() const { return owned_ != nullptr; }

 private:
  gguf::TensorType type_{};
  std::size_t rows_ = 0, cols_ = 0;
  std::span<const std::uint8_t> bytes_;  // the file's bytes or *owned_
  std::span<const std::uint8_t> file_bytes_;
  std::shared_ptr<const std::uint8_t[]> owned_;
};

// Activation precision of the fast path for the 32-value block weight types
// (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0), chosen per call (the model passes its own):
//   k16 (default): x ~= d * q, d = max|x| / 32258 per block of 32. Q4_0,
//       Q4_1 and Q8_0 multiply int16 q with the weights widened to int16
//       (vpmaddwd); Q5_0 / Q5_1 split q into two int8 halves and run the int8
//       dot products twice. On SmolLM2-135M Q4_1 the logits match HF to mean
//       KL 6e-8 (top-1 100%).
//   k8: llama.cpp's q8 activations (d = max|x| / 127): mean KL 2.2e-3,
//       top-1 97.6% on the same model; 16 products per multiply instruction
//       become 32 for the 4/5-bit types, so prefill matmuls run ~1.4-1.8x
//       faster (Q8_0 ~1.3x; large memory-bound matvecs about the same).
// The k-quants (Q2_K..Q6_K) take the same 16-bit blocks of 32 with k16
// (the sub-block scales then apply per 32 values in f32) and llama.cpp's
// 8-bit blocks of 256 with k8. On Gemma 3 270M Q4_K_M, whose attn_output
// and ffn_down are Q4_K / Q6_K, 8-bit k-quant activations alone cost top-1
// 97.6 % and mean KL 1.3e-3 against HF; 16-bit ones bring it to reference grade.
enum class ActivationBits { k8 = 8, k16 = 16 };

// "16" / "8"; throws folio::Error naming the accepted values.
ActivationBits parse_activation_bits(int bits);

// Fast path: SIMD kernels chosen once from CPUID (scalar fallback everywhere).
void matmul(const WeightMatrix& w, const float* x, std::size_t n, float* y, ThreadPool& pool,
            ActivationBits bits = ActivationBits::k16);

// One product of matmul_shared_input: y = w . x.
struct MatmulOutput {
  const WeightMatrix* w;
  float* y;
};

// y_i = W_i . x for up to kMaxSharedOutputs matrices that read the same
// activations (a layer's q, k and v; gate and up). Where they share a panel
// kernel (same type and columns, repacked, no AMX tiles at this n), the
// activations are converted once and one pass of the pool covers every
// matrix's panels: one hand-off instead of one per matrix, which is most of a
// small decode matmul's cost. Otherwise one matmul each. Results are the same
// either way (every output row runs the same kernel).
inline constexpr std::size_t kMaxSharedOutputs = 4;
void matmul_shared_input(std::span<const MatmulOutput> outs, const float* x, std::size_t n,
                         ThreadPool& pool, ActivationBits bits = ActivationBits::k16);

// The matmul kernel families that run at `isa` (for folio info), e.g.
// "avx512-vnni 16-row panels (Q4_0/...), avx2 tiles"; isa <= detected_isa().
std::string_view matmul_kernels(Isa isa);

// Reference path: exact dequantization (quant/), f32 products with f64 accumulation.
void matmul_ref(const WeightMatrix& w, const float* x, std::size_t n, float* y);

}  // namespace folio::kernels
