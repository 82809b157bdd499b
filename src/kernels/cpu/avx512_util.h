// kernels/cpu/avx512_util.h: the target region of the AVX-512 kernels (internal).
//
// As with avx2_util.h, AVX-512 code is compiled for its target only inside
// FOLIO_AVX512_BEGIN / FOLIO_AVX512_END (AVX-512 F/BW/DQ/VL + VNNI on top of
// AVX2), and the dispatcher calls it only when CPUID says so. Include every
// header a file needs before FOLIO_AVX512_BEGIN.
#pragma once

#include <immintrin.h>

#include <cstddef>

namespace folio::kernels::cpu {

// How far ahead the AVX-512 level's decode kernels (the two-panel pairs and
// the 256-bit VNNI one-panel kernels) request the weights they stream, into L2
// (`prefetcht1`). On a Xeon (model 207) the core's prefetchers left decode
// short of reads in flight: 16 KiB ahead made one-sequence decode 30-85 %
// faster in either kernel family, batches of 2-8 sequences 40-55 % (32: the
// same within the noise); 8 and 32 KiB measured within the noise of 16,
// 1-4 KiB gained less (the AVX2 kernels' 2 KiB, tuned on a Zen 3:
// kStreamAhead, avx2_util.h). Not measured on a Zen 4. docs/PERFORMANCE.md,
// "The AVX-512 level requests its weights ahead".
inline constexpr std::size_t kStreamAheadAvx512 = 16384;

}  // namespace folio::kernels::cpu

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
