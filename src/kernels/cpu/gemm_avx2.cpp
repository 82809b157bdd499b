// kernels/cpu/gemm_avx2.cpp: the AVX2 tile table for matrices that are not
// repacked. Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 always are (their AVX2 kernels
// are the panel kernels, gemm_avx2_panel.cpp), so they have no entry here.
// Q2_K and Q3_K have no dedicated AVX2 tile: they reuse the portable integer
// tile with the AVX2 activation quantizer of the chosen width (which produces
// the same bytes as the scalar one).
#include "kernels/cpu/gemm_avx2.h"

namespace folio::kernels::cpu {

namespace {

GemmKernel with_avx2_quantizer(gguf::TensorType type, ActivationBits bits) {
  GemmKernel k = *scalar_gemm_kernel(type, bits);
  k.quantize = bits == ActivationBits::k8 ? avx2::quantize_row_q8_k : avx2::quantize_row_q16_32;
  return k;
}

}  // namespace

const GemmKernel* avx2_gemm_kernel(gguf::TensorType type, ActivationBits bits) {
  using gguf::TensorType;
  static const GemmKernel q2_k[2] = {with_avx2_quantizer(TensorType::Q2_K, ActivationBits::k8),
                                     with_avx2_quantizer(TensorType::Q2_K, ActivationBits::k16)};
  static const GemmKernel q3_k[2] = {with_avx2_quantizer(TensorType::Q3_K, ActivationBits::k8),
                                     with_avx2_quantizer(TensorType::Q3_K, ActivationBits::k16)};
  const bool b16 = bits == ActivationBits::k16;
  switch (type) {
    case TensorType::Q2_K:
      return &q2_k[b16 ? 1 : 0];
    case TensorType::Q3_K:
      return &q3_k[b16 ? 1 : 0];
    case TensorType::Q4_K:
      return b16 ? &avx2::kQ4_K16 : &avx2::kQ4_K;
    case TensorType::Q5_K:
      return b16 ? &avx2::kQ5_K16 : &avx2::kQ5_K;
    case TensorType::Q6_K:
      return b16 ? &avx2::kQ6_K16 : &avx2::kQ6_K;
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
