// quant/scale_search.cpp: the scale searches (see scale_search.h for the
// contract and why the arithmetic order is fixed).
#include "quant/scale_search.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

#include "base/error.h"

namespace folio::quant {

namespace {

constexpr std::size_t kMaxGroup = 256;  // the largest group any block format fits at once

// Weighted sums of a symmetric candidate: sum w*x*l and sum w*l*l.
struct SymSums {
  float xl = 0.0f;
  float ll = 0.0f;
};

int clamp_code(int l, int lo, int hi) {
  return std::max(lo, std::min(hi, l));
}

}  // namespace

int nearest_int(float v) {
  return static_cast<int>(std::nearbyint(v));
}

float fit_symmetric(std::span<const float> x, int nmax, std::span<const float> weights,
                    std::span<std::int8_t> L) {
  const std::size_t n = x.size();
  FOLIO_CHECK(L.size() == n && (weights.empty() || weights.size() == n),
              "fit_symmetric: sizes disagree");
  float max = 0.0f;
  float amax = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    std::fill(L.begin(), L.end(), std::int8_t{0});
    return 0.0f;
  }
  const auto weight = [&](std::size_t i) { return weights.empty() ? x[i] * x[i] : weights[i]; };
  // The codes and weighted sums of one inverse step.
  const auto evaluate = [&](float iscale, bool store) {
    SymSums s;
    for (std::size_t i = 0; i < n; ++i) {
      const int l = clamp_code(nearest_int(iscale * x[i]), -nmax, nmax - 1);
      if (store) L[i] = static_cast<std::int8_t>(l + nmax);
      const float w = weight(i);
      const auto fl = static_cast<float>(l);
      s.xl += w * x[i] * fl;
      s.ll += w * fl * fl;
    }
    return s;
  };

  SymSums s = evaluate(static_cast<float>(-nmax) / max, true);
  float scale = s.ll != 0.0f ? s.xl / s.ll : 0.0f;
  float best = scale * s.xl;
  for (int k = -9; k <= 9; ++k) {
    if (k == 0) continue;
    const float iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(k)) / max;
    s = evaluate(iscale, false);
    if (s.ll > 0.0f && s.xl * s.xl > best * s.ll) {
      evaluate(iscale, true);
      scale = s.xl / s.ll;
      best = scale * s.xl;
    }
  }
  return scale;
}

AffineFit fit_affine(std::span<const float> x, int nmax, std::span<const float> weights,
                     const AffineGrid& grid, std::span<std::uint8_t> L) {
  const std::size_t n = x.size();
  FOLIO_CHECK(n >= 1 && n <= kMaxGroup && L.size() == n && weights.size() == n,
              "fit_affine: sizes disagree");
  float min = x[0];
  float max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (std::size_t i = 1; i < n; ++i) {
    min = std::min(min, x[i]);
    max = std::max(max, x[i]);
    sum_w += weights[i];
    sum_x += weights[i] * x[i];
  }
  if (min > 0.0f) min = 0.0f;
  if (max == min) {
    std::fill(L.begin(), L.end(), std::uint8_t{0});
    return {0.0f, -min};
  }
  // Weighted squared error of codes `codes` under (scale, offset).
  const auto error = [&](const auto& codes, float scale, float offset) {
    float e = 0.0f;
    for (std::size_t i = 0; i < n; ++i) {
      float diff = scale * static_cast<float>(codes[i]) + offset - x[i];
      diff = diff * diff;
      e += weights[i] * diff;
    }
    return e;
  };

  float iscale = static_cast<float>(nmax) / (max - min);
  float scale = 1.0f / iscale;
  for (std::size_t i = 0; i < n; ++i) {
    L[i] = static_cast<std::uint8_t>(clamp_code(nearest_int(iscale * (x[i] - min)), 0, nmax));
  }
  float best_error = error(L, scale, min);

  // Later candidates are taken relative to the best offset so far (`min`
  // moves when a candidate wins), as ggml's search does.
  std::array<std::uint8_t, kMaxGroup> aux{};
  for (int k = 0; k <= grid.nstep; ++k) {
    iscale =
        (grid.rmin + grid.rdelta * static_cast<float>(k) + static_cast<float>(nmax)) / (max - min);
    float sum_l = 0.0f;
    float sum_l2 = 0.0f;
    float sum_xl = 0.0f;
    for (std::size_t i = 0; i < n; ++i) {
      const int l = clamp_code(nearest_int(iscale * (x[i] - min)), 0, nmax);
      aux[i] = static_cast<std::uint8_t>(l);
      const float w = weights[i];
      const auto fl = static_cast<float>(l);
      sum_l += w * fl;
      sum_l2 += w * fl * fl;
      sum_xl += w * fl * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (det > 0.0f) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
      if (this_min > 0.0f) {
        this_min = 0.0f;
        this_scale = sum_xl / sum_l2;
      }
      const float cur_error = error(aux, this_scale, this_min);
      if (cur_error < best_error) {
        std::copy_n(aux.begin(), n, L.begin());
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  return {scale, -min};
}

float fit_codes(std::span<const float> x, int nmax, std::span<const float> weights,
                std::span<std::uint8_t> L) {
  const std::size_t n = x.size();
  FOLIO_CHECK(L.size() == n && weights.size() == n, "fit_codes: sizes disagree");
  float max = 0.0f;
  for (float v : x) max = std::max(max, v);
  if (max < kGroupMaxEps) {
    std::fill(L.begin(), L.end(), std::uint8_t{0});
    return 0.0f;
  }
  float iscale = static_cast<float>(nmax) / max;
  // Weighted squared error of the step 1/is with codes rounded from is*x.
  const auto mse = [&](float is, bool clamp) {
    const float step = 1.0f / is;
    float e = 0.0f;
    for (std::size_t i = 0; i < n; ++i) {
      int l = nearest_int(is * x[i]);
      if (clamp) l = std::min(nmax, l);
      const float diff = x[i] - step * static_cast<float>(l);
      e += weights[i] * diff * diff;
    }
    return e;
  };
  // The first candidate's codes are not clamped (ggml's order; x <= max
  // keeps them within nmax anyway).
  float best_mse = mse(iscale, false);
  for (int k = -4; k <= 4; ++k) {
    if (k == 0) continue;
    const float is = (0.1f * static_cast<float>(k) + static_cast<float>(nmax)) / max;
    const float e = mse(is, true);
    if (e < best_mse) {
      best_mse = e;
      iscale = is;
    }
  }
  float sumlx = 0.0f;
  float suml2 = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    const int l = std::min(nmax, nearest_int(iscale * x[i]));
    L[i] = static_cast<std::uint8_t>(l);
    const float w = weights[i];
    const auto fl = static_cast<float>(l);
    sumlx += w * x[i] * fl;
    suml2 += w * fl * fl;
  }
  // Move single codes while that raises sumlx^2 / suml2 (lowers the error).
  for (int round = 0; round < 5; ++round) {
    int changed = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const float w = weights[i];
      const auto old_l = static_cast<float>(L[i]);
      float slx = sumlx - w * x[i] * old_l;
      float sl2 = suml2 - w * old_l * old_l;
      if (slx > 0.0f && sl2 > 0.0f) {
        const int new_l = std::min(nmax, nearest_int(x[i] * sl2 / slx));
        if (new_l != L[i]) {
          const auto fl = static_cast<float>(new_l);
          slx += w * x[i] * fl;
          sl2 += w * fl * fl;
          if (slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = static_cast<std::uint8_t>(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++changed;
          }
        }
      }
    }
    if (changed == 0) break;
  }
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

}  // namespace folio::quant
