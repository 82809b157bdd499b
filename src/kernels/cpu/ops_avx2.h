// kernels/cpu/ops_avx2.h: AVX2 versions of kernels/ops.h (internal; call only
// when active_isa() is Isa::kAvx2).
#pragma once

#include <cstddef>
#include <cstdint>

namespace folio::kernels::cpu::avx2 {

void rmsnorm(const float* x, const float* w, std::size_t n, float eps, float* y);
void rope_apply(float* x, std::size_t n_heads, std::size_t head_dim, std::size_t rot_dim,
                const float* cos_v, const float* sin_v, bool neox);
void swiglu(const float* gate, const float* up, std::size_t n, float* out);
void geglu(const float* gate, const float* up, std::size_t n, float* out);
void softmax(float* x, std::size_t n);
void add(float* y, const float* x, std::size_t n);
// n floats to fp16 (2n bytes at out), the same bits as f32_to_fp16 (base/fp16.h).
void f32_to_f16(const float* x, std::size_t n, std::uint8_t* out);

}  // namespace folio::kernels::cpu::avx2
