// kernels/cpu/gemm_avx512_panel.cpp: AVX-512 VNNI kernels over the 8-row
// panels of Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K and Q6_K (layout:
// panel_layout.h and the top of gemm_avx2_panel.cpp), two panels per call.
//
// A 512-bit vector holds chunk t of panel p in its low half and the same
// chunk of panel p + 1 in its high half, so 32-bit lane r is weight row r of
// 16, and the activation broadcasts are the AVX2 kernels' (the same values
// for every row). The integer products use the fused dot products: vpdpwssd
// (int16 pairs into int32, the 16-bit activations of the default precision)
// and vpdpbusd (unsigned x signed byte quads, 8-bit activations). Measured on
// a Xeon (Sapphire Rapids): ~2.6 vpdpwssd per cycle at either width against
// ~1.9 vpmaddwd + vpaddd pairs at 256 bits, so one 512-bit dot product does
// the work of about 2.7 AVX2 instructions.
//
// Bit-identical to the AVX2 kernels: the int32 block sums are exact in both
// (no saturation is possible in either), and each lane then runs the same f32
// operations in the same order (acc = fma(float(isum), d_r * d_x, acc), then
// acc = fma(m_r, s_x, acc) for the types with a min, and for Q4_0 / Q5_0
// against 8-bit activations; against 16-bit ones their offset is in isum).
// A one-panel call (the last panel of a matrix with an odd count) is the
// AVX2 kernel's.
//
// Every pair kernel's block loop first requests the lines stream_ahead()
// bytes further on in both of its streams (PairAhead below): decode reads
// them from memory once a token.
//
// GCC 12 reports -W(maybe-)uninitialized inside its own AVX-512 intrinsics
// (_mm512_inserti64x4, _mm512_cvtph_ps, _mm512_cvtepi32_ps start from
// _mm512_undefined_*; GCC bug 105593, fixed in GCC 13): not about our code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/avx2_util.h"
#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/dot_chains.h"
#include "kernels/cpu/gemm_kernel.h"
#include "kernels/cpu/panel_layout.h"
#include "kernels/cpu_features.h"

FOLIO_AVX512_BEGIN
namespace folio::kernels::cpu::avx512 {

namespace {

constexpr int kPairCols = static_cast<int>(kMaxPairCols);

// Chunk of 32 bytes at `a` (panel p) and `b` (panel p + 1).
inline __m512i load_pair(const std::uint8_t* a, const std::uint8_t* b) {
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
  const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

// Eight fp16 values at `a` and eight at `b` as 16 floats.
inline __m512 load_fp16_pair(const std::uint8_t* a, const std::uint8_t* b) {
  const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
  const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
  return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1));
}

// The d (or m, at Fmt::kMinOffset) of both panels' groups, fp16 or f32.
template <class Fmt>
inline __m512 load_scale_pair(const std::uint8_t* a, const std::uint8_t* b) {
  if constexpr (Fmt::kScaleWidth == 4) {
    const __m256 lo = _mm256_loadu_ps(reinterpret_cast<const float*>(a));
    const __m256 hi = _mm256_loadu_ps(reinterpret_cast<const float*>(b));
    return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
  } else {
    return load_fp16_pair(a, b);
  }
}

inline __m512i bcast4(const void* p) {
  std::int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// Requests each of a pair's two streams `ahead` bytes further on
// (stream_ahead(), kernels/cpu_features.h; rounded down to whole blocks). A
// stream that passes the end of its panel goes on in the next pair's, since a
// thread's pairs are consecutive (p, p + 1, then p + 2, p + 3), so every line
// is requested once. Addresses are formed as integers; a prefetch past the
// matrix does not fault.
template <std::size_t kGroup>
class PairAhead {
 public:
  PairAhead(const std::uint8_t* panel, std::size_t stride, std::size_t ahead)
      : panel_(panel), stride_(stride) {
    ahead = ahead / kGroup * kGroup;
    in_ = ahead % stride;
    at_ = ahead / stride * 2 * stride + in_;
  }
  // The lines of the block that far past the current one, in both
  // panels; then one block on.
  void request_next() {
    avx2::request_block_ahead<kGroup>(panel_, at_);
    avx2::request_block_ahead<kGroup>(panel_, at_ + stride_);
    at_ += kGroup;
    in_ += kGroup;
    if (in_ == stride_) {
      in_ = 0;
      at_ += stride_;
    }
  }

 private:
  const std::uint8_t* panel_;
  std::size_t stride_;
  std::size_t at_;  // bytes from panel_ to the block requested next (panel 0's stream)
  std::size_t in_;  // that block's offset within its panel
};

// Independent accumulator chains for one or two activation rows (dot_chains.h:
// a Q4 / Q8_0 pair block took ~40 cycles in L2 on one chain).
template <int NC>
using Sums = DotChains<512, NC>;

template <class Act, int NC>
struct Tile {
  const Act* xb[NC];
  __m512 acc[NC];
  Tile(const std::uint8_t* x, std::size_t x_stride) {
    for (int c = 0; c < NC; ++c) {
      xb[c] = reinterpret_cast<const Act*>(x + c * x_stride);
      acc[c] = _mm512_setzero_ps();
    }
  }
  void add_block(std::size_t i, __m512 d, const __m512i* isum) {
    for (int c = 0; c < NC; ++c) {
      const __m512 scale = _mm512_mul_ps(d, _mm512_set1_ps(xb[c][i].d));
      acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[c]), scale, acc[c]);
    }
  }
  void add_min(std::size_t i, __m512 m) {
    for (int c = 0; c < NC; ++c) acc[c] = _mm512_fmadd_ps(m, _mm512_set1_ps(xb[c][i].s), acc[c]);
  }
  void store(float* y, std::size_t ldy, std::size_t nr) const {
    const auto mask = static_cast<__mmask16>((1u << nr) - 1u);
    for (int c = 0; c < NC; ++c) _mm512_mask_storeu_ps(y + c * ldy, mask, acc[c]);
  }
};

// ---- 16-bit activations (ActI16Block): vpdpwssd -----------------------------
// As in the AVX2 int16 kernels, each 16-bit half of a row's 32-bit lane is
// one weight widened to int16, multiplied with a broadcast activation pair.

// Q4_K panels run this kernel too (FmtQ4_K: f32 scales).
template <class Fmt, int NC>
void pair_q4_i16(const std::uint8_t* panel, std::size_t stride, std::size_t cols,
                 const std::uint8_t* x, std::size_t x_stride, float* y, std::size_t ldy,
                 std::size_t nr) {
  constexpr bool kHasMin = Fmt::kScales == 2;
  const std::size_t nb = cols / 32;
  Tile<ActI16Block, NC> tile(x, x_stride);
  const __m512i m4 = _mm512_set1_epi16(0x0F);
  PairAhead<Fmt::kGroupBytes> ahead(panel, stride, stream_ahead());
  for (std::size_t i = 0; i < nb; ++i) {
    const std::uint8_t* g0 = panel + i * Fmt::kGroupBytes;
    const std::uint8_t* g1 = g0 + stride;
    ahead.request_next();
    Sums<NC> sum;
    // Q4_0: the offset joins the integer sums (-8 * sum(x_q)), exactly: the first
    // chain starts from it (a broadcast load) instead of zero.
    if constexpr (Fmt::kIntOffset != 0) {
      for (int c = 0; c < NC; ++c)
        sum.at(0, c) = _mm512_set1_epi32(offset_sum<Fmt::kIntOffset>(tile.xb[c][i]));
    }
    static_for<4>([&](auto tc) {
      constexpr int t = decltype(tc)::value;
      const __m512i raw = load_pair(g0 + Fmt::kScaleBytes + 32 * t, g1 + Fmt::kScaleBytes + 32 * t);
      const __m512i w02 = _mm512_and_si512(raw, m4);
      const __m512i w13 = _mm512_and_si512(_mm512_srli_epi16(raw, 8), m4);
      const __m512i h02 = _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4);
      const __m512i h13 = _mm512_srli_epi16(raw, 12);
      for (int c = 0; c < NC; ++c) {
        const std::int16_t* xq = tile.xb[c][i].q + 4 * t;
        __m512i& s0 = sum.at(4 * t, c);
        __m512i& s1 = sum.at(4 * t + 1, c);
        __m512i& s2 = sum.at(4 * t + 2, c);
        __m512i& s3 = sum.at(4 * t + 3, c);
        s0 = _mm512_dpwssd_epi32(s0, w02, bcast4(xq));
        s1 = _mm512_dpwssd_epi32(s1, w13, bcast4(xq + 2));
        s2 = _mm512_dpwssd_epi32(s2, h02, bcast4(xq + 16));
        s3 = _mm512_dpwssd_epi32(s3, h13, bcast4(xq + 18));
      }
    });
    tile.add_block(i, load_scale_pair<Fmt>(g0, g1), sum.fold());
    if constexpr (kHasMin)
      tile.add_min(i, load_scale_pair<Fmt>(g0 + Fmt::kMinOffset, g1 + Fmt::kMinOffset));
  }
  tile.store(y, ldy, nr);
}

template <int NC>
void pair_q8_i16(const std::uint8_t* panel, std::size_t stride, std::size_t cols,
                 const std::uint8_t* x, std::size_t x_stride, float* y, std::size_t ldy,
                 std::size_t nr) {
  const std::size_t nb = cols / 32;
  Tile<ActI16Block, NC> tile(x, x_stride);
  PairAhead<FmtQ8_0::kGroupBytes> ahead(panel, stride, stream_ahead());
  for (std::size_t i = 0; i < nb; ++i) {
    const std::uint8_t* g0 = panel + i * FmtQ8_0::kGroupBytes;
    const std::uint8_t* g1 = g0 + stride;
    ahead.request_next();
    Sums<NC> sum;
    static_for<8>([&](auto tc) {
      constexpr int t = decltype(tc)::value;
      const __m512i raw =
          load_pair(g0 + FmtQ8_0::kScaleBytes + 32 * t, g1 + FmtQ8_0::kScaleBytes + 32 * t);
      const __m512i w02 = _mm512_srai_epi16(_mm512_slli_epi16(raw, 8), 8);
      const __m512i w13 = _mm512_srai_epi16(raw, 8);
      for (int c = 0; c < NC; ++c) {
        const std::int16_t* xq = tile.xb[c][i].q + 4 * t;
        __m512i& s0 = sum.at(2 * t, c);
        __m512i& s1 = sum.at(2 * t + 1, c);
        s0 = _mm512_dpwssd_epi32(s0, w02, bcast4(xq));
        s1 = _mm512_dpwssd_epi32(s1, w13, bcast4(xq + 2));
      }
    });
    tile.add_block(i, load_fp16_pair(g0, g1), sum.fold());
  }
  tile.store(y, ldy, nr);
}

// Q6_K (FmtQ6_K): one sum per 16-value half, as the AVX2 kernel.
template <int NC>
void pair_q6k_i16(const std::uint8_t* panel, std::size_t stride, std::size_t cols,
                  const std::uint8_t* x, std::size_t x_stride, float* y, std::size_t ldy,
                  std::size_t nr) {
  using Fmt = FmtQ6_K;
  const std::size_t nb = cols / 32;
  Tile<ActI16Block, NC> tile(x, x_stride);
  PairAhead<Fmt::kGroupBytes> ahead(panel, stride, stream_ahead());
  for (std::size_t i = 0; i < nb; ++i) {
    const std::uint8_t* g0 = panel + i * Fmt::kGroupBytes;
    const std::uint8_t* g1 = g0 + stride;
    ahead.request_next();
    Sums<NC> sum[2];
    static_for<8>([&](auto tc) {
      constexpr int t = decltype(tc)::value;
      const __m512i raw =
          load_pair(g0 + Fmt::kQuantOffset + 32 * t, g1 + Fmt::kQuantOffset + 32 * t);
      const __m512i w02 = _mm512_srai_epi16(_mm512_slli_epi16(raw, 8), 8);
      const __m512i w13 = _mm512_srai_epi16(raw, 8);
      Sums<NC>& half = sum[t / 4];
      for (int c = 0; c < NC; ++c) {
        const std::int16_t* xq = tile.xb[c][i].q + 4 * t;
        __m512i& s0 = half.at(2 * t, c);
        __m512i& s1 = half.at(2 * t + 1, c);
        s0 = _mm512_dpwssd_epi32(s0, w02, bcast4(xq));
        s1 = _mm512_dpwssd_epi32(s1, w13, bcast4(xq + 2));
      }
    });
    tile.add_block(i, load_scale_pair<Fmt>(g0, g1), sum[0].fold());
    tile.add_block(i, load_scale_pair<Fmt>(g0 + Fmt::kMinOffset, g1 + Fmt::kMinOffset),
                   sum[1].fold());
  }
  tile.store(y, ldy, nr);
}

// ---- 8-bit activations (ActQ8Block): vpdpbusd -------------------------------
// (Q4_0 / Q4_1 / Q5_0 / Q5_1 against them: pair_q45 below.)

// Signed weights: vpdpbusd gets |w| as the unsigned operand and the
// activation negated where w < 0 (|activation byte| <= 127, so it fits).
template <int NC>
void pair_q8_q8(const std::uint8_t* panel, std::size_t stride, std::size_t cols,
                const std::uint8_t* x, std::size_t x_stride, float* y, std::size_t ldy,
                std::size_t nr) {
  const std::size_t nb = cols / 32;
  Tile<ActQ8Block, NC> tile(x, x_stride);
  const __m512i zero = _mm512_setzero_si512();
  PairAhead<FmtQ8_0::kGroupBytes> ahead(panel, stride, stream_ahead());
  for (std::size_t i = 0; i < nb; ++i) {
    const std::uint8_t* g0 = panel + i * FmtQ8_0::kGroupBytes;
    const std::uint8_t* g1 = g0 + stride;
    ahead.request_next();
    Sums<NC> sum;
    static_for<8>([&](auto tc) {
      constexpr int t = decltype(tc)::value;
      const __m512i w =
          load_pair(g0 + FmtQ8_0::kScaleBytes + 32 * t, g1 + FmtQ8_0::kScaleBytes + 32 * t);
      const __m512i aw = _mm512_abs_epi8(w);
      const __mmask64 neg = _mm512_movepi8_mask(w);
      for (int c = 0; c < NC; ++c) {
        const __m512i xv = bcast4(tile.xb[c][i].qs + 4 * t);
        __m512i& s = sum.at(t, c);
        s = _mm512_dpbusd_epi32(s, aw, _mm512_mask_sub_epi8(xv, neg, zero, xv));
      }
    });
    tile.add_block(i, load_fp16_pair(g0, g1), sum.fold());
  }
  tile.store(y, ldy, nr);
}

// ---- Q4 and Q5 layouts: 4- or 5-bit weights as unsigned bytes, vpdpbusd -----

// The 5th bits of chunk t of both panels (hb: each row's hbits word, panel p
// in the low 32 bytes, p + 1 in the high ones; layout at the top of
// gemm_avx2_panel.cpp) added to the low- and high-nibble values, as in the
// AVX2 kernels (the shuffle works within 128-bit lanes of four rows each).
inline void add_fifth_bits(__m512i hb, int t, __m512i& lo, __m512i& hi) {
  const __m512i spread = _mm512_add_epi8(
      _mm512_broadcast_i32x4(_mm_setr_epi8(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12)),
      _mm512_set1_epi8(static_cast<char>(t)));
  const __m512i b = _mm512_shuffle_epi8(hb, spread);  // byte 4r+k = row r's byte t
  const __m512i bit4 = _mm512_set1_epi8(0x10);
  const __mmask64 mlo = _mm512_test_epi8_mask(b, _mm512_set1_epi32(0x08040201));
  const __mmask64 mhi = _mm512_test_epi8_mask(b, _mm512_set1_epi32(static_cast<int>(0x80402010u)));
  lo = _mm512_or_si512(lo, _mm512_maskz_mov_epi8(mlo, bit4));
  hi = _mm512_or_si512(hi, _mm512_maskz_mov_epi8(mhi, bit4));
}

// Any Q4/Q5 layout (Q4_0, Q4_1, Q4_K, Q5_0, Q5_1). Against 8-bit activations
// (ActQ8Block) one dot product per half of the chunk; against 16-bit ones (ActQ16Block, q = 254 *
// hi + lo) the same for each int8 half, combined exactly as 254 * sum_hi + sum_lo.
template <class Fmt, class Act, int NC>
void pair_q45(const std::uint8_t* panel, std::size_t stride, std::size_t cols,
              const std::uint8_t* x, std::size_t x_stride, float* y, std::size_t ldy,
              std::size_t nr) {
  constexpr bool kHasMin = Fmt::kScales == 2, kFive = Fmt::kHbits != 0;
  constexpr int kOffset = Fmt::kIntOffset;  // Q4_0 / Q5_0: x = d * (q + offset)
  constexpr bool kTwo = std::is_same_v<Act, ActQ16Block>;
  const std::size_t nb = cols / 32;
  Tile<Act, NC> tile(x, x_stride);
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  PairAhead<Fmt::kGroupBytes> ahead(panel, stride, stream_ahead());
  for (std::size_t i = 0; i < nb; ++i) {
    const std::uint8_t* g0 = panel + i * Fmt::kGroupBytes;
    const std::uint8_t* g1 = g0 + stride;
    ahead.request_next();
    __m512i hb = _mm512_setzero_si512();
    if constexpr (kFive) hb = load_pair(g0 + Fmt::kScaleBytes, g1 + Fmt::kScaleBytes);
    Sums<NC> sum, sum_lo;  // sum_lo: the low halves of 16-bit activations
    static_for<4>([&](auto tc) {
      constexpr int t = decltype(tc)::value;
      const __m512i raw =
          load_pair(g0 + Fmt::kQuantOffset + 32 * t, g1 + Fmt::kQuantOffset + 32 * t);
      __m512i lo = _mm512_and_si512(raw, m4);
      __m512i hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4);
      if constexpr (kFive) add_fifth_bits(hb, t, lo, hi);
      for (int c = 0; c < NC; ++c) {
        const Act& a = tile.xb[c][i];
        __m512i& s0 = sum.at(2 * t, c);
        __m512i& s1 = sum.at(2 * t + 1, c);
        if constexpr (kTwo) {
          __m512i& l0 = sum_lo.at(2 * t, c);
          __m512i& l1 = sum_lo.at(2 * t + 1, c);
          s0 = _mm512_dpbusd_epi32(s0, lo, bcast4(a.hi + 4 * t));
          s1 = _mm512_dpbusd_epi32(s1, hi, bcast4(a.hi + 16 + 4 * t));
          l0 = _mm512_dpbusd_epi32(l0, lo, bcast4(a.lo + 4 * t));
          l1 = _mm512_dpbusd_epi32(l1, hi, bcast4(a.lo + 16 + 4 * t));
        } else {
          s0 = _mm512_dpbusd_epi32(s0, lo, bcast4(a.qs + 4 * t));
          s1 = _mm512_dpbusd_epi32(s1, hi, bcast4(a.qs + 16 + 4 * t));
        }
      }
    });
    const __m512i* total = sum.fold();
    __m512i combined[NC];
    if constexpr (kTwo) {
      const __m512i* total_lo = sum_lo.fold();
      for (int c = 0; c < NC; ++c) {
        combined[c] = _mm512_add_epi32(_mm512_mullo_epi32(total[c], _mm512_set1_epi32(kActQ16Base)),
                                       total_lo[c]);
        // 16-bit activations: the offset joins the integer sums, exactly (panel_layout.h).
        if constexpr (kOffset != 0) {
          combined[c] =
              _mm512_add_epi32(combined[c], _mm512_set1_epi32(offset_sum<kOffset>(tile.xb[c][i])));
        }
      }
      total = combined;
    }
    const __m512 d = load_scale_pair<Fmt>(g0, g1);
    tile.add_block(i, d, total);
    if constexpr (kHasMin) {
      tile.add_min(i, load_scale_pair<Fmt>(g0 + Fmt::kMinOffset, g1 + Fmt::kMinOffset));
    } else if constexpr (kOffset != 0 && !kTwo) {
      tile.add_min(i, _mm512_mul_ps(d, _mm512_set1_ps(static_cast<float>(kOffset))));
    }
  }
  tile.store(y, ldy, nr);
}

template <template <int> class K, int NC = kPairCols>
void dispatch_nc(const std::uint8_t* panel, std::size_t stride, std::size_t cols,
                 const std::uint8_t* x, std::size_t x_stride, std::size_t nc, float* y,
                 std::size_t ldy, std::size_t nr) {
  if constexpr (NC > 1) {
    if (nc < NC) return dispatch_nc<K, NC - 1>(panel, stride, cols, x, x_stride, nc, y, ldy, nr);
  }
  K<NC>::run(panel, stride, cols, x, x_stride, y, ldy, nr);
}

template <class Fmt>
struct Q4I16 {
  template <int NC>
  struct K {
    static constexpr auto run = pair_q4_i16<Fmt, NC>;
  };
};
template <int NC>
struct Q8I16 {
  static constexpr auto run = pair_q8_i16<NC>;
};
template <int NC>
struct Q6KI16 {
  static constexpr auto run = pair_q6k_i16<NC>;
};
template <int NC>
struct Q8Q8 {
  static constexpr auto run = pair_q8_q8<NC>;
};
template <class Fmt, class Act>
struct Q45 {
  template <int NC>
  struct K {
    static constexpr auto run = pair_q45<Fmt, Act, NC>;
  };
};

}  // namespace

// One block of a Q5 panel pair as the AMX kernels' B tile (gemm_amx.cpp):
// row t (t < 4) = the 5-bit values 4t..4t+3 of each of the 16 rows, row
// 4 + t = values 16+4t.. (g1 null: a lone last panel, zero rows 8..15).
void unpack_q5_tile(const std::uint8_t* g0, const std::uint8_t* g1, std::size_t scale_bytes,
                    std::uint8_t* out) {
  alignas(64) static const std::uint8_t kZero[FmtQ5_1::kGroupBytes] = {};
  if (g1 == nullptr) g1 = kZero;
  const __m512i hb = load_pair(g0 + scale_bytes, g1 + scale_bytes);
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  const std::size_t q = scale_bytes + kPanelRows * 4;
  for (int t = 0; t < 4; ++t) {
    const __m512i raw = load_pair(g0 + q + 32 * t, g1 + q + 32 * t);
    __m512i lo = _mm512_and_si512(raw, m4);
    __m512i hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4);
    add_fifth_bits(hb, t, lo, hi);
    _mm512_storeu_si512(out + 64 * t, lo);
    _mm512_storeu_si512(out + 64 * (4 + t), hi);
  }
}

constexpr PanelPairFn kPairQ4_0I16 = dispatch_nc<Q4I16<FmtQ4_0>::K>;
constexpr PanelPairFn kPairQ4_1I16 = dispatch_nc<Q4I16<FmtQ4_1>::K>;
constexpr PanelPairFn kPairQ4_KI16 = dispatch_nc<Q4I16<FmtQ4_K>::K>;
constexpr PanelPairFn kPairQ6_KI16 = dispatch_nc<Q6KI16>;
constexpr PanelPairFn kPairQ8_0I16 = dispatch_nc<Q8I16>;
constexpr PanelPairFn kPairQ4_0Q8 = dispatch_nc<Q45<FmtQ4_0, ActQ8Block>::K>;
constexpr PanelPairFn kPairQ4_1Q8 = dispatch_nc<Q45<FmtQ4_1, ActQ8Block>::K>;
constexpr PanelPairFn kPairQ8_0Q8 = dispatch_nc<Q8Q8>;
constexpr PanelPairFn kPairQ5_0Q16 = dispatch_nc<Q45<FmtQ5_0, ActQ16Block>::K>;
constexpr PanelPairFn kPairQ5_1Q16 = dispatch_nc<Q45<FmtQ5_1, ActQ16Block>::K>;
constexpr PanelPairFn kPairQ5_0Q8 = dispatch_nc<Q45<FmtQ5_0, ActQ8Block>::K>;
constexpr PanelPairFn kPairQ5_1Q8 = dispatch_nc<Q45<FmtQ5_1, ActQ8Block>::K>;

}  // namespace folio::kernels::cpu::avx512
FOLIO_AVX512_END

namespace folio::kernels::cpu {

namespace {

// The AVX-512 quantizer of `act` (same bytes as the AVX2 one it replaces).
QuantizeRowFn quantizer(ActFormat act, QuantizeRowFn avx2) {
  switch (act) {
    case ActFormat::kQ8_32:
      return avx512::quantize_row_q8_32;
    case ActFormat::kQ16_32:
      return avx512::quantize_row_q16_32;
    case ActFormat::kI16_32:
      return avx512::quantize_row_i16_32;
    default:
      return avx2;
  }
}

// The AVX2 kernel `k` (its layout and one-panel calls) with this level's
// quantizer and two-panel kernel `pair`.
PanelKernel at_this_level(PanelKernel k, PanelPairFn pair) {
  k.quantize = quantizer(k.act, k.quantize);
  k.pair = pair;
  k.pair_cols = kMaxPairCols;
  return k;
}

// 16-bit Q4/Q5 types: the int8-halves form of the activations (ActQ16Block),
// with the AVX2 halves kernel for one-panel calls.
PanelKernel with_halves_pair(gguf::TensorType type, PanelPairFn pair) {
  return at_this_level(*avx2_panel_kernel_halves(type), pair);
}

PanelKernel with_pair(gguf::TensorType type, ActivationBits bits, PanelPairFn pair) {
  return at_this_level(*avx2_panel_kernel(type, bits), pair);
}

}  // namespace

const PanelKernel* avx512_panel_kernel(gguf::TensorType type, ActivationBits bits) {
  using ActivationBits::k16, ActivationBits::k8;
  using gguf::TensorType;
  static const PanelKernel table[2][kBlockTypes] = {
      {with_pair(TensorType::Q4_0, k16, avx512::kPairQ4_0I16),
       with_pair(TensorType::Q4_1, k16, avx512::kPairQ4_1I16),
       with_halves_pair(TensorType::Q5_0, avx512::kPairQ5_0Q16),
       with_halves_pair(TensorType::Q5_1, avx512::kPairQ5_1Q16),
       with_pair(TensorType::Q8_0, k16, avx512::kPairQ8_0I16)},
      {with_pair(TensorType::Q4_0, k8, avx512::kPairQ4_0Q8),
       with_pair(TensorType::Q4_1, k8, avx512::kPairQ4_1Q8),
       with_pair(TensorType::Q5_0, k8, avx512::kPairQ5_0Q8),
       with_pair(TensorType::Q5_1, k8, avx512::kPairQ5_1Q8),
       with_pair(TensorType::Q8_0, k8, avx512::kPairQ8_0Q8)}};
  static const PanelKernel q4_k = with_pair(TensorType::Q4_K, k16, avx512::kPairQ4_KI16);
  static const PanelKernel q6_k = with_pair(TensorType::Q6_K, k16, avx512::kPairQ6_KI16);
  if (type == TensorType::Q4_K) return bits == k16 ? &q4_k : nullptr;
  if (type == TensorType::Q6_K) return bits == k16 ? &q6_k : nullptr;
  const auto& row = table[bits == k8 ? 1 : 0];
  const int index = block_type_index(type);
  return index < 0 ? nullptr : &row[index];
}

}  // namespace folio::kernels::cpu
