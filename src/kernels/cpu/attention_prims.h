// kernels/cpu/attention_prims.h: the per-position vector primitives of
// attention (q.k dot and p*v accumulation) for each K/V dtype (internal).
#pragma once

#include <cstddef>

#include "kernels/attention.h"

namespace folio::kernels::cpu {

struct AttentionPrims {
  // q . k[0..n)
  float (*dot)(const float* q, const void* k, std::size_t n);
  // acc[0..n) += p * v
  void (*axpy)(float p, const void* v, float* acc, std::size_t n);
};

const AttentionPrims& scalar_attention_prims(KvDtype dtype);
const AttentionPrims& avx2_attention_prims(KvDtype dtype);

}  // namespace folio::kernels::cpu
