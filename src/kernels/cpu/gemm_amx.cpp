// kernels/cpu/gemm_amx.cpp: AMX int8 tiles for prefill over the 8-row panels
// of Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 (layout: panel_layout.h), two panels (16 weight
// rows) by 16 activation rows at a time.
//
// Per pair of panels the weights of every block are first unpacked into B
// tiles (scratch; once per pair and activation chunk, then reused by every
// 16-row activation tile): block i's tile is 8 rows of 64 bytes, row k4 =
// values 4*k4 .. 4*k4+3 of each of the 16 weight rows. In the panel layout
// that is exactly one chunk of each panel side by side (Q4: chunk t's low
// nibbles are values 4t.., its high nibbles 16+4t..; Q8_0: chunk t holds
// values 4t..), so the unpack is two 32-byte loads, and/shift, two stores
// (Q5: plus the 5th bits, as in the AVX-512 kernels, which do it).
//
// The activations are quantized as for the panel kernels (the same values)
// into a layout where each A tile is 512 contiguous bytes (16 rows of one
// block; loading tiles from 16 scattered rows stalled on cache-line fills),
// with the rows' d and s after them: 16-bit ones straight from the floats
// (quantize_tiles_q16), 8-bit ones as rows, then regrouped. Tiles multiply int8, so the 16-bit
// default stores each value q (ActQ16Block, |q| <= 32258) as two base-256
// digits q = 256 * h + l (h signed, l unsigned) and runs two tile products
// per block on the same B tile, combined exactly as (C_h << 8) + C_l; 8-bit
// activations run one. Q4/Q5 values are unsigned (but Q4_0 / Q5_0's q + offset
// against 16-bit activations) and Q8_0 bytes signed, which picks among
// tdpbssd / tdpbsud / tdpbusd / tdpbuud.
//
// A block's integer sums cannot be kept across blocks (each block has its
// own scales), so after each block the C tiles go to scratch and every
// activation row runs the AVX-512 epilogue of the panel kernels, lane r =
// weight row r: acc = fma(float(isum), d_r * d_x, acc), then
// acc = fma(m_r, s_x, acc) where the type has a min or an f32 offset term
// (Q4_0 / Q5_0 against 8-bit activations; against 16-bit ones they unpack
// signed weights q + offset, so the offset is in isum, as at the other
// levels). The int32 sums are exact and the f32 operations per lane are the
// same in the same order, so the results are bit-identical to the AVX2 and
// AVX-512 panel kernels. Two sets of C and B tiles let one
// block's epilogue follow the next block's tile products; the 16
// accumulators are expanded at compile time so they stay in registers.
//
// Measured (Xeon, Sapphire Rapids class, KVM, one thread, kernels_bench
// matmul512): ~1.3-1.4x the AVX-512 VNNI panel kernels at 16-bit
// activations. The per-block C-tile store and f32 epilogue, not the tile
// products, bound it: a 16x16x32 product takes ~5 ns, its store ~6 ns.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/cpu/avx512_util.h"
#include "kernels/cpu/gemm_avx2.h"
#include "kernels/cpu/gemm_kernel.h"
#include "kernels/cpu/panel_layout.h"

// See gemm_avx512_panel.cpp (GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

// clang-format off
#if defined(__clang__)
#define FOLIO_AMX_BEGIN _Pragma("clang attribute push(__attribute__((target(\"avx2,fma,f16c,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,amx-tile,amx-int8\"))), apply_to = function)")
#define FOLIO_AMX_END _Pragma("clang attribute pop")
#else
#define FOLIO_AMX_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx2,fma,f16c,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,amx-tile,amx-int8\")")
#define FOLIO_AMX_END _Pragma("GCC pop_options")
#endif
// clang-format on

FOLIO_AMX_BEGIN
namespace folio::kernels::cpu::amx {

namespace {

// Tiles: two sets of C (hi half, or the only half; lo half) and B: 0, 1, 4
// and 5, 6, 7; the A tiles 2 (hi) and 3 (lo) are shared.
struct alignas(64) TileConfig {
  std::uint8_t palette = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {};
  std::uint8_t rows[16] = {};
};

TileConfig make_config() {
  TileConfig c;
  for (int t : {0, 1}) {
    c.rows[t] = 16;
    c.colsb[t] = 64;  // 16 int32 sums per activation row
  }
  for (int t : {2, 3}) {
    c.rows[t] = 16;
    c.colsb[t] = 32;  // one block of int8 activations per row
  }
  for (int t : {5, 6}) {
    c.rows[t] = 16;
    c.colsb[t] = 64;
  }
  for (int t : {4, 7}) {
    c.rows[t] = 8;  // K / 4
    c.colsb[t] = 64;
  }
  return c;
}

inline __m512i load_pair(const std::uint8_t* a, const std::uint8_t* b) {
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
  const __m256i hi = b != nullptr ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b))
                                  : _mm256_setzero_si256();
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

inline __m512 load_fp16_pair(const std::uint8_t* a, const std::uint8_t* b) {
  const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
  const __m128i hi =
      b != nullptr ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(b)) : _mm_setzero_si128();
  return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1));
}

// The d (or m) of both panels' groups, fp16 or f32 (b null: zeros).
template <class Fmt>
inline __m512 load_scale_pair(const std::uint8_t* a, const std::uint8_t* b) {
  if constexpr (Fmt::kScaleWidth == 4) {
    const __m256 lo = _mm256_loadu_ps(reinterpret_cast<const float*>(a));
    const __m256 hi =
        b != nullptr ? _mm256_loadu_ps(reinterpret_cast<const float*>(b)) : _mm256_setzero_ps();
    return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
  } else {
    return load_fp16_pair(a, b);
  }
}

inline void store64(std::uint8_t* p, __m512i v) {
  _mm512_storeu_si512(p, v);
}
inline __m512i load64(const std::uint8_t* p) {
  return _mm512_loadu_si512(p);
}

constexpr std::size_t kBTileBytes = kAmxBTileBytes;

// B tiles of every block of the pair (g1 == nullptr: a lone last panel,
// whose missing half is zero, or kOffset there: rows the store masks off).
// kOffset: added to each 4- or 5-bit value (Q4_0 / Q5_0 against 16-bit
// activations: signed weights q + offset, so the offset is in the integer sums).
template <class Fmt, int kOffset>
void unpack_b(const std::uint8_t* p0, const std::uint8_t* p1, std::size_t nb, std::uint8_t* b) {
  const __m512i off = _mm512_set1_epi8(static_cast<char>(kOffset));
  for (std::size_t i = 0; i < nb; ++i) {
    const std::uint8_t* g0 = p0 + i * Fmt::kGroupBytes + Fmt::kQuantOffset;
    const std::uint8_t* g1 =
        p1 != nullptr ? p1 + i * Fmt::kGroupBytes + Fmt::kQuantOffset : nullptr;
    std::uint8_t* out = b + i * kBTileBytes;
    if constexpr (Fmt::kQuantBytes == 32) {  // Q8_0
      for (int t = 0; t < 8; ++t)
        store64(out + 64 * t, load_pair(g0 + 32 * t, g1 != nullptr ? g1 + 32 * t : nullptr));
    } else if constexpr (Fmt::kHbits != 0) {  // Q5_0, Q5_1: from the groups' starts
      avx512::unpack_q5_tile(g0 - Fmt::kQuantOffset,
                             g1 != nullptr ? g1 - Fmt::kQuantOffset : nullptr, Fmt::kScaleBytes,
                             out);
      if constexpr (kOffset != 0) {
        for (int t = 0; t < 8; ++t)
          store64(out + 64 * t, _mm512_add_epi8(load64(out + 64 * t), off));
      }
    } else {
      const __m512i m4 = _mm512_set1_epi8(0x0F);
      const auto value = [&](__m512i v) { return kOffset != 0 ? _mm512_add_epi8(v, off) : v; };
      for (int t = 0; t < 4; ++t) {
        const __m512i raw = load_pair(g0 + 32 * t, g1 != nullptr ? g1 + 32 * t : nullptr);
        store64(out + 64 * t, value(_mm512_and_si512(raw, m4)));
        store64(out + 64 * (4 + t), value(_mm512_and_si512(_mm512_srli_epi16(raw, 4), m4)));
      }
    }
  }
}

// The activations of 16 rows regrouped block by block so that each A tile is
// 512 contiguous bytes (tile loads from 16 scattered rows stall on cache-line
// fills): per block, the int8 values [16][32], then d[16] and s[16] of the 16
// rows. A 16-bit value q (ActQ16Block: q = 254 * hi + lo) is stored as two
// base-256 digits, q = 256 * h + l with h = q >> 8 signed and l = q & 255
// unsigned ([16][32] of h, then of l), so the two sums combine with a shift.
template <class Act>
struct TileAct;
template <>
struct TileAct<ActQ16Block> {
  static constexpr bool kTwoHalves = true;
  static constexpr std::size_t kLo = 512, kD = 1024, kS = 1088, kBytes = 1152;
  static void put(const ActQ16Block& a, int r, std::uint8_t* out) {
    const __m512i hi =
        _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.hi)));
    const __m512i lo =
        _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.lo)));
    const __m512i q = _mm512_add_epi16(_mm512_mullo_epi16(hi, _mm512_set1_epi16(kActQ16Base)), lo);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32 * r),
                        _mm512_cvtepi16_epi8(_mm512_srai_epi16(q, 8)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + kLo + 32 * r),
                        _mm512_cvtepi16_epi8(_mm512_and_si512(q, _mm512_set1_epi16(0xFF))));
    std::memcpy(out + kD + 4 * r, &a.d, 4);
    std::memcpy(out + kS + 4 * r, &a.s, 4);
  }
};
template <>
struct TileAct<ActQ8Block> {
  static constexpr bool kTwoHalves = false;
  static constexpr std::size_t kD = 512, kS = 576, kBytes = 640;
  static void put(const ActQ8Block& a, int r, std::uint8_t* out) {
    std::memcpy(out + 32 * r, a.qs, 32);
    std::memcpy(out + kD + 4 * r, &a.d, 4);
    std::memcpy(out + kS + 4 * r, &a.s, 4);
  }
};

// 16 rows of floats (x, `cols` apart) quantized straight into the regrouped
// tile layout of 16-bit activations, saving quantize_row_q16_32's rows and
// their regrouping: the same d, q and s with the same float operations (the
// absolute maximum in the AVX2 quantizer's order, one multiply and one
// round-to-nearest-even conversion per value, s = d * sum q).
void quantize_tiles_q16(const float* x, std::size_t cols, std::uint8_t* out) {
  using L = TileAct<ActQ16Block>;
  const std::size_t nb = cols / 32;
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int r = 0; r < 16; ++r) {
    const float* row = x + static_cast<std::size_t>(r) * cols;
    for (std::size_t i = 0; i < nb; ++i) {
      const float* xb = row + 32 * i;
      __m256 mx = _mm256_setzero_ps();
      for (int k = 0; k < 4; ++k)
        mx = _mm256_max_ps(mx, _mm256_andnot_ps(sign, _mm256_loadu_ps(xb + 8 * k)));
      __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
      m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
      m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
      const float d = _mm_cvtss_f32(m4) / static_cast<float>(kActQ16Max);
      const __m512 id = _mm512_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
      constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
      const __m512i q0 = _mm512_cvt_roundps_epi32(_mm512_mul_ps(_mm512_loadu_ps(xb), id), kRound);
      const __m512i q1 =
          _mm512_cvt_roundps_epi32(_mm512_mul_ps(_mm512_loadu_ps(xb + 16), id), kRound);
      std::uint8_t* o = out + i * L::kBytes;
      const __m512i m255 = _mm512_set1_epi32(0xFF);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 32 * r),
                       _mm512_cvtepi32_epi8(_mm512_srai_epi32(q0, 8)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 32 * r + 16),
                       _mm512_cvtepi32_epi8(_mm512_srai_epi32(q1, 8)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + L::kLo + 32 * r),
                       _mm512_cvtepi32_epi8(_mm512_and_si512(q0, m255)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + L::kLo + 32 * r + 16),
                       _mm512_cvtepi32_epi8(_mm512_and_si512(q1, m255)));
      const float sum = static_cast<float>(_mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1)));
      const float ds = d * sum;
      std::memcpy(o + L::kD + 4 * r, &d, 4);
      std::memcpy(o + L::kS + 4 * r, &ds, 4);
    }
  }
}

template <class Act>
void regroup(const std::uint8_t* x, std::size_t x_stride, std::size_t nb, std::uint8_t* out) {
  for (int r = 0; r < 16; ++r) {
    const auto* row = reinterpret_cast<const Act*>(x + r * x_stride);
    for (std::size_t i = 0; i < nb; ++i)
      TileAct<Act>::put(row[i], r, out + i * TileAct<Act>::kBytes);
  }
}

// Tile loads and stores on literal tile numbers with exact memory operands:
// GCC's _tile_loadd has none (the compiler could move the B-tile stores past
// it) and its _tile_stored clobbers all memory (which forces the
// accumulators out of registers). Every tile here is 512 (A, B) or 1024 (C)
// contiguous bytes.
struct Bytes512 {
  char b[512];
};
struct Bytes1024 {
  char b[1024];
};
#define FOLIO_TILE_LOAD(t, base, stride)                                       \
  __asm__ volatile("tileloadd (%1,%2,1), %%tmm" #t                             \
                   :                                                           \
                   : "m"(*reinterpret_cast<const Bytes512*>(base)), "r"(base), \
                     "r"(static_cast<long>(stride)))
#define FOLIO_TILE_STORE(t, base)                              \
  __asm__ volatile("tilestored %%tmm" #t ", (%1,%2,1)"         \
                   : "=m"(*reinterpret_cast<Bytes1024*>(base)) \
                   : "r"(base), "r"(64L))

// C += A . B: A signed (kASigned) or unsigned, B signed (kBSigned) or not.
#define FOLIO_TILE_DP(kASigned, kBSigned, c, a, b) \
  do {                                             \
    if constexpr ((kASigned) && (kBSigned)) {      \
      _tile_dpbssd(c, a, b);                       \
    } else if constexpr (kASigned) {               \
      _tile_dpbsud(c, a, b);                       \
    } else if constexpr (kBSigned) {               \
      _tile_dpbusd(c, a, b);                       \
    } else {                                       \
      _tile_dpbuud(c, a, b);                       \
    }                                              \
  } while (false)

// Block i's tile products into tile set kSet (C tiles 0, 1 and B tile 4, or
// 5, 6 and 7; the A tiles 2 and 3 are shared), and the store of its sums to
// `c` (high digits or the 8-bit values at c, low digits at c + 256). Two
// sets let the epilogue of one block run while the next block's are in
// flight. The low digits are unsigned.
template <class Act, bool kSigned, int kSet>
inline void compute_block(const std::uint8_t* xb, const std::uint8_t* b) {
  using L = TileAct<Act>;
  if constexpr (kSet == 0) {
    _tile_zero(0);
    FOLIO_TILE_LOAD(2, xb, 32);
    FOLIO_TILE_LOAD(4, b, 64);
    FOLIO_TILE_DP(true, kSigned, 0, 2, 4);
    if constexpr (L::kTwoHalves) {
      _tile_zero(1);
      FOLIO_TILE_LOAD(3, xb + L::kLo, 32);
      FOLIO_TILE_DP(false, kSigned, 1, 3, 4);
    }
  } else {
    _tile_zero(5);
    FOLIO_TILE_LOAD(2, xb, 32);
    FOLIO_TILE_LOAD(7, b, 64);
    FOLIO_TILE_DP(true, kSigned, 5, 2, 7);
    if constexpr (L::kTwoHalves) {
      _tile_zero(6);
      FOLIO_TILE_LOAD(3, xb + L::kLo, 32);
      FOLIO_TILE_DP(false, kSigned, 6, 3, 7);
    }
  }
}
template <class Act, int kSet>
inline void store_block(std::int32_t* c) {
  if constexpr (kSet == 0) {
    FOLIO_TILE_STORE(0, c);
    if constexpr (TileAct<Act>::kTwoHalves) FOLIO_TILE_STORE(1, c + 256);
  } else {
    FOLIO_TILE_STORE(5, c);
    if constexpr (TileAct<Act>::kTwoHalves) FOLIO_TILE_STORE(6, c + 256);
  }
}
#undef FOLIO_TILE_DP
#undef FOLIO_TILE_LOAD
#undef FOLIO_TILE_STORE

#define FOLIO_INLINE inline __attribute__((always_inline))

// The f32 epilogue of block i for activation row R (see the top of the
// file). Rows are expanded at compile time (constant indices), so the 16
// accumulators stay in registers.
template <class Act, bool kHasMin, int kOffset, std::size_t R>
FOLIO_INLINE void epilogue_row(__m512 d, __m512 m, const float* xd, const float* xs,
                               const std::int32_t* c, __m512 (&acc)[16]) {
  __m512i isum = _mm512_loadu_si512(c + 16 * R);
  if constexpr (TileAct<Act>::kTwoHalves) {
    isum = _mm512_add_epi32(_mm512_slli_epi32(isum, 8), _mm512_loadu_si512(c + 256 + 16 * R));
  }
  const __m512 scale = _mm512_mul_ps(d, _mm512_set1_ps(xd[R]));
  acc[R] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), scale, acc[R]);
  if constexpr (kHasMin || kOffset != 0) acc[R] = _mm512_fmadd_ps(m, _mm512_set1_ps(xs[R]), acc[R]);
}

template <class Fmt, class Act, bool kHasMin, int kOffset, std::size_t... R>
FOLIO_INLINE void epilogue(std::index_sequence<R...>, const std::uint8_t* g0,
                           const std::uint8_t* g1, const std::uint8_t* xb, const std::int32_t* c,
                           __m512 (&acc)[16]) {
  using L = TileAct<Act>;
  const __m512 d = load_scale_pair<Fmt>(g0, g1);
  __m512 m = _mm512_setzero_ps();
  if constexpr (kHasMin) {
    m = load_scale_pair<Fmt>(g0 + Fmt::kMinOffset, g1 != nullptr ? g1 + Fmt::kMinOffset : nullptr);
  }
  if constexpr (kOffset != 0) m = _mm512_mul_ps(d, _mm512_set1_ps(static_cast<float>(kOffset)));
  const auto* xd = reinterpret_cast<const float*>(xb + L::kD);
  const auto* xs = reinterpret_cast<const float*>(xb + L::kS);
  (epilogue_row<Act, kHasMin, kOffset, R>(d, m, xd, xs, c, acc), ...);
}

template <std::size_t... R>
FOLIO_INLINE void zero_rows(std::index_sequence<R...>, __m512 (&acc)[16]) {
  ((acc[R] = _mm512_setzero_ps()), ...);
}

template <std::size_t... R>
FOLIO_INLINE void store_rows(std::index_sequence<R...>, const __m512 (&acc)[16], float* y,
                             std::size_t ldy, __mmask16 mask) {
  (_mm512_mask_storeu_ps(y + R * ldy, mask, acc[R]), ...);
}

// 16 activation rows (regrouped at x) times the pair's 16 weight rows:
// y[m * ldy + r] for m < 16, r < nr.
template <class Fmt, class Act, bool kSigned, bool kHasMin, int kOffset>
void tile_rows(const std::uint8_t* p0, const std::uint8_t* p1, std::size_t nb,
               const std::uint8_t* b, const std::uint8_t* x, float* y, std::size_t ldy,
               std::size_t nr, std::int32_t* cbuf) {
  constexpr std::size_t kAct = TileAct<Act>::kBytes;
  constexpr auto kRows = std::make_index_sequence<16>();
  __m512 acc[16];
  zero_rows(kRows, acc);
  const auto group = [&](const std::uint8_t* p, std::size_t i) {
    return p != nullptr ? p + i * Fmt::kGroupBytes : nullptr;
  };
#define FOLIO_FINISH(i)                                                                 \
  epilogue<Fmt, Act, kHasMin, kOffset>(kRows, group(p0, i), group(p1, i), x + (i)*kAct, \
                                       cbuf + ((i)&1) * 512, acc)
  // Block i's products and store, then block i - 1's epilogue: two blocks
  // per iteration, so the sets alternate in straight-line code.
  compute_block<Act, kSigned, 0>(x, b);
  store_block<Act, 0>(cbuf);
  std::size_t i = 1;
  for (; i + 1 < nb; i += 2) {
    compute_block<Act, kSigned, 1>(x + i * kAct, b + i * kBTileBytes);
    store_block<Act, 1>(cbuf + 512);
    FOLIO_FINISH(i - 1);
    compute_block<Act, kSigned, 0>(x + (i + 1) * kAct, b + (i + 1) * kBTileBytes);
    store_block<Act, 0>(cbuf);
    FOLIO_FINISH(i);
  }
  if (i < nb) {
    compute_block<Act, kSigned, 1>(x + i * kAct, b + i * kBTileBytes);
    store_block<Act, 1>(cbuf + 512);
    FOLIO_FINISH(i - 1);
  }
  FOLIO_FINISH(nb - 1);
#undef FOLIO_FINISH
  store_rows(kRows, acc, y, ldy, static_cast<__mmask16>((1u << nr) - 1u));
}

// Q4_0 / Q5_0's offset (x = d * (q + offset)) is an f32 term against 8-bit
// activations (kOffset) and in the unpacked weights against 16-bit ones
// (kIntOffset), which makes those weights signed, as Q8_0's bytes are.
template <class Fmt, class Act>
void run_pair(const std::uint8_t* p0, const std::uint8_t* p1, std::size_t cols,
              const std::uint8_t* x, std::size_t m, float* y, std::size_t ldy, std::size_t nr,
              std::uint8_t* scratch) {
  constexpr bool kTwo = TileAct<Act>::kTwoHalves;
  constexpr int kIntOffset = kTwo ? Fmt::kIntOffset : 0;
  constexpr int kOffset = kTwo ? 0 : Fmt::kIntOffset;
  constexpr bool kHasMin = Fmt::kScales == 2;
  constexpr bool kSignedWeights = Fmt::kQuantBytes == 32 || kIntOffset != 0;  // Q8_0
  static const TileConfig config = make_config();
  _tile_loadconfig(&config);
  const std::size_t nb = cols / 32;
  auto* cbuf = reinterpret_cast<std::int32_t*>(scratch);  // two sets of two C tiles
  std::uint8_t* b = scratch + kAmxCBytes;
  unpack_b<Fmt, kIntOffset>(p0, p1, nb, b);
  for (std::size_t m0 = 0; m0 < m; m0 += 16) {
    tile_rows<Fmt, Act, kSignedWeights, kHasMin, kOffset>(
        p0, p1, nb, b, x + m0 / 16 * nb * TileAct<Act>::kBytes, y + m0 * ldy, ldy, nr, cbuf);
  }
  _tile_release();
}

}  // namespace

constexpr AmxPairFn kQ4_0I16 = run_pair<FmtQ4_0, ActQ16Block>;
constexpr AmxPairFn kQ4_1I16 = run_pair<FmtQ4_1, ActQ16Block>;
constexpr AmxPairFn kQ4_KI16 = run_pair<FmtQ4_K, ActQ16Block>;
constexpr AmxPairFn kQ5_0I16 = run_pair<FmtQ5_0, ActQ16Block>;
constexpr AmxPairFn kQ5_1I16 = run_pair<FmtQ5_1, ActQ16Block>;
constexpr AmxPairFn kQ8_0I16 = run_pair<FmtQ8_0, ActQ16Block>;
constexpr AmxPairFn kQ4_0Q8 = run_pair<FmtQ4_0, ActQ8Block>;
constexpr AmxPairFn kQ4_1Q8 = run_pair<FmtQ4_1, ActQ8Block>;
constexpr AmxPairFn kQ5_0Q8 = run_pair<FmtQ5_0, ActQ8Block>;
constexpr AmxPairFn kQ5_1Q8 = run_pair<FmtQ5_1, ActQ8Block>;
constexpr AmxPairFn kQ8_0Q8 = run_pair<FmtQ8_0, ActQ8Block>;

}  // namespace folio::kernels::cpu::amx
FOLIO_AMX_END

namespace folio::kernels::cpu {

namespace {

template <class Act>
constexpr AmxKernel make(ActFormat act, QuantizeRowFn quantize, std::size_t group_bytes,
                         AmxPairFn run) {
  AmxQuantizeTilesFn tiles = nullptr;
  if constexpr (std::is_same_v<Act, ActQ16Block>) tiles = amx::quantize_tiles_q16;
  return AmxKernel{act,         quantize, amx::regroup<Act>, tiles, amx::TileAct<Act>::kBytes,
                   group_bytes, run};
}

}  // namespace

const AmxKernel* amx_kernel(gguf::TensorType type, ActivationBits bits) {
  using gguf::TensorType;
  constexpr ActFormat k16 = ActFormat::kQ16_32, k8 = ActFormat::kQ8_32;
  static const AmxKernel table[2][kBlockTypes] = {
      {make<ActQ16Block>(k16, avx2::quantize_row_q16_32, FmtQ4_0::kGroupBytes, amx::kQ4_0I16),
       make<ActQ16Block>(k16, avx2::quantize_row_q16_32, FmtQ4_1::kGroupBytes, amx::kQ4_1I16),
       make<ActQ16Block>(k16, avx2::quantize_row_q16_32, FmtQ5_0::kGroupBytes, amx::kQ5_0I16),
       make<ActQ16Block>(k16, avx2::quantize_row_q16_32, FmtQ5_1::kGroupBytes, amx::kQ5_1I16),
       make<ActQ16Block>(k16, avx2::quantize_row_q16_32, FmtQ8_0::kGroupBytes, amx::kQ8_0I16)},
      {make<ActQ8Block>(k8, avx2::quantize_row_q8_32, FmtQ4_0::kGroupBytes, amx::kQ4_0Q8),
       make<ActQ8Block>(k8, avx2::quantize_row_q8_32, FmtQ4_1::kGroupBytes, amx::kQ4_1Q8),
       make<ActQ8Block>(k8, avx2::quantize_row_q8_32, FmtQ5_0::kGroupBytes, amx::kQ5_0Q8),
       make<ActQ8Block>(k8, avx2::quantize_row_q8_32, FmtQ5_1::kGroupBytes, amx::kQ5_1Q8),
       make<ActQ8Block>(k8, avx2::quantize_row_q8_32, FmtQ8_0::kGroupBytes, amx::kQ8_0Q8)}};
  static const AmxKernel q4_k =
      make<ActQ16Block>(k16, avx2::quantize_row_q16_32, FmtQ4_K::kGroupBytes, amx::kQ4_KI16);
  if (type == TensorType::Q4_K) return bits == ActivationBits::k16 ? &q4_k : nullptr;
  const auto& row = table[bits == ActivationBits::k8 ? 1 : 0];
  const int index = block_type_index(type);
  return index < 0 ? nullptr : &row[index];
}

}  // namespace folio::kernels::cpu
