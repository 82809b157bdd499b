// kernels/cpu/gemm_avx2.cpp: the AVX2 tile table for matrices that are not
// repacked. Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 always are (their AVX2 kernels
// are the panel kernels, gemm_avx2_panel.cpp), so they have no entry here.
// Q2_K and Q3_K have no dedicated AVX2 tile: they reuse the portable integer
// tile with the AVX2 Q8_K quantizer (which produces the same bytes as the
// scalar one).
#include "kernels/cpu/gemm_avx2.h"

namespace folio::kernels::cpu {

namespace {

GemmKernel with_avx2_quantizer(gguf::TensorType type) {
  GemmKernel k = *scalar_gemm_kernel(type, ActivationBits::k16);  // k-quants ignore bits
  k.quantize = avx2::quantize_row_q8_k;
  return k;
}

}  // namespace

const GemmKernel* avx2_gemm_kernel(gguf::TensorType type, ActivationBits /*bits*/) {
  using gguf::TensorType;
  static const GemmKernel q2_k = with_avx2_quantizer(TensorType::Q2_K);
  static const GemmKernel q3_k = with_avx2_quantizer(TensorType::Q3_K);
  switch (type) {
    case TensorType::Q2_K:
      return &q2_k;
    case TensorType::Q3_K:
      return &q3_k;
    case TensorType::Q4_K:
      return &avx2::kQ4_K;
    case TensorType::Q5_K:
      return &avx2::kQ5_K;
    case TensorType::Q6_K:
      return &avx2::kQ6_K;
    case TensorType::F32:
      return &avx2::kF32;
    case TensorType::F16:
      return &avx2::kF16;
    case TensorType::BF16:
      return &avx2::kBF16;
    default:
      return nullptr;
  }
}

}  // namespace folio::kernels::cpu
