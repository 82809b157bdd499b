// kernels/cpu/dispatch.cpp: the level-to-kernel table (see dispatch.h).
#include "kernels/cpu/dispatch.h"

#include "kernels/cpu/gemm_avx2.h"

namespace folio::kernels::cpu {

const GemmKernel* gemm_kernel(Isa isa, gguf::TensorType type, ActivationBits bits) {
  if (isa >= Isa::kAvx2) {
    if (const GemmKernel* k = avx2_gemm_kernel(type, bits)) return k;
  }
  return scalar_gemm_kernel(type, bits);
}

const PanelKernel* panel_kernel(Isa isa, gguf::TensorType type, ActivationBits bits) {
  if (isa >= Isa::kAvx512) {
    if (const PanelKernel* k = avx512_panel_kernel(type, bits)) return k;
  }
  if (isa >= Isa::kAvx2) return avx2_panel_kernel(type, bits);
  return nullptr;
}

const PanelKernel* panel_kernel(Isa isa, gguf::TensorType type, ActivationBits bits,
                                std::size_t n) {
  if (isa >= Isa::kAvx512 && n == 1 && bits == ActivationBits::k16) {
    if (const PanelKernel* k = avx512_panel_kernel_narrow(type)) return k;
  }
  return panel_kernel(isa, type, bits);
}

const AmxKernel* amx_kernel(Isa isa, gguf::TensorType type, ActivationBits bits) {
  return isa >= Isa::kAmx ? amx_kernel(type, bits) : nullptr;
}

const AttentionPrims& attention_prims(Isa isa, KvDtype dtype) {
  return isa >= Isa::kAvx2 ? avx2_attention_prims(dtype) : scalar_attention_prims(dtype);
}

const char* gemm_kernel_summary(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar tiles";
    case Isa::kAvx2:
      return "avx2 panels (Q4_0/Q4_1/Q5_0/Q5_1/Q8_0/Q4_K/Q6_K) and tiles";
    case Isa::kAvx512:
      return "avx512-vnni 16-row panels (Q4_0/Q4_1/Q5_0/Q5_1/Q8_0/Q4_K/Q6_K), avx2 tiles";
    case Isa::kAmx:
      return "amx-int8 tiles for prefill (Q4_0/Q4_1/Q5_0/Q5_1/Q8_0/Q4_K), avx512-vnni 16-row "
             "panels (those and Q6_K), avx2 tiles";
  }
  return "unknown";
}

}  // namespace folio::kernels::cpu
