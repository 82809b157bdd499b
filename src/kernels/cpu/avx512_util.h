// kernels/cpu/avx512_util.h: the target region of the AVX-512 kernels (internal).
//
// As with avx2_util.h, AVX-512 code is compiled for its target only inside
// FOLIO_AVX512_BEGIN / FOLIO_AVX512_END (AVX-512 F/BW/DQ/VL + VNNI on top of
// AVX2), and the dispatcher calls it only when CPUID says so. Include every
// header a file needs before FOLIO_AVX512_BEGIN.
#pragma once

#include <immintrin.h>

// One string literal each: _Pragma does not concatenate adjacent literals.
// clang-format off
#if defined(__clang__)
#define FOLIO_AVX512_BEGIN _Pragma("clang attribute push(__attribute__((target(\"avx2,fma,f16c,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni\"))), apply_to = function)")
#define FOLIO_AVX512_END _Pragma("clang attribute pop")
#else
#define FOLIO_AVX512_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx2,fma,f16c,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni\")")
#define FOLIO_AVX512_END _Pragma("GCC pop_options")
#endif
// clang-format on
