// kernels/cpu/dispatch.h: the one table from an instruction-set level to the
// kernels that run at it (internal). Each query falls back level by level
// (amx -> avx512 -> avx2 -> scalar) to the best kernel the level has, so a
// level lists only what it adds. Every level computes bit-identical results
// for the integer kernels: they share one repacked layout per weight type and
// run the same per-lane floating-point operations in the same order.
#pragma once

#include <cstddef>
#include <string>

#include "gguf/tensor_type.h"
#include "kernels/cpu/attention_prims.h"
#include "kernels/cpu/gemm_kernel.h"
#include "kernels/cpu_features.h"
#include "kernels/kv_row.h"
#include "kernels/matmul.h"

namespace folio::kernels::cpu {

// The tile kernel of `type` at `isa` (never null for a type matmul supports).
const GemmKernel* gemm_kernel(Isa isa, gguf::TensorType type, ActivationBits bits);

// The panel kernel of `type` at `isa`, or nullptr when the type is not
// repacked at that level.
const PanelKernel* panel_kernel(Isa isa, gguf::TensorType type, ActivationBits bits);
// The same for a call with n activation rows: some levels have a faster
// kernel for a few rows (same layout, same results).
const PanelKernel* panel_kernel(Isa isa, gguf::TensorType type, ActivationBits bits, std::size_t n);

// The AMX tile kernel of `type` (prefill rows in multiples of kAmxRows), or
// nullptr below the amx level or for a type without one.
const AmxKernel* amx_kernel(Isa isa, gguf::TensorType type, ActivationBits bits);

const AttentionPrims& attention_prims(Isa isa, KvDtype dtype);

// Whether the element-wise ops (ops.h) take their AVX2 versions.
inline bool simd_ops(Isa isa) {
  return isa != Isa::kScalar;
}

// The kernel families `isa` runs for the model's matmuls, for folio info
// (e.g. "avx512-vnni 16-row panels (Q4_0/...), avx2 tiles"), read off the
// tables. `isa` must be at most detected_isa().
const std::string& gemm_kernel_summary(Isa isa);

}  // namespace folio::kernels::cpu
