// quant/quantize_kquant.cpp: quantizers for Q4_K, Q5_K and Q6_K
// (super-block layouts in block_kquant.h).
//
// A super-block of 256 weights is fitted in two levels: each sub-block (32
// weights for Q4_K/Q5_K, 16 for Q6_K) gets its own float scale (and min),
// then those floats are themselves quantized to 6-bit (Q4_K/Q5_K) or 8-bit
// (Q6_K) codes under the super-block's fp16 step, and finally every weight is
// re-rounded against the scale it will actually be decoded with.
//
// Without importances these are ggml's reference rules (what llama-quantize
// writes without an imatrix): sub-block weights av_x + |x| (av_x the
// sub-block's RMS) for Q4_K/Q5_K, x^2 for Q6_K; scales coded by rounding
// against the largest. With importances (imatrix-style, one per column) the
// weights become imp_j * sqrt(sigma2 + x_j^2) with sigma2 twice the
// super-block's mean square (Q6_K: imp_j alone), the step grid is finer, and
// the scale codes are searched too (fit_codes), as llama-quantize does.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "base/fp16.h"
#include "quant/block_kquant.h"
#include "quant/scale_search.h"

namespace folio::quant {

namespace {

constexpr std::size_t kSub = 32;               // Q4_K / Q5_K sub-block
constexpr std::size_t kSubs = kQK_K / kSub;    // 8
constexpr std::size_t kSub6 = 16;              // Q6_K sub-block
constexpr std::size_t kSubs6 = kQK_K / kSub6;  // 16
constexpr AffineGrid kPlainGrid4{-1.0f, 0.1f, 20};
constexpr AffineGrid kPlainGrid5{-0.5f, 0.1f, 15};
constexpr AffineGrid kWeightedGrid{-0.9f, 0.05f, 36};

using Super = std::span<const float, kQK_K>;

// The sub-block fits of a Q4_K/Q5_K super-block, before coding the scales.
struct SubFits {
  std::array<float, kSubs> scales{};
  std::array<float, kSubs> mins{};
  std::array<float, kSubs> weight_sums{};  // weighted path only
  std::array<std::uint8_t, kQK_K> codes{};
};

SubFits fit_subblocks(Super x, std::span<const float> importance, int nmax,
                      const AffineGrid& plain_grid) {
  SubFits f;
  std::array<float, kSub> w{};
  float sigma2 = 0.0f;
  if (!importance.empty()) {
    float sum_x2 = 0.0f;
    for (float v : x) sum_x2 += v * v;
    sigma2 = 2.0f * sum_x2 / static_cast<float>(kQK_K);
  }
  for (std::size_t j = 0; j < kSubs; ++j) {
    const auto xs = x.subspan(kSub * j, kSub);
    if (importance.empty()) {
      float sum_x2 = 0.0f;
      for (float v : xs) sum_x2 += v * v;
      const float av_x = std::sqrt(sum_x2 / static_cast<float>(kSub));
      for (std::size_t l = 0; l < kSub; ++l) w[l] = av_x + std::fabs(xs[l]);
    } else {
      for (std::size_t l = 0; l < kSub; ++l) {
        w[l] = importance[kSub * j + l] * std::sqrt(sigma2 + xs[l] * xs[l]);
      }
      float sum_w = 0.0f;
      for (float v : w) sum_w += v;
      f.weight_sums[j] = sum_w;
    }
    const AffineFit fit = fit_affine(xs, nmax, w, importance.empty() ? plain_grid : kWeightedGrid,
                                     std::span(f.codes).subspan(kSub * j, kSub));
    f.scales[j] = fit.scale;
    f.mins[j] = fit.min;
  }
  return f;
}

// 6-bit scale and min codes, their fp16 steps, packed into 12 bytes.
struct CodedScales {
  std::uint16_t d;
  std::uint16_t dmin;
  std::uint8_t packed[kScaleBytes];
};

void pack_scale_min(const std::array<std::uint8_t, kSubs>& ls,
                    const std::array<std::uint8_t, kSubs>& lm, std::uint8_t (&s)[kScaleBytes]) {
  for (std::size_t j = 0; j < kSubs; ++j) {
    if (j < 4) {
      s[j] = ls[j];
      s[j + 4] = lm[j];
    } else {
      s[j + 4] = static_cast<std::uint8_t>((ls[j] & 0x0F) | (lm[j] & 0x0F) << 4);
      s[j - 4] = static_cast<std::uint8_t>(s[j - 4] | (ls[j] >> 4) << 6);
      s[j] = static_cast<std::uint8_t>(s[j] | (lm[j] >> 4) << 6);
    }
  }
}

CodedScales code_scales(const SubFits& f, bool weighted) {
  CodedScales c{};
  std::array<std::uint8_t, kSubs> ls{};
  std::array<std::uint8_t, kSubs> lm{};
  if (weighted) {
    const float d = fit_codes(f.scales, 63, f.weight_sums, ls);
    const float m = fit_codes(f.mins, 63, f.weight_sums, lm);
    for (std::size_t j = 0; j < kSubs; ++j) {
      ls[j] = std::min<std::uint8_t>(63, ls[j]);
      lm[j] = std::min<std::uint8_t>(63, lm[j]);
    }
    c.d = f32_to_fp16(d);
    c.dmin = f32_to_fp16(m);
  } else {
    float max_scale = 0.0f;
    float max_min = 0.0f;
    for (std::size_t j = 0; j < kSubs; ++j) {
      max_scale = std::max(max_scale, f.scales[j]);
      max_min = std::max(max_min, f.mins[j]);
    }
    const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
    for (std::size_t j = 0; j < kSubs; ++j) {
      ls[j] = std::min<std::uint8_t>(
          63, static_cast<std::uint8_t>(nearest_int(inv_scale * f.scales[j])));
      lm[j] =
          std::min<std::uint8_t>(63, static_cast<std::uint8_t>(nearest_int(inv_min * f.mins[j])));
    }
    c.d = f32_to_fp16(max_scale / 63.0f);
    c.dmin = f32_to_fp16(max_min / 63.0f);
  }
  pack_scale_min(ls, lm, c.packed);
  return c;
}

// Re-rounds every weight against the decoded sub-block scale and min
// (sub-blocks whose decoded scale is 0 keep their fitted codes).
void requantize(Super x, const CodedScales& c, int nmax, std::array<std::uint8_t, kQK_K>& codes) {
  for (std::size_t j = 0; j < kSubs; ++j) {
    const ScaleMin sm = scale_min_k4(c.packed, j);
    const float d = fp16_to_f32(c.d) * static_cast<float>(sm.scale);
    if (d == 0.0f) continue;
    const float dm = fp16_to_f32(c.dmin) * static_cast<float>(sm.min);
    for (std::size_t l = 0; l < kSub; ++l) {
      const int q = nearest_int((x[kSub * j + l] + dm) / d);
      codes[kSub * j + l] = static_cast<std::uint8_t>(std::max(0, std::min(nmax, q)));
    }
  }
}

}  // namespace

void quantize(Super x, std::span<const float> importance, float /*row_sigma2*/, BlockQ4_K& b) {
  SubFits f = fit_subblocks(x, importance, 15, kPlainGrid4);
  const CodedScales c = code_scales(f, !importance.empty());
  b.d = c.d;
  b.dmin = c.dmin;
  std::memcpy(b.scales, c.packed, kScaleBytes);
  requantize(x, c, 15, f.codes);
  // Each 64-weight chunk: weights 0..31 in the low nibbles, 32..63 in the high.
  for (std::size_t chunk = 0; chunk < kQK_K / 64; ++chunk) {
    for (std::size_t l = 0; l < 32; ++l) {
      b.qs[32 * chunk + l] =
          static_cast<std::uint8_t>(f.codes[64 * chunk + l] | f.codes[64 * chunk + 32 + l] << 4);
    }
  }
}

void quantize(Super x, std::span<const float> importance, float /*row_sigma2*/, BlockQ5_K& b) {
  SubFits f = fit_subblocks(x, importance, 31, kPlainGrid5);
  const CodedScales c = code_scales(f, !importance.empty());
  b.d = c.d;
  b.dmin = c.dmin;
  std::memcpy(b.scales, c.packed, kScaleBytes);
  requantize(x, c, 31, f.codes);
  std::memset(b.qh, 0, sizeof b.qh);
  // Chunk c of 64: low nibbles as Q4_K; the 5th bits of its two halves go to
  // bits 2c and 2c+1 of qh[l].
  for (std::size_t chunk = 0; chunk < kQK_K / 64; ++chunk) {
    for (std::size_t l = 0; l < 32; ++l) {
      const int lo = f.codes[64 * chunk + l];
      const int hi = f.codes[64 * chunk + 32 + l];
      b.qh[l] = static_cast<std::uint8_t>(b.qh[l] | ((lo >> 4) & 1) << (2 * chunk) |
                                          ((hi >> 4) & 1) << (2 * chunk + 1));
      b.qs[32 * chunk + l] = static_cast<std::uint8_t>((lo & 0x0F) | (hi & 0x0F) << 4);
    }
  }
}

void quantize(Super x, std::span<const float> importance, float /*row_sigma2*/, BlockQ6_K& b) {
  std::array<std::int8_t, kQK_K> codes{};
  std::array<float, kSubs6> scales{};
  float max_scale = 0.0f;
  float max_abs_scale = 0.0f;
  for (std::size_t ib = 0; ib < kSubs6; ++ib) {
    const std::span<const float> imp =
        importance.empty() ? importance : importance.subspan(kSub6 * ib, kSub6);
    scales[ib] = fit_symmetric(x.subspan(kSub6 * ib, kSub6), 32, imp,
                               std::span(codes).subspan(kSub6 * ib, kSub6));
    if (std::fabs(scales[ib]) > max_abs_scale) {
      max_abs_scale = std::fabs(scales[ib]);
      max_scale = scales[ib];
    }
  }
  std::memset(&b, 0, sizeof b);
  if (max_abs_scale < kGroupMaxEps) return;  // all zero: d = 0

  const float iscale = -128.0f / max_scale;
  b.d = f32_to_fp16(1.0f / iscale);
  for (std::size_t ib = 0; ib < kSubs6; ++ib) {
    b.scales[ib] = static_cast<std::int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
  }
  for (std::size_t j = 0; j < kSubs6; ++j) {
    const float d = fp16_to_f32(b.d) * static_cast<float>(b.scales[j]);
    if (d == 0.0f) continue;
    for (std::size_t i = 0; i < kSub6; ++i) {
      const int q = std::max(-32, std::min(31, nearest_int(x[kSub6 * j + i] / d)));
      codes[kSub6 * j + i] = static_cast<std::int8_t>(q + 32);
    }
  }
  // Each 128-weight half h: weights 0..31 / 32..63 / 64..95 / 96..127 of it
  // give their low nibbles to ql[64h + l] low, ql[64h + 32 + l] low,
  // ql[64h + l] high, ql[64h + 32 + l] high; their top 2 bits go to
  // qh[32h + l] at shifts 0, 2, 4, 6.
  for (std::size_t h = 0; h < kQK_K / 128; ++h) {
    for (std::size_t l = 0; l < 32; ++l) {
      const auto q = [&](std::size_t k) { return static_cast<int>(codes[128 * h + 32 * k + l]); };
      b.ql[64 * h + l] = static_cast<std::uint8_t>((q(0) & 0x0F) | (q(2) & 0x0F) << 4);
      b.ql[64 * h + 32 + l] = static_cast<std::uint8_t>((q(1) & 0x0F) | (q(3) & 0x0F) << 4);
      b.qh[32 * h + l] = static_cast<std::uint8_t>((q(0) >> 4) | (q(1) >> 4) << 2 |
                                                   (q(2) >> 4) << 4 | (q(3) >> 4) << 6);
    }
  }
}

}  // namespace folio::quant
