// quant/quantize_legacy.cpp: quantizers for Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0
// (block layouts in block_legacy.h).
//
// Without importances these are ggml's round-to-nearest reference rules
// (bit-exact with gguf-py's gguf.quants.quantize, which mirrors them): the
// _0 types take d = max / -8 (or -16) where max is the element of largest
// magnitude, so that element lands exactly on the grid's end; the _1 types
// span [min, max] in 15 (31) steps; Q8_0 takes amax / 127.
//
// With importances (one per column, from calibration activations) the step
// is searched instead, minimizing sum imp_j * sqrt(sigma2 + x_j^2) * err_j^2
// where sigma2 is the row's mean square, as llama-quantize does with an
// imatrix: fit_symmetric for the _0 types, fit_affine for the _1 types.
// Q8_0 has no importance-weighted rule (its error is already small).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

#include "base/fp16.h"
#include "quant/block_legacy.h"
#include "quant/scale_search.h"

namespace folio::quant {

namespace {

constexpr std::size_t kQK = 32;
constexpr std::size_t kHalf = kQK / 2;
constexpr AffineGrid kWeightedAffineGrid{-0.9f, 0.05f, 36};

using Block32 = std::span<const float, kQK>;

// imp_j * sqrt(sigma2 + x_j^2): the weight llama-quantize gives each element.
std::array<float, kQK> element_weights(Block32 x, std::span<const float> importance,
                                       float row_sigma2) {
  std::array<float, kQK> w{};
  for (std::size_t j = 0; j < kQK; ++j) w[j] = importance[j] * std::sqrt(row_sigma2 + x[j] * x[j]);
  return w;
}

// The element of largest magnitude (the first one on ties), with its sign.
float signed_absmax(Block32 x) {
  float amax = 0.0f;
  float max = 0.0f;
  for (float v : x) {
    if (amax < std::fabs(v)) {
      amax = std::fabs(v);
      max = v;
    }
  }
  return max;
}

struct MinMax {
  float min;
  float max;
};

MinMax min_max(Block32 x) {
  MinMax r{std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()};
  for (float v : x) {
    if (v < r.min) r.min = v;
    if (v > r.max) r.max = v;
  }
  return r;
}

// Codes j and j+16 share byte j (low and high nibble).
template <std::size_t N>
void pack_nibbles(const std::array<std::uint8_t, kQK>& codes, std::uint8_t (&qs)[N]) {
  static_assert(N == kHalf);
  for (std::size_t j = 0; j < kHalf; ++j) {
    qs[j] = static_cast<std::uint8_t>((codes[j] & 0x0F) | (codes[j + kHalf] & 0x0F) << 4);
  }
}

// Bit 4 of code j goes to bit j of qh (little-endian u32).
void pack_fifth_bits(const std::array<std::uint8_t, kQK>& codes, std::uint8_t (&qh)[4]) {
  std::uint32_t bits = 0;
  for (std::size_t j = 0; j < kQK; ++j)
    bits |= static_cast<std::uint32_t>((codes[j] >> 4) & 1u) << j;
  for (std::size_t b = 0; b < 4; ++b) qh[b] = static_cast<std::uint8_t>(bits >> (8 * b));
}

// Round-to-nearest codes for the _0 types: trunc(x/d + bias + 0.5), capped.
std::array<std::uint8_t, kQK> symmetric_codes(Block32 x, float id, float bias, int cap) {
  std::array<std::uint8_t, kQK> codes{};
  for (std::size_t j = 0; j < kQK; ++j) {
    const auto t = static_cast<std::int8_t>(x[j] * id + (bias + 0.5f));
    codes[j] = static_cast<std::uint8_t>(std::min<int>(cap, t));
  }
  return codes;
}

std::array<std::uint8_t, kQK> affine_codes(Block32 x, float min, float id, int cap) {
  std::array<std::uint8_t, kQK> codes{};
  for (std::size_t j = 0; j < kQK; ++j) {
    // Truncating v + 0.5 (v >= 0) is ggml's rounding here (ties up): identical bytes.
    // NOLINTNEXTLINE(bugprone-incorrect-roundings)
    const auto t = static_cast<std::uint8_t>((x[j] - min) * id + 0.5f);
    codes[j] = static_cast<std::uint8_t>(std::min<int>(cap, t));
  }
  return codes;
}

std::array<std::uint8_t, kQK> to_unsigned(const std::array<std::int8_t, kQK>& l) {
  std::array<std::uint8_t, kQK> codes{};
  for (std::size_t j = 0; j < kQK; ++j) codes[j] = static_cast<std::uint8_t>(l[j]);
  return codes;
}

// The _0 rule: d = max / -levels (levels 8 or 16).
float symmetric_step(Block32 x, float levels) {
  return signed_absmax(x) / -levels;
}

}  // namespace

void quantize(Block32 x, std::span<const float> importance, float row_sigma2, BlockQ4_0& b) {
  if (!importance.empty()) {
    std::array<std::int8_t, kQK> l{};
    const auto w = element_weights(x, importance, row_sigma2);
    b.d = f32_to_fp16(fit_symmetric(x, 8, w, l));
    pack_nibbles(to_unsigned(l), b.qs);
    return;
  }
  const float d = symmetric_step(x, 8.0f);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  b.d = f32_to_fp16(d);
  pack_nibbles(symmetric_codes(x, id, 8.0f, 15), b.qs);
}

void quantize(Block32 x, std::span<const float> importance, float row_sigma2, BlockQ4_1& b) {
  if (!importance.empty()) {
    std::array<std::uint8_t, kQK> l{};
    const auto w = element_weights(x, importance, row_sigma2);
    const AffineFit fit = fit_affine(x, 15, w, kWeightedAffineGrid, l);
    b.d = f32_to_fp16(fit.scale);
    b.m = f32_to_fp16(-fit.min);
    pack_nibbles(l, b.qs);
    return;
  }
  const MinMax mm = min_max(x);
  const float d = (mm.max - mm.min) / 15.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  b.d = f32_to_fp16(d);
  b.m = f32_to_fp16(mm.min);
  pack_nibbles(affine_codes(x, mm.min, id, 15), b.qs);
}

void quantize(Block32 x, std::span<const float> importance, float row_sigma2, BlockQ5_0& b) {
  std::array<std::uint8_t, kQK> codes{};
  if (!importance.empty()) {
    std::array<std::int8_t, kQK> l{};
    const auto w = element_weights(x, importance, row_sigma2);
    b.d = f32_to_fp16(fit_symmetric(x, 16, w, l));
    codes = to_unsigned(l);
  } else {
    const float d = symmetric_step(x, 16.0f);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b.d = f32_to_fp16(d);
    codes = symmetric_codes(x, id, 16.0f, 31);
  }
  pack_nibbles(codes, b.qs);
  pack_fifth_bits(codes, b.qh);
}

void quantize(Block32 x, std::span<const float> importance, float row_sigma2, BlockQ5_1& b) {
  std::array<std::uint8_t, kQK> codes{};
  if (!importance.empty()) {
    const auto w = element_weights(x, importance, row_sigma2);
    const AffineFit fit = fit_affine(x, 31, w, kWeightedAffineGrid, codes);
    b.d = f32_to_fp16(fit.scale);
    b.m = f32_to_fp16(-fit.min);
  } else {
    const MinMax mm = min_max(x);
    const float d = (mm.max - mm.min) / 31.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b.d = f32_to_fp16(d);
    b.m = f32_to_fp16(mm.min);
    codes = affine_codes(x, mm.min, id, 31);
  }
  pack_nibbles(codes, b.qs);
  pack_fifth_bits(codes, b.qh);
}

void quantize(Block32 x, std::span<const float> /*importance*/, float /*row_sigma2*/,
              BlockQ8_0& b) {
  float amax = 0.0f;
  for (float v : x) amax = std::max(amax, std::fabs(v));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  b.d = f32_to_fp16(d);
  for (std::size_t j = 0; j < kQK; ++j) b.qs[j] = static_cast<std::int8_t>(std::round(x[j] * id));
}

}  // namespace folio::quant
