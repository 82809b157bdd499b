// kernels/cpu/gemm_avx2_panel.cpp: repacked 8-row panels for the 32-value
// block formats Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0, and for Q4_K and Q6_K (their
// 32-value blocks as Q4_1 / Q8_0-like blocks with exact f32 scales, 16-bit
// activations; see FmtQ4_K and FmtQ6_K in panel_layout.h), and their AVX2 kernels (the fast path
// for prefill GEMM and decode matvec; see "panel kernels" in gemm_kernel.h).
//
// Group layout (one 32-value block of 8 rows r = 0..7):
//   scales  fp16 d of rows 0..7 (16 bytes), then for Q4_1/Q5_1 fp16 m of rows 0..7
//   hbits   Q5 only, 32 bytes: bytes 4r..4r+3 = row r's 5th bits regrouped by
//           chunk: bit k of byte t is element 4t+k's, bit 4+k element 16+4t+k's
//   quants  chunks t = 0..Q/4-1 of 32 bytes (Q = quant bytes per block):
//           bytes 4r..4r+3 of chunk t = row r's qs[4t..4t+3]
// Same size as the GGUF bytes. For Q4/Q5 formats, the low nibbles of chunk t
// are elements 4t..4t+3 of every row and the high nibbles elements 16+4t..;
// for Q8_0 chunk t holds elements 4t..4t+3. A 4-byte broadcast of the
// matching activation values then lines up with every row, and maddubs +
// madd leave row r's partial dot in int32 lane r. Q5's 5th bits for chunk t
// are byte t of each row's hbits word, spread over the row's 4 bytes with
// one shuffle and turned into 0x10 / 0x00 with a mask compare.
//
// Per block and lane (weight row r, activation row c), in this order:
//   acc = fma(float(isum), d_r * d_x, acc);  acc = fma(m_r, s_x, acc)
// (Q4_1, Q5_1, Q4_K: their minimum; Q4_0 / Q5_0 against 8-bit activations:
// m_r = -8 d_r / -16 d_r; Q8_0, Q6_K, and Q4_0 / Q5_0 against 16-bit ones: no
// m term, their offset is in isum as offset * sum(x_q), from the activation
// block's neg8_qsum), isum exact in int32, so every kernel variant below gives
// bit-identical results for the same activation values. 16-bit activations:
//   Q4_0, Q4_1, Q8_0: int16 activations (ActI16Block) times the weights
//     widened to int16 with vpmaddwd (panel_q4_i16, panel_q8_i16); each
//     16-bit half of a row's 32-bit lane becomes one weight, so the products
//     land in lane r directly (one accumulator per activation row, no spills
//     at 4 rows, no horizontal adds).
//   Q5_0, Q5_1: ActQ16Block (q_x = 254 * hi + lo); the quants are dotted
//     with each int8 half in turn (reloaded from L1) and isum = 254 * isum_hi
//     + isum_lo (the 254 folded into the hi half's widening madd). An int16
//     variant was slower here (measured: the 5th-bit expansion to int16
//     lanes costs more than it saves).
// Either way about twice the integer work of 8-bit activations, same float work.
//
// Every AVX2 kernel's block loop first requests the lines stream_ahead() bytes
// further on in its stream (request_block_ahead, avx2_util.h): the rest of
// its panel, then the next one, since a thread's panels are consecutive.
// Decode reads them from DRAM; prefill and 8-sequence batches, whose panels
// are reused from cache, measured the same with and without. The 256-bit
// VNNI kernels at the end of this file request ahead the same way.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "base/fp16.h"
#include "kernels/cpu/avx2_util.h"
#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/dot_chains.h"
#include "kernels/cpu/gemm_avx2.h"
#include "kernels/cpu/gemm_kernel.h"
#include "kernels/cpu/kquant_unpack.h"
#include "kernels/cpu/panel_layout.h"
#include "kernels/cpu_features.h"
#include "quant/block_kquant.h"

namespace folio::kernels::cpu {

namespace {

// Row r's qh word (bit j = element j's 5th bit) regrouped by chunk as in the
// hbits layout above.
std::uint32_t regroup_qh(std::uint32_t qh) {
  std::uint32_t out = 0;
  for (int t = 0; t < 4; ++t) {
    for (int k = 0; k < 4; ++k) {
      out |= ((qh >> (4 * t + k)) & 1u) << (8 * t + k);
      out |= ((qh >> (16 + 4 * t + k)) & 1u) << (8 * t + 4 + k);
    }
  }
  return out;
}

template <class Fmt>
void repack(const std::uint8_t* src, std::size_t rows, std::size_t cols, std::uint8_t* dst) {
  constexpr int kScales = Fmt::kScales;
  constexpr std::size_t kChunks = Fmt::kQuantBytes / 4;
  const std::size_t nb = cols / 32, row_bytes = nb * Fmt::kBlockBytes;
  const std::size_t panels = (rows + kPanelRows - 1) / kPanelRows;
  std::memset(dst, 0, panels * nb * Fmt::kGroupBytes);  // padding rows: d = m = 0, q = 0
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t p = r / kPanelRows, lane = r % kPanelRows;
    for (std::size_t i = 0; i < nb; ++i) {
      const std::uint8_t* b = src + r * row_bytes + i * Fmt::kBlockBytes;
      std::uint8_t* g = dst + (p * nb + i) * Fmt::kGroupBytes;
      for (int s = 0; s < kScales; ++s) std::memcpy(g + 16 * s + 2 * lane, b + 2 * s, 2);
      if constexpr (Fmt::kHbits != 0) {
        std::uint32_t qh;
        std::memcpy(&qh, b + 2 * kScales, 4);  // little-endian, as the file stores it
        const std::uint32_t h = regroup_qh(qh);
        std::memcpy(g + Fmt::kScaleBytes + 4 * lane, &h, 4);
      }
      const std::uint8_t* qs = b + 2 * kScales + Fmt::kHbits;
      for (std::size_t t = 0; t < kChunks; ++t) {
        std::memcpy(g + Fmt::kQuantOffset + 32 * t + 4 * lane, qs + 4 * t, 4);
      }
    }
  }
}

// k-quant rows into panels of Fmt (FmtQ4_K / FmtQ6_K, see panel_layout.h):
// block 8 i + j of a row is 32-value block j of super-block i, which
// `decode(block, j, s0, s1, bytes)` turns into its two f32 scales and its
// Fmt::kQuantBytes quant bytes in the panel's value order.
template <class Fmt, class Block, class Decode>
void repack_k(const std::uint8_t* src, std::size_t rows, std::size_t cols, std::uint8_t* dst,
              Decode decode) {
  const std::size_t nsb = cols / quant::kQK_K, nb = cols / 32;
  const std::size_t panels = (rows + kPanelRows - 1) / kPanelRows;
  std::memset(dst, 0, panels * nb * Fmt::kGroupBytes);  // padding rows: scales 0, quants 0
  const auto* blocks = reinterpret_cast<const Block*>(src);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t p = r / kPanelRows, lane = r % kPanelRows;
    for (std::size_t i = 0; i < nsb; ++i) {
      for (int j = 0; j < 8; ++j) {
        float s0 = 0, s1 = 0;
        std::uint8_t q[Fmt::kQuantBytes];
        decode(blocks[r * nsb + i], j, s0, s1, q);
        std::uint8_t* g = dst + (p * nb + 8 * i + static_cast<std::size_t>(j)) * Fmt::kGroupBytes;
        std::memcpy(g + 4 * lane, &s0, 4);
        std::memcpy(g + Fmt::kMinOffset + 4 * lane, &s1, 4);
        for (int t = 0; t < Fmt::kQuantBytes / 4; ++t) {
          std::memcpy(g + Fmt::kQuantOffset + 32 * t + 4 * lane, q + 4 * t, 4);
        }
      }
    }
  }
}

// Q4_K: scales d * sc_j and -dmin * mn_j; nibble byte l = values l, l + 16
// of sub-block j.
void repack_q4_k(const std::uint8_t* src, std::size_t rows, std::size_t cols, std::uint8_t* dst) {
  repack_k<FmtQ4_K, quant::BlockQ4_K>(
      src, rows, cols, dst,
      [](const quant::BlockQ4_K& b, int j, float& dj, float& mj, std::uint8_t* nib) {
        int sc = 0, mn = 0;
        k4_scale_min(b.scales, j, sc, mn);
        dj = fp16_to_f32(b.d) * static_cast<float>(sc);
        mj = -fp16_to_f32(b.dmin) * static_cast<float>(mn);
        const std::uint8_t* q = b.qs + 32 * (j / 2);
        const int shift = 4 * (j % 2);
        for (int l = 0; l < 16; ++l) {
          nib[l] = static_cast<std::uint8_t>(((q[l] >> shift) & 0x0F) |
                                             (((q[l + 16] >> shift) & 0x0F) << 4));
        }
      });
}

// Q6_K: scales d * sc of the block's two 16-value halves; bytes q - 32 (value
// order as in quant/dequant_kquant.cpp).
void repack_q6_k(const std::uint8_t* src, std::size_t rows, std::size_t cols, std::uint8_t* dst) {
  repack_k<FmtQ6_K, quant::BlockQ6_K>(
      src, rows, cols, dst,
      [](const quant::BlockQ6_K& b, int k, float& da, float& db, std::uint8_t* q) {
        const int h = k / 4, s = k % 4;
        const std::uint8_t* ql = b.ql + 64 * h + 32 * (s % 2);
        const std::uint8_t* qh = b.qh + 32 * h;
        for (int l = 0; l < 32; ++l) {
          const int v = ((ql[l] >> (4 * (s / 2))) & 0x0F) | ((qh[l] >> (2 * s)) & 3) << 4;
          q[l] = static_cast<std::uint8_t>(static_cast<std::int8_t>(v - 32));
        }
        const float d = fp16_to_f32(b.d);
        da = d * static_cast<float>(b.scales[2 * k]);
        db = d * static_cast<float>(b.scales[2 * k + 1]);
      });
}

}  // namespace

FOLIO_AVX2_BEGIN
namespace avx2 {

namespace {

__m256i bcast4(const std::int8_t* p) {
  std::int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

__m256i load32(const std::uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

__m256 load_fp16x8(const std::uint8_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// The d (and m) of a group's 8 rows, fp16 or f32 as the layout stores them.
template <class Fmt>
__m256 load_d(const std::uint8_t* g) {
  if constexpr (Fmt::kScaleWidth == 4) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(g));
  } else {
    return load_fp16x8(g);
  }
}
template <class Fmt>
__m256 load_m(const std::uint8_t* g) {
  return load_d<Fmt>(g + Fmt::kMinOffset);
}

void store_rows(const __m256* acc, std::size_t nc, float* y, std::size_t ldy, std::size_t nr) {
  for (std::size_t c = 0; c < nc; ++c) {
    if (nr == kPanelRows) {
      _mm256_storeu_ps(y + c * ldy, acc[c]);
    } else {
      alignas(32) float tmp[kPanelRows];
      _mm256_store_ps(tmp, acc[c]);
      std::memcpy(y + c * ldy, tmp, nr * sizeof(float));
    }
  }
}

// Per-tile state shared by the panel kernels: the NC activation rows viewed
// as blocks of their format, and one f32 accumulator (8 weight rows) each.
template <class Act, int NC>
struct Tile {
  const Act* xb[NC];
  __m256 acc[NC];
  Tile(const std::uint8_t* x, std::size_t x_stride) {
    for (int c = 0; c < NC; ++c) {
      xb[c] = reinterpret_cast<const Act*>(x + c * x_stride);
      acc[c] = _mm256_setzero_ps();
    }
  }
  // acc += float(isum) * (d_r * d_x), in this order for every kernel.
  void add_block(std::size_t i, __m256 d, const __m256i* isum) {
    for (int c = 0; c < NC; ++c) {
      const __m256 scale = _mm256_mul_ps(d, _mm256_set1_ps(xb[c][i].d));
      acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[c]), scale, acc[c]);
    }
  }
  // ... then acc += m_r * s_x (the min term; Q4_0 / Q5_0's offset against 8-bit activations).
  void add_min(std::size_t i, __m256 m) {
    for (int c = 0; c < NC; ++c) acc[c] = _mm256_fmadd_ps(m, _mm256_set1_ps(xb[c][i].s), acc[c]);
  }
};

// Activation values of block i as int8 halves: one half for ActQ8Block, the
// hi and lo halves of q = 254 * hi + lo for ActQ16Block.
template <class Act>
inline constexpr int kHalves = std::is_same_v<Act, ActQ16Block> ? 2 : 1;

// offset * sum(x_q) of one activation block, the offset term of Q4_0 / Q5_0
// against 16-bit activations with the weights unpacked unsigned, exact in
// int32 (gemm_kernel.h, offset_sum): the start of a block's sum in place of
// zero, or (add_offset_sums) added to each activation row's finished sum.
template <int kOffset, class Act>
inline __m256i offset_start(const Act& xb) {
  return _mm256_set1_epi32(offset_sum<kOffset>(xb));
}
template <int kOffset, int NC, class Act>
inline void add_offset_sums(const Act* const* xb, std::size_t i, __m256i* isum) {
  for (int c = 0; c < NC; ++c) isum[c] = _mm256_add_epi32(isum[c], offset_start<kOffset>(xb[c][i]));
}

template <int kHalf>
inline const std::int8_t* half_bytes(const ActQ8Block& b) {
  return b.qs;
}
template <int kHalf>
inline const std::int8_t* half_bytes(const ActQ16Block& b) {
  return kHalf == 0 ? b.hi : b.lo;
}

// The madd weight that widens int16 pair sums of half kHalf to int32: the hi
// half of a 16-bit activation is worth kActQ16Base, so its madd multiplies by
// that instead of 1 and the halves then simply add (exact: |254 * pair sum|
// stays far below 2^31), saving a vpmulld per block and activation row.
template <class Act, int kHalf>
inline __m256i half_weight() {
  return _mm256_set1_epi16(kHalves<Act> == 2 && kHalf == 0 ? kActQ16Base : 1);
}

// Q5: adds the 5th bits of chunk t (byte t of each row's hbits word) to the
// unpacked low- and high-nibble values.
inline void add_fifth_bits(__m256i hbits, int t, __m256i& lo, __m256i& hi) {
  const __m256i spread =
      _mm256_add_epi8(_mm256_setr_epi8(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12,  //
                                       0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12),
                      _mm256_set1_epi8(static_cast<char>(t)));
  const __m256i b = _mm256_shuffle_epi8(hbits, spread);  // byte 4r+k = row r's byte t
  const __m256i mlo = _mm256_set1_epi32(0x08040201),
                mhi = _mm256_set1_epi32(static_cast<int>(0x80402010u));
  const __m256i bit4 = _mm256_set1_epi8(0x10);
  lo =
      _mm256_or_si256(lo, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(b, mlo), mlo), bit4));
  hi =
      _mm256_or_si256(hi, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(b, mhi), mhi), bit4));
}

// Chunk t of a Q4 (or, with kFive, Q5) group against NC activation rows
// (xq[c]: 32 int8 values): low nibbles are elements 4t.., high nibbles
// 16+4t.. of every row.
template <int NC, bool kFive>
inline void q4_step(const std::uint8_t* q, __m256i hbits, int t, const std::int8_t* const* xq,
                    __m256i* s16) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i raw = load32(q + 32 * t);
  __m256i lo = _mm256_and_si256(raw, m4);
  __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
  if constexpr (kFive) add_fifth_bits(hbits, t, lo, hi);
  for (int c = 0; c < NC; ++c) {
    s16[c] = _mm256_add_epi16(s16[c], _mm256_maddubs_epi16(lo, bcast4(xq[c] + 4 * t)));
    s16[c] = _mm256_add_epi16(s16[c], _mm256_maddubs_epi16(hi, bcast4(xq[c] + 16 + 4 * t)));
  }
}

// Chunks t0..t1-1 of a group into the int16 sums s16 (zeroed first).
template <int NC, bool kFive>
inline void q4_chunks(const std::uint8_t* q, __m256i hbits, int t0, int t1,
                      const std::int8_t* const* xq, __m256i* s16) {
  for (int c = 0; c < NC; ++c) s16[c] = _mm256_setzero_si256();
  // Wide tiles are not unrolled: unrolled, GCC regroups the int16 adds into
  // trees and spills most products to the stack.
  if constexpr (NC <= 2) {
    for (int t = t0; t < t1; ++t) q4_step<NC, kFive>(q, hbits, t, xq, s16);
  } else {
#pragma GCC unroll 1
    for (int t = t0; t < t1; ++t) q4_step<NC, kFive>(q, hbits, t, xq, s16);
  }
}

// One int8 half of block i against a Q4 group: the int16 sums of 8 maddubs
// (|pair| <= 2*15*128) stay below 30720, so they add in int16 and need one
// madd per block, half and activation row. Q5 values reach 31, so 4 maddubs
// (|sum| <= 4*2*31*128 = 31744) are widened at a time: two madds.
template <class Act, int kHalf, int NC, bool kFive>
inline void q4_half(const std::uint8_t* q, __m256i hbits, const Act* const* xb, std::size_t i,
                    __m256i* i32) {
  const __m256i weight = half_weight<Act, kHalf>();
  const std::int8_t* xq[NC];
  __m256i s16[NC];
  for (int c = 0; c < NC; ++c) xq[c] = half_bytes<kHalf>(xb[c][i]);
  if constexpr (kFive) {
    q4_chunks<NC, kFive>(q, hbits, 0, 2, xq, s16);
    for (int c = 0; c < NC; ++c) {
      const __m256i d = _mm256_madd_epi16(s16[c], weight);
      i32[c] = kHalf == 0 ? d : _mm256_add_epi32(i32[c], d);
    }
    q4_chunks<NC, kFive>(q, hbits, 2, 4, xq, s16);
    for (int c = 0; c < NC; ++c)
      i32[c] = _mm256_add_epi32(i32[c], _mm256_madd_epi16(s16[c], weight));
  } else {
    q4_chunks<NC, kFive>(q, hbits, 0, 4, xq, s16);
    for (int c = 0; c < NC; ++c) {
      const __m256i d = _mm256_madd_epi16(s16[c], weight);
      i32[c] = kHalf == 0 ? d : _mm256_add_epi32(i32[c], d);
    }
  }
}

// Q4_0 / Q4_1 (kFive: Q5_0 / Q5_1) against 8-bit (ActQ8Block) or 16-bit
// (ActQ16Block) activations.
template <class Fmt, class Act, int NC>
void panel_q4(const std::uint8_t* panel, std::size_t cols, const std::uint8_t* x,
              std::size_t x_stride, float* y, std::size_t ldy, std::size_t nr) {
  constexpr bool kHasMin = Fmt::kScales == 2, kFive = Fmt::kHbits != 0;
  constexpr int kOffset = Fmt::kIntOffset;  // Q4_0 / Q5_0: x = d * (q + offset)
  // 16-bit activations: the offset joins the integer sums (offset * sum(x_q)), exactly.
  constexpr bool kOffsetInSums = kOffset != 0 && kHalves<Act> == 2;
  const std::size_t nb = cols / 32;
  Tile<Act, NC> tile(x, x_stride);
  const std::size_t ahead = stream_ahead();
  for (std::size_t i = 0; i < nb; ++i) {
    const std::uint8_t* g = panel + i * Fmt::kGroupBytes;
    request_block_ahead<Fmt::kGroupBytes>(g, ahead);
    const std::uint8_t* q = g + Fmt::kQuantOffset;
    const __m256i hbits = kFive ? load32(g + Fmt::kScaleBytes) : _mm256_setzero_si256();
    __m256i i32[NC];
    q4_half<Act, 0, NC, kFive>(q, hbits, tile.xb, i, i32);
    if constexpr (kHalves<Act> == 2) q4_half<Act, 1, NC, kFive>(q, hbits, tile.xb, i, i32);
    if constexpr (kOffsetInSums) add_offset_sums<kOffset, NC>(tile.xb, i, i32);
    const __m256 d = load_d<Fmt>(g);
    tile.add_block(i, d, i32);
    if constexpr (kHasMin) {
      tile.add_min(i, load_m<Fmt>(g));
    } else if constexpr (kOffset != 0 && !kOffsetInSums) {
      tile.add_min(i, _mm256_mul_ps(d, _mm256_set1_ps(static_cast<float>(kOffset))));
    }
  }
  store_rows(tile.acc, NC, y, ldy, nr);
}

// Q8_0 against 8-bit activations (ActQ8Block). Signed weights: maddubs gets
// |w| and the activation with w's sign (|activation byte| <= 127, so the
// sign move cannot overflow); pair sums reach 2*128*127, so every maddubs is
// widened by its own madd.
template <int NC>
inline void q8_step(const std::uint8_t* q, int t, const ActQ8Block* const* xb, std::size_t i,
                    __m256i* s32) {
  const __m256i w = load32(q + 32 * t);
  const __m256i aw = _mm256_sign_epi8(w, w);
  for (int c = 0; c < NC; ++c) {
    const __m256i xs = _mm256_sign_epi8(bcast4(xb[c][i].qs + 4 * t), w);
    s32[c] = _mm256_add_epi32(
        s32[c], _mm256_madd_epi16(_mm256_maddubs_epi16(aw, xs), _mm256_set1_epi16(1)));
  }
}

template <int NC>
void panel_q8(const std::uint8_t* panel, std::size_t cols, const std::uint8_t* x,
              std::size_t x_stride, float* y, std::size_t ldy, std::size_t nr) {
  const std::size_t nb = cols / 32;
  Tile<ActQ8Block, NC> tile(x, x_stride);
  const std::size_t ahead = stream_ahead();
  for (std::size_t i = 0; i < nb; ++i) {
    const std::uint8_t* g = panel + i * FmtQ8_0::kGroupBytes;
    request_block_ahead<FmtQ8_0::kGroupBytes>(g, ahead);
    const std::uint8_t* q = g + FmtQ8_0::kScaleBytes;
    __m256i s32[NC];
    for (int c = 0; c < NC; ++c) s32[c] = _mm256_setzero_si256();
    if constexpr (NC <= 2) {  // see q4_chunks about unrolling
      for (int t = 0; t < 8; ++t) q8_step<NC>(q, t, tile.xb, i, s32);
    } else {
#pragma GCC unroll 1
      for (int t = 0; t < 8; ++t) q8_step<NC>(q, t, tile.xb, i, s32);
    }
    tile.add_block(i, load_fp16x8(g), s32);
  }
  store_rows(tile.acc, NC, y, ldy, nr);
}

// The int16 kernels (16-bit activations, ActI16Block). A chunk's 32-bit lane
// r holds weight row r's bytes b0..b3; each 16-bit half of the lane is
// widened to one int16 weight, so a vector holds the pair (w_j, w_j+2) of
// every row and vpmaddwd against a 32-bit broadcast of the activation pair
// (x_j, x_j+2) adds that pair's products into lane r: row sums with no
// horizontal step. ActI16Block stores q in that pair order (i16_slot).
inline __m256i bcast_pair(const std::int16_t* q) {
  std::int32_t v;
  std::memcpy(&v, q, 4);
  return _mm256_set1_epi32(v);
}

// Q8_0: bytes b0, b2 sign-extended are elements 4t, 4t+2; b1, b3 are 4t+1, 4t+3.
template <int NC>
void panel_q8_i16(const std::uint8_t* panel, std::size_t cols, const std::uint8_t* x,
                  std::size_t x_stride, float* y, std::size_t ldy, std::size_t nr) {
  const std::size_t nb = cols / 32;
  Tile<ActI16Block, NC> tile(x, x_stride);
  const ActI16Block* const* xb = tile.xb;
  const std::size_t ahead = stream_ahead();
  for (std::size_t i = 0; i < nb; ++i) {
    const std::uint8_t* g = panel + i * FmtQ8_0::kGroupBytes;
    request_block_ahead<FmtQ8_0::kGroupBytes>(g, ahead);
    const std::uint8_t* q = g + FmtQ8_0::kScaleBytes;
    __m256i sum[NC];
    for (int c = 0; c < NC; ++c) sum[c] = _mm256_setzero_si256();
#pragma GCC unroll 1  // see q4_chunks
    for (int t = 0; t < 8; ++t) {
      const __m256i raw = load32(q + 32 * t);
      const __m256i w02 = _mm256_srai_epi16(_mm256_slli_epi16(raw, 8), 8);
      const __m256i w13 = _mm256_srai_epi16(raw, 8);
      for (int c = 0; c < NC; ++c) {
        const std::int16_t* xq = xb[c][i].q + 4 * t;
        sum[c] = _mm256_add_epi32(sum[c], _mm256_madd_epi16(w02, bcast_pair(xq)));
        sum[c] = _mm256_add_epi32(sum[c], _mm256_madd_epi16(w13, bcast_pair(xq + 2)));
      }
    }
    tile.add_block(i, load_fp16x8(g), sum);
  }
  store_rows(tile.acc, NC, y, ldy, nr);
}

// Q6_K (FmtQ6_K): the Q8_0 int16 kernel with one sum per 16-value half
// (chunks 0-3 and 4-7), each added with its own scale: exact int32 sums
// (|sum| <= 16 * 32 * 32258), then acc = fma(float(sum_a), d_a * d_x, acc)
// and the same for the second half.
template <int NC>
void panel_q6k_i16(const std::uint8_t* panel, std::size_t cols, const std::uint8_t* x,
                   std::size_t x_stride, float* y, std::size_t ldy, std::size_t nr) {
  using Fmt = FmtQ6_K;
  const std::size_t nb = cols / 32;
  Tile<ActI16Block, NC> tile(x, x_stride);
  const ActI16Block* const* xb = tile.xb;
  const std::size_t ahead = stream_ahead();
  for (std::size_t i = 0; i < nb; ++i) {
    const std::uint8_t* g = panel + i * Fmt::kGroupBytes;
    request_block_ahead<Fmt::kGroupBytes>(g, ahead);
    const std::uint8_t* q = g + Fmt::kQuantOffset;
    __m256i sum[2][NC];
    for (int c = 0; c < NC; ++c) sum[0][c] = sum[1][c] = _mm256_setzero_si256();
    for (int half = 0; half < 2; ++half) {
#pragma GCC unroll 1  // see q4_chunks
      for (int t = 4 * half; t < 4 * half + 4; ++t) {
        const __m256i raw = load32(q + 32 * t);
        const __m256i w02 = _mm256_srai_epi16(_mm256_slli_epi16(raw, 8), 8);
        const __m256i w13 = _mm256_srai_epi16(raw, 8);
        for (int c = 0; c < NC; ++c) {
          const std::int16_t* xq = xb[c][i].q + 4 * t;
          sum[half][c] = _mm256_add_epi32(sum[half][c], _mm256_madd_epi16(w02, bcast_pair(xq)));
          sum[half][c] = _mm256_add_epi32(sum[half][c], _mm256_madd_epi16(w13, bcast_pair(xq + 2)));
        }
      }
    }
    tile.add_block(i, load_d<Fmt>(g), sum[0]);
    tile.add_block(i, load_m<Fmt>(g), sum[1]);
  }
  store_rows(tile.acc, NC, y, ldy, nr);
}

// Q4_0 / Q4_1: the low nibbles of b0, b2 are elements 4t, 4t+2 and of b1, b3
// 4t+1, 4t+3; the high nibbles are the same elements + 16. One load and
// seven shifts/ands per chunk give the four int16 weight vectors.
// Q4_K panels run this kernel too (FmtQ4_K: f32 scales).
template <class Fmt, int NC>
void panel_q4_i16(const std::uint8_t* panel, std::size_t cols, const std::uint8_t* x,
                  std::size_t x_stride, float* y, std::size_t ldy, std::size_t nr) {
  constexpr bool kHasMin = Fmt::kScales == 2;
  const std::size_t nb = cols / 32;
  Tile<ActI16Block, NC> tile(x, x_stride);
  const ActI16Block* const* xb = tile.xb;
  const __m256i m4 = _mm256_set1_epi16(0x0F);
  const std::size_t ahead = stream_ahead();
  for (std::size_t i = 0; i < nb; ++i) {
    const std::uint8_t* g = panel + i * Fmt::kGroupBytes;
    request_block_ahead<Fmt::kGroupBytes>(g, ahead);
    const std::uint8_t* q = g + Fmt::kScaleBytes;
    // Q4_0: the offset joins the integer sums (-8 * sum(x_q)) as the sums' start
    // (a broadcast load; adding it to the unpacked weights instead cost 3-7 % here).
    __m256i sum[NC];
    for (int c = 0; c < NC; ++c) {
      if constexpr (Fmt::kIntOffset != 0) {
        sum[c] = offset_start<Fmt::kIntOffset>(xb[c][i]);
      } else {
        sum[c] = _mm256_setzero_si256();
      }
    }
#pragma GCC unroll 1  // see q4_chunks
    for (int t = 0; t < 4; ++t) {
      const __m256i raw = load32(q + 32 * t);
      const __m256i w02 = _mm256_and_si256(raw, m4);
      const __m256i w13 = _mm256_and_si256(_mm256_srli_epi16(raw, 8), m4);
      const __m256i h02 = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
      const __m256i h13 = _mm256_srli_epi16(raw, 12);
      for (int c = 0; c < NC; ++c) {
        const std::int16_t* xq = xb[c][i].q + 4 * t;
        sum[c] = _mm256_add_epi32(sum[c], _mm256_madd_epi16(w02, bcast_pair(xq)));
        sum[c] = _mm256_add_epi32(sum[c], _mm256_madd_epi16(w13, bcast_pair(xq + 2)));
        sum[c] = _mm256_add_epi32(sum[c], _mm256_madd_epi16(h02, bcast_pair(xq + 16)));
        sum[c] = _mm256_add_epi32(sum[c], _mm256_madd_epi16(h13, bcast_pair(xq + 18)));
      }
    }
    tile.add_block(i, load_d<Fmt>(g), sum);
    if constexpr (kHasMin) tile.add_min(i, load_m<Fmt>(g));
  }
  store_rows(tile.acc, NC, y, ldy, nr);
}

template <template <int> class K>
void dispatch_nc(const std::uint8_t* panel, std::size_t cols, const std::uint8_t* x,
                 std::size_t x_stride, std::size_t nc, float* y, std::size_t ldy, std::size_t nr) {
  switch (nc) {
    case 1:
      K<1>::run(panel, cols, x, x_stride, y, ldy, nr);
      break;
    case 2:
      K<2>::run(panel, cols, x, x_stride, y, ldy, nr);
      break;
    case 3:
      K<3>::run(panel, cols, x, x_stride, y, ldy, nr);
      break;
    default:
      K<4>::run(panel, cols, x, x_stride, y, ldy, nr);
      break;
  }
}

template <class Act>
struct Q4_0K {
  template <int NC>
  struct K {
    static constexpr auto run = panel_q4<FmtQ4_0, Act, NC>;
  };
};
template <class Act>
struct Q4_1K {
  template <int NC>
  struct K {
    static constexpr auto run = panel_q4<FmtQ4_1, Act, NC>;
  };
};
template <class Act>
struct Q5_0K {
  template <int NC>
  struct K {
    static constexpr auto run = panel_q4<FmtQ5_0, Act, NC>;
  };
};
template <class Act>
struct Q5_1K {
  template <int NC>
  struct K {
    static constexpr auto run = panel_q4<FmtQ5_1, Act, NC>;
  };
};
template <int NC>
struct Q8_0K {
  static constexpr auto run = panel_q8<NC>;
};
template <class Fmt>
struct Q4I16K {
  template <int NC>
  struct K {
    static constexpr auto run = panel_q4_i16<Fmt, NC>;
  };
};
template <int NC>
struct Q8I16K {
  static constexpr auto run = panel_q8_i16<NC>;
};
// Any Q4/Q5 layout (Q4_K included) against the int8 halves of 16-bit activations.
template <class Fmt>
struct HalvesK {
  template <int NC>
  struct K {
    static constexpr auto run = panel_q4<Fmt, ActQ16Block, NC>;
  };
};
template <int NC>
struct Q6KI16K {
  static constexpr auto run = panel_q6k_i16<NC>;
};

}  // namespace

}  // namespace avx2
FOLIO_AVX2_END

// ---- the same one-panel kernels with 256-bit EVEX dot products ---------------
// For up to kMaxTileCols activation rows (decode) at the AVX-512 level: the panel is read as
// one stream, as by the AVX2 kernels, and the products use vpdpbusd /
// vpdpwssd on 256-bit vectors (AVX-512 VL + VNNI). The two-panel 512-bit
// kernels read two streams a panel apart and then jump two panels on: on a
// Zen 4, decode that streams every weight from DRAM ran 20-30 % slower with
// them than with the one-stream AVX2 kernels, although they are faster on
// weights already in cache. Same integer sums (exact) and the same Tile
// epilogue as the AVX2 kernels, so bit-identical to them.
FOLIO_AVX512_BEGIN
namespace avx2 {

namespace {

// Independent accumulator chains for one or two activation rows (dot_chains.h).
template <int NC>
using Sums = DotChains<256, NC>;

// Q4_0 / Q4_1 / Q4_K (kFive: Q5_0 / Q5_1) against the int8 halves of 16-bit
// activations (ActQ16Block): isum = 254 * isum_hi + isum_lo.
template <class Fmt, int NC>
void vnni_q45(const std::uint8_t* panel, std::size_t cols, const std::uint8_t* x,
              std::size_t x_stride, float* y, std::size_t ldy, std::size_t nr) {
  constexpr bool kHasMin = Fmt::kScales == 2, kFive = Fmt::kHbits != 0;
  const std::size_t nb = cols / 32;
  Tile<ActQ16Block, NC> tile(x, x_stride);
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const std::size_t ahead = stream_ahead();
  for (std::size_t i = 0; i < nb; ++i) {
    const std::uint8_t* g = panel + i * Fmt::kGroupBytes;
    const std::uint8_t* q = g + Fmt::kQuantOffset;
    request_block_ahead<Fmt::kGroupBytes>(g, ahead);
    const __m256i hbits = kFive ? load32(g + Fmt::kScaleBytes) : _mm256_setzero_si256();
    Sums<NC> hi_sum, lo_sum;
    // Q4_0 / Q5_0: the offset term (offset * sum(x_q)) starts the low-half sums.
    if constexpr (Fmt::kIntOffset != 0) {
      for (int c = 0; c < NC; ++c) lo_sum.at(0, c) = offset_start<Fmt::kIntOffset>(tile.xb[c][i]);
    }
    for (int t = 0; t < 4; ++t) {
      const __m256i raw = load32(q + 32 * t);
      __m256i lo = _mm256_and_si256(raw, m4);
      __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
      if constexpr (kFive) add_fifth_bits(hbits, t, lo, hi);
      for (int c = 0; c < NC; ++c) {
        const ActQ16Block& a = tile.xb[c][i];
        __m256i& h = hi_sum.at(t, c);
        __m256i& l = lo_sum.at(t, c);
        h = _mm256_dpbusd_epi32(h, lo, bcast4(a.hi + 4 * t));
        h = _mm256_dpbusd_epi32(h, hi, bcast4(a.hi + 16 + 4 * t));
        l = _mm256_dpbusd_epi32(l, lo, bcast4(a.lo + 4 * t));
        l = _mm256_dpbusd_epi32(l, hi, bcast4(a.lo + 16 + 4 * t));
      }
    }
    const __m256i* hi_total = hi_sum.fold();
    const __m256i* lo_total = lo_sum.fold();
    __m256i isum[NC];
    for (int c = 0; c < NC; ++c) {
      isum[c] = _mm256_add_epi32(_mm256_mullo_epi32(hi_total[c], _mm256_set1_epi32(kActQ16Base)),
                                 lo_total[c]);
    }
    tile.add_block(i, load_d<Fmt>(g), isum);
    if constexpr (kHasMin) tile.add_min(i, load_m<Fmt>(g));
  }
  store_rows(tile.acc, NC, y, ldy, nr);
}

// Q8_0 (kSumHalves 1) and Q6_K (kSumHalves 2: one sum per 16-value half, each with
// its own scale) against int16 activations: bytes b0, b2 sign-extended are
// elements 4t, 4t+2, and b1, b3 elements 4t+1, 4t+3.
template <class Fmt, int kSumHalves, int NC>
void vnni_q8_i16(const std::uint8_t* panel, std::size_t cols, const std::uint8_t* x,
                 std::size_t x_stride, float* y, std::size_t ldy, std::size_t nr) {
  const std::size_t nb = cols / 32;
  Tile<ActI16Block, NC> tile(x, x_stride);
  const std::size_t ahead = stream_ahead();
  for (std::size_t i = 0; i < nb; ++i) {
    const std::uint8_t* g = panel + i * Fmt::kGroupBytes;
    const std::uint8_t* q = g + Fmt::kQuantOffset;
    request_block_ahead<Fmt::kGroupBytes>(g, ahead);
    for (int half = 0; half < kSumHalves; ++half) {
      Sums<NC> sum;
      const int t0 = 8 / kSumHalves * half;
      for (int t = t0; t < t0 + 8 / kSumHalves; ++t) {
        const __m256i raw = load32(q + 32 * t);
        const __m256i w02 = _mm256_srai_epi16(_mm256_slli_epi16(raw, 8), 8);
        const __m256i w13 = _mm256_srai_epi16(raw, 8);
        for (int c = 0; c < NC; ++c) {
          const std::int16_t* xq = tile.xb[c][i].q + 4 * t;
          __m256i& s0 = sum.at(2 * t, c);
          __m256i& s1 = sum.at(2 * t + 1, c);
          s0 = _mm256_dpwssd_epi32(s0, w02, bcast_pair(xq));
          s1 = _mm256_dpwssd_epi32(s1, w13, bcast_pair(xq + 2));
        }
      }
      tile.add_block(i, half == 0 ? load_d<Fmt>(g) : load_m<Fmt>(g), sum.fold());
    }
  }
  store_rows(tile.acc, NC, y, ldy, nr);
}

template <class Fmt>
struct VnniQ45K {
  template <int NC>
  struct K {
    static constexpr auto run = vnni_q45<Fmt, NC>;
  };
};
template <class Fmt, int kSumHalves>
struct VnniQ8K {
  template <int NC>
  struct K {
    static constexpr auto run = vnni_q8_i16<Fmt, kSumHalves, NC>;
  };
};

}  // namespace

}  // namespace avx2
FOLIO_AVX512_END

namespace {

// The 16-bit kernels of Q4_0, Q4_1 and Q8_0 read int16 activations.
template <class Fmt, template <int> class Kern>
constexpr PanelKernel panel_kernel_i16() {
  return PanelKernel{ActFormat::kI16_32, avx2::quantize_row_i16_32, 32, Fmt::kGroupBytes,
                     repack<Fmt>,        avx2::dispatch_nc<Kern>};
}

// 8-bit activations (every type), and the int8-halves form of 16-bit
// activations (Q5_0 / Q5_1).
template <class Fmt, template <int> class Kern>
constexpr PanelKernel panel_kernel_q8() {
  return PanelKernel{ActFormat::kQ8_32, avx2::quantize_row_q8_32, 32, Fmt::kGroupBytes,
                     repack<Fmt>,       avx2::dispatch_nc<Kern>};
}
template <class Fmt, template <int> class Kern>
constexpr PanelKernel panel_kernel_q16() {
  return PanelKernel{ActFormat::kQ16_32, avx2::quantize_row_q16_32, 32, Fmt::kGroupBytes,
                     repack<Fmt>,        avx2::dispatch_nc<Kern>};
}

}  // namespace

const PanelKernel* avx2_panel_kernel_halves(gguf::TensorType type) {
  using gguf::TensorType;
  static const PanelKernel q4_0 = panel_kernel_q16<FmtQ4_0, avx2::HalvesK<FmtQ4_0>::K>();
  static const PanelKernel q4_1 = panel_kernel_q16<FmtQ4_1, avx2::HalvesK<FmtQ4_1>::K>();
  static const PanelKernel q4_k{ActFormat::kQ16_32,
                                avx2::quantize_row_q16_32,
                                32,
                                FmtQ4_K::kGroupBytes,
                                repack_q4_k,
                                avx2::dispatch_nc<avx2::HalvesK<FmtQ4_K>::K>};
  switch (type) {
    case TensorType::Q4_0:
      return &q4_0;
    case TensorType::Q4_1:
      return &q4_1;
    case TensorType::Q4_K:
      return &q4_k;
    case TensorType::Q5_0:
    case TensorType::Q5_1:
      return avx2_panel_kernel(type, ActivationBits::k16);
    default:
      return nullptr;
  }
}

namespace {

// The AVX2 one-panel kernel `base` (its activation format, quantizer and
// layout) with the 256-bit VNNI kernel `panel` in its place.
PanelKernel with_vnni_panel(const PanelKernel* base, PanelFn panel) {
  PanelKernel k = *base;
  k.panel = panel;
  return k;
}

}  // namespace

const PanelKernel* avx512_panel_kernel_narrow(gguf::TensorType type) {
  using avx2::dispatch_nc, avx2::VnniQ45K, avx2::VnniQ8K;
  using gguf::TensorType;
  const auto halves = [](TensorType t, PanelFn panel) {
    return with_vnni_panel(avx2_panel_kernel_halves(t), panel);
  };
  const auto i16 = [](TensorType t, PanelFn panel) {
    return with_vnni_panel(avx2_panel_kernel(t, ActivationBits::k16), panel);
  };
  static const PanelKernel q4_0 = halves(TensorType::Q4_0, dispatch_nc<VnniQ45K<FmtQ4_0>::K>);
  static const PanelKernel q4_1 = halves(TensorType::Q4_1, dispatch_nc<VnniQ45K<FmtQ4_1>::K>);
  static const PanelKernel q5_0 = halves(TensorType::Q5_0, dispatch_nc<VnniQ45K<FmtQ5_0>::K>);
  static const PanelKernel q5_1 = halves(TensorType::Q5_1, dispatch_nc<VnniQ45K<FmtQ5_1>::K>);
  static const PanelKernel q4_k = halves(TensorType::Q4_K, dispatch_nc<VnniQ45K<FmtQ4_K>::K>);
  static const PanelKernel q8_0 = i16(TensorType::Q8_0, dispatch_nc<VnniQ8K<FmtQ8_0, 1>::K>);
  static const PanelKernel q6_k = i16(TensorType::Q6_K, dispatch_nc<VnniQ8K<FmtQ6_K, 2>::K>);
  switch (type) {
    case TensorType::Q4_0:
      return &q4_0;
    case TensorType::Q4_1:
      return &q4_1;
    case TensorType::Q5_0:
      return &q5_0;
    case TensorType::Q5_1:
      return &q5_1;
    case TensorType::Q8_0:
      return &q8_0;
    case TensorType::Q4_K:
      return &q4_k;
    case TensorType::Q6_K:
      return &q6_k;
    default:
      return nullptr;
  }
}

const PanelKernel* avx2_panel_kernel(gguf::TensorType type, ActivationBits bits) {
  using gguf::TensorType;
  // Q4_K: 16-bit activations only (with 8-bit ones the k-quant tiles run on the file's bytes).
  static const PanelKernel q4_k{ActFormat::kI16_32,
                                avx2::quantize_row_i16_32,
                                32,
                                FmtQ4_K::kGroupBytes,
                                repack_q4_k,
                                avx2::dispatch_nc<avx2::Q4I16K<FmtQ4_K>::K>};
  static const PanelKernel q6_k{
      ActFormat::kI16_32, avx2::quantize_row_i16_32,       32, FmtQ6_K::kGroupBytes,
      repack_q6_k,        avx2::dispatch_nc<avx2::Q6KI16K>};
  if (type == TensorType::Q4_K) return bits == ActivationBits::k16 ? &q4_k : nullptr;
  if (type == TensorType::Q6_K) return bits == ActivationBits::k16 ? &q6_k : nullptr;
  static const PanelKernel table[2][kBlockTypes] = {
      {panel_kernel_i16<FmtQ4_0, avx2::Q4I16K<FmtQ4_0>::K>(),
       panel_kernel_i16<FmtQ4_1, avx2::Q4I16K<FmtQ4_1>::K>(),
       panel_kernel_q16<FmtQ5_0, avx2::Q5_0K<ActQ16Block>::K>(),
       panel_kernel_q16<FmtQ5_1, avx2::Q5_1K<ActQ16Block>::K>(),
       panel_kernel_i16<FmtQ8_0, avx2::Q8I16K>()},
      {panel_kernel_q8<FmtQ4_0, avx2::Q4_0K<ActQ8Block>::K>(),
       panel_kernel_q8<FmtQ4_1, avx2::Q4_1K<ActQ8Block>::K>(),
       panel_kernel_q8<FmtQ5_0, avx2::Q5_0K<ActQ8Block>::K>(),
       panel_kernel_q8<FmtQ5_1, avx2::Q5_1K<ActQ8Block>::K>(),
       panel_kernel_q8<FmtQ8_0, avx2::Q8_0K>()}};
  const auto& row = table[bits == ActivationBits::k8 ? 1 : 0];
  const int index = block_type_index(type);
  return index < 0 ? nullptr : &row[index];
}

}  // namespace folio::kernels::cpu
