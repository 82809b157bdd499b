// kernels/cpu/dot_chains.h: independent accumulator chains for the fused dot
// products of the VNNI panel kernels (internal).
//
// A panel kernel adds every product of a weight block into one int32
// register per activation row. A fused dot product (vpdpbusd / vpdpwssd,
// ~5 cycles) waits for that register, so with one or two activation rows
// (decode) a block's 8-16 products form one serial chain and the core idles.
// DotChains spreads step k of a block over chain k % kChains and fold() adds
// the chains once per block. Integer sums are exact, so the chains change no
// bit of the result. With three or more rows the rows are already independent
// chains (and the registers are needed for them): one chain each.
//
// Used by the 256-bit one-panel decode kernels (gemm_avx2_panel.cpp) and the
// 512-bit two-panel kernels (gemm_avx512_panel.cpp), both AVX-512 VL code.
#pragma once

#include <type_traits>
#include <utility>

#include "kernels/cpu/avx512_util.h"

FOLIO_AVX512_BEGIN
namespace folio::kernels::cpu {

// The int32 vector of a width (the vector types cannot be template arguments:
// their attributes would be dropped).
template <int Bits>
struct VecI32;
template <>
struct VecI32<256> {
  using type = __m256i;
  static type add(type a, type b) { return _mm256_add_epi32(a, b); }
};
template <>
struct VecI32<512> {
  using type = __m512i;
  static type add(type a, type b) { return _mm512_add_epi32(a, b); }
};

template <int Bits, int NC>
struct DotChains {
  using V = typename VecI32<Bits>::type;
  static constexpr int kChains = NC == 1 ? 4 : NC == 2 ? 2 : 1;
  V chain[kChains][NC];
  DotChains() {
    for (auto& k : chain)
      for (V& v : k) v = V{};
  }
  // The accumulator of step `step` of the block for activation row c (a
  // constant step after unrolling, so the chain is a register).
  V& at(int step, int c) { return chain[step % kChains][c]; }
  // Every chain's sum in chain[0], which it returns.
  const V* fold() {
    for (int k = 1; k < kChains; ++k)
      for (int c = 0; c < NC; ++c) chain[0][c] = VecI32<Bits>::add(chain[0][c], chain[k][c]);
    return chain[0];
  }
};

// f(std::integral_constant<int, t>{}) for t = 0 .. N-1: a block's chunk loop
// unrolled at compile time, so each step's chain is known to the compiler.
template <int N, class F>
inline void static_for(F&& f) {
  [&]<int... T>(std::integer_sequence<int, T...>) {
    (f(std::integral_constant<int, T>{}), ...);
  }
  (std::make_integer_sequence<int, N>{});
}

}  // namespace folio::kernels::cpu
FOLIO_AVX512_END
