// kernels/cpu/gemm_avx2.h: the AVX2 kernel objects, defined in the
// gemm_avx2_*.cpp files and collected into a table by gemm_avx2.cpp
// (internal). Call them only when active_isa() is at least Isa::kAvx2.
#pragma once

#include <cstddef>

#include "kernels/cpu/gemm_kernel.h"

namespace folio::kernels::cpu::avx2 {

// act_quant_avx2.cpp
void quantize_row_q8_32(const float* x, std::size_t cols, void* out);
void quantize_row_q16_32(const float* x, std::size_t cols, void* out);
void quantize_row_i16_32(const float* x, std::size_t cols, void* out);
void quantize_row_q8_k(const float* x, std::size_t cols, void* out);

extern const GemmKernel kQ4_K, kQ5_K, kQ6_K;        // gemm_avx2_kquant.cpp: Q8_K activations
extern const GemmKernel kQ4_K16, kQ5_K16, kQ6_K16;  // the same with ActQ16Block activations
extern const GemmKernel kF32, kF16, kBF16;          // gemm_avx2_float.cpp

}  // namespace folio::kernels::cpu::avx2
