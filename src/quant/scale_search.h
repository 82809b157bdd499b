// quant/scale_search.h: the scale (and min) searches behind every block
// quantizer: given a group of weights and their importances, choose the
// grid's step (and offset) and each weight's integer code so that the
// importance-weighted squared error is small.
//
// These follow ggml's reference quantizers (ggml-quants.c: make_qx_quants,
// make_qkx2/3_quants, make_qp_quants) operation for operation, because a
// file quantized by folio should be byte-identical to llama-quantize's where
// llama-quantize is deterministic. Every sum is a float32 accumulation in
// index order and every product is rounded before the next operation (the
// library is built with -ffp-contract=off).
//
//   fit_symmetric  x ~= d * (L - nmax),        L in [0, 2*nmax)     (Q4_0, Q5_0, Q6_K)
//   fit_affine     x ~= scale * L - min_out,   L in [0, nmax]       (Q4_1, Q5_1, Q4_K, Q5_K)
//   fit_codes      x ~= scale * L,             L in [0, nmax], x >= 0 (k-quant sub-block scales)
#pragma once

#include <cstdint>
#include <span>

namespace folio::quant {

// Round to nearest, ties to even (ggml's nearest_int, for |v| < 2^22).
int nearest_int(float v);

// Groups whose largest magnitude is below this are all zero.
inline constexpr float kGroupMaxEps = 1e-15f;

// The symmetric fit: tries the step -max/nmax and 18 neighbours
// -max/(nmax + 0.1*k), k = -9..9, each refined to the least-squares step for
// its codes, and keeps the one with the smallest weighted error. `weights`
// is empty for x^2 (the plain rule) or one importance per weight. Writes the
// codes (biased by nmax) to L and returns the step d (0 for an all-zero group).
float fit_symmetric(std::span<const float> x, int nmax, std::span<const float> weights,
                    std::span<std::int8_t> L);

// The grid of candidate steps for fit_affine: (nmax + rmin + rdelta*k) /
// (max - min) for k = 0..nstep, on top of the plain nmax / (max - min).
struct AffineGrid {
  float rmin;
  float rdelta;
  int nstep;
};

struct AffineFit {
  float scale;
  float min;  // subtracted: x ~= scale * L - min (so min >= 0: the group's offset negated)
};

// The affine fit: every candidate step is solved for the weighted
// least-squares scale and offset of its codes (the offset clamped to <= 0),
// keeping the smallest weighted squared error. `weights` must hold one
// importance per weight. Writes codes in [0, nmax] to L.
AffineFit fit_affine(std::span<const float> x, int nmax, std::span<const float> weights,
                     const AffineGrid& grid, std::span<std::uint8_t> L);

// Quantizes non-negative values (a super-block's sub-block scales or mins)
// to codes in [0, nmax] under one float step: a search over 9 steps, then up
// to 5 rounds of single-code improvements, weighted by `weights`. Returns the
// step (0 when every value is below kGroupMaxEps).
float fit_codes(std::span<const float> x, int nmax, std::span<const float> weights,
                std::span<std::uint8_t> L);

}  // namespace folio::quant
