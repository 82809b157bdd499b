// tests/kernels/matmul_test.cpp: every weight type's fast matmul (at every
// instruction-set level the host supports, down to the forced scalar
// fallback) against matmul_ref (exact dequantization, f64 sums),
// with 16-bit (default) and 8-bit activations for every quantized type.
//
// Two checks per output:
//  * exact-activation check: the fast path's documented activation rounding
//    (x^ = d * round_half_even(x * (1/d)), d = max|x_block| / Q with Q = 32258
//    for 16-bit and 127 for 8-bit activations) is applied to x here, and
//    matmul_ref(W, x^) must match to f32 rounding: a relative 2e-5 of
//    sum_j |w_j| |x_j| (scales are multiplied in f32 and partial sums are
//    added in a different order). This catches any wrong weight or
//    activation element.
//  * end-to-end check against matmul_ref(W, x) with the bound below.
//
// Tolerance. The fast path quantizes each activation block of B values (32;
// 256 for k-quants with 8-bit activations, which use Q = 127) to x^ = d*q with
// d = max|x|/Q, so |x^ - x| <= d/2 = max|x_block|/(2Q) per element, and the
// result can move by at most
//   E_q = sum_j |w_j| * max|x_block(j)| / (2Q).
// On top of that come f32 rounding differences (scales are multiplied in f32,
// partial sums are added in a different order): a relative 2e-5 of
// sum_j |w_j| |x_j| is far above that, yet far below any wrong-element error.
#include "kernels/matmul.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "isa_levels.h"
#include "kernels/cpu/gemm_avx2.h"
#include "kernels/cpu/gemm_kernel.h"
#include "kernels/cpu_features.h"
#include "quant/dequantize.h"
#include "quant/traits.h"
#include "random_weights.h"

namespace folio::kernels {
namespace {

using gguf::TensorType;

constexpr TensorType kTypes[] = {
    TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q4_0, TensorType::Q4_1,
    TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q2_K, TensorType::Q3_K,
    TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K};

// Values per activation block: 16-bit activations come in blocks of 32 for
// every quantized type, 8-bit ones in the weight's block (32, or 256 for k-quants).
std::size_t act_block(TensorType t, ActivationBits bits) {
  const std::size_t be = quant::traits(t).block_elems;
  if (be == 1) return 0;  // 0: activations stay f32
  return bits == ActivationBits::k16 ? 32 : be;
}

// Q: the largest quantized activation magnitude (see the top of the file).
float act_qmax(TensorType /*t*/, ActivationBits bits) {
  return bits == ActivationBits::k16 ? 32258.0f : 127.0f;
}

constexpr ActivationBits kAllBits[] = {ActivationBits::k16, ActivationBits::k8};

std::vector<std::size_t> col_sizes(TensorType t) {
  const std::size_t be = quant::traits(t).block_elems;
  if (be == 1) return {1, 7, 8, 15, 16, 17, 40, 100};
  if (be == 32) return {32, 64, 96, 160};
  return {256, 512, 768};
}

// x^: the activations as the fast path sees them (see the top of the file).
std::vector<float> quantized_activations(TensorType t, ActivationBits bits,
                                         const std::vector<float>& x) {
  const std::size_t B = act_block(t, bits);
  if (B == 0) return x;
  std::vector<float> q(x.size());
  for (std::size_t b0 = 0; b0 < x.size(); b0 += B) {
    float amax = 0;
    for (std::size_t k = b0; k < b0 + B; ++k) amax = std::max(amax, std::fabs(x[k]));
    const float d = amax / act_qmax(t, bits), id = d != 0.0f ? 1.0f / d : 0.0f;
    for (std::size_t k = b0; k < b0 + B; ++k) q[k] = d * std::nearbyint(x[k] * id);
  }
  return q;
}

// Per-output bounds described at the top of the file: {end-to-end, exact-activation}.
struct Tolerance {
  std::vector<double> full, rounding;
};

Tolerance tolerances(const WeightMatrix& w, ActivationBits bits, const std::vector<float>& x,
                     std::size_t n) {
  const std::size_t rows = w.rows(), cols = w.cols(), B = act_block(w.type(), bits);
  const double two_q = 2.0 * act_qmax(w.type(), bits);
  const std::size_t rb = w.file_bytes().size() / rows;
  std::vector<float> wr(cols);
  std::vector<double> amax(x.size(), 0.0);  // max |x| of each element's block
  for (std::size_t b0 = 0; B != 0 && b0 < x.size(); b0 += B) {
    double m = 0;
    for (std::size_t k = b0; k < b0 + B; ++k) m = std::max(m, std::fabs(double{x[k]}));
    std::fill(amax.begin() + static_cast<std::ptrdiff_t>(b0),
              amax.begin() + static_cast<std::ptrdiff_t>(b0 + B), m);
  }
  Tolerance tol{std::vector<double>(n * rows), std::vector<double>(n * rows)};
  for (std::size_t r = 0; r < rows; ++r) {
    quant::dequantize_row(w.type(), w.file_bytes().subspan(r * rb, rb), wr);
    for (std::size_t c = 0; c < n; ++c) {
      double eq = 0, mag = 0;
      for (std::size_t j = 0; j < cols; ++j) {
        eq += std::fabs(wr[j]) * amax[c * cols + j] / two_q;
        mag += std::fabs(wr[j]) * std::fabs(x[c * cols + j]);
      }
      tol.full[c * rows + r] = eq * 1.001 + 2e-5 * mag + 1e-30;
      tol.rounding[c * rows + r] = 2e-5 * mag + 1e-30;
    }
  }
  return tol;
}

struct Case {
  TensorType type;
  std::size_t rows, cols, n;
  ActivationBits bits;
  std::string str() const {
    return std::string(quant::traits(type).name) + " " + std::to_string(rows) + "x" +
           std::to_string(cols) + " n=" + std::to_string(n) + " act" +
           std::to_string(static_cast<int>(bits));
  }
};

// Every level this host supports is run (forced with IsaOverride on the one
// matrix prepared at the detected level): each must be within the bounds, and
// the SIMD levels must agree bit for bit (they share the repacked layout and
// their integer sums are exact).
void check_case(const Case& k, ThreadPool& pool, std::mt19937& rng) {
  const auto bytes = testing::random_weights(k.type, k.rows, k.cols, rng);
  const WeightMatrix w = WeightMatrix::prepare(k.type, bytes, k.rows, k.cols);
  const auto x = testing::random_activations(k.n * k.cols, rng);
  const auto xq = quantized_activations(k.type, k.bits, x);
  std::vector<float> ref(k.n * k.rows), ref_q(k.n * k.rows), fast(k.n * k.rows), simd(k.n * k.rows);
  matmul_ref(w, x.data(), k.n, ref.data());
  matmul_ref(w, xq.data(), k.n, ref_q.data());
  const auto tol = tolerances(w, k.bits, x, k.n);
  bool have_simd = false;
  // Each level, and at the AVX-512 levels both decode kernels (they differ below 5 rows).
  std::vector<std::pair<Isa, DecodePanels>> runs;
  for (Isa isa : testing::supported_isas()) {
    runs.emplace_back(isa, DecodePanels::kOne);
    if (isa >= Isa::kAvx512) runs.emplace_back(isa, DecodePanels::kTwo);
  }
  for (auto [isa, panels] : runs) {
    {
      IsaOverride force(isa);
      DecodePanelsOverride decode(panels);
      matmul(w, x.data(), k.n, fast.data(), pool, k.bits);
    }
    const std::string what = k.str() + " " + std::string(isa_name(isa)) + " decode panels " +
                             std::string(decode_panels_name(panels));
    for (std::size_t i = 0; i < ref.size(); ++i) {
      ASSERT_LE(std::fabs(fast[i] - ref_q[i]), tol.rounding[i]) << what << ", output " << i;
      ASSERT_LE(std::fabs(fast[i] - ref[i]), tol.full[i]) << what << " vs exact, output " << i;
    }
    if (isa == Isa::kScalar) continue;
    if (!have_simd) {
      simd = fast;
      have_simd = true;
    } else {
      // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison): bit-identical floats wanted
      ASSERT_EQ(0, std::memcmp(simd.data(), fast.data(), fast.size() * sizeof(float)))
          << what << " differs from avx2";
    }
  }
}

TEST(Matmul, EveryTypeAndShapeMatchesReference) {
  ThreadPool pool(2);
  std::mt19937 rng(1234);
  for (ActivationBits bits : kAllBits) {
    for (TensorType t : kTypes) {
      for (std::size_t cols : col_sizes(t)) {
        // 12 and 29 rows end in a partial panel inside a two-panel (AVX-512) call.
        for (std::size_t rows : {1, 3, 12, 17, 29, 34}) {
          for (std::size_t n : {1, 2, 3, 5, 17}) check_case({t, rows, cols, n, bits}, pool, rng);
        }
      }
    }
  }
}

// 16-bit activations are the default, and on the 32-value block types and
// the k-quants they bring the fast path far closer to the exact product than
// 8-bit ones.
TEST(Matmul, SixteenBitActivationsAreTheDefaultAndMoreAccurate) {
  ThreadPool pool(1);
  std::mt19937 rng(5);
  for (TensorType t : {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_1, TensorType::Q8_0,
                       TensorType::Q4_K, TensorType::Q6_K}) {
    const std::size_t rows = 64, cols = 256;
    const auto bytes = testing::random_weights(t, rows, cols, rng);
    const WeightMatrix w = WeightMatrix::prepare(t, bytes, rows, cols);
    const auto x = testing::random_activations(cols, rng);
    std::vector<float> ref(rows), y(rows);
    matmul_ref(w, x.data(), 1, ref.data());
    double err[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      if (k == 0) {
        matmul(w, x.data(), 1, y.data(), pool);  // the default
      } else {
        matmul(w, x.data(), 1, y.data(), pool, ActivationBits::k8);
      }
      for (std::size_t r = 0; r < rows; ++r) err[k] += std::fabs(double{y[r]} - ref[r]);
    }
    EXPECT_LT(err[0] * 30, err[1]) << quant::traits(t).name;
  }
}

// The AVX2 16-bit activation quantizer writes the same bytes as the scalar
// one (the scalar fallback and the panel kernels then see the same x^), also
// for all-zero blocks, exact rounding ties and the largest magnitudes.
TEST(Matmul, AvxAndScalarSixteenBitQuantizersAgree) {
  if (detected_isa() < Isa::kAvx2) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 rng(11);
  std::vector<float> x = testing::random_activations(32 * 64, rng);
  std::fill(x.begin(), x.begin() + 32, 0.0f);
  for (int j = 0; j < 32; ++j) x[32 + j] = static_cast<float>(j - 16) + 0.5f;  // ties
  x[64] = 1e30f;
  x[96] = -3e-38f;
  std::vector<std::uint8_t> a(x.size() / 32 * sizeof(cpu::ActQ16Block)), b(a.size());
  cpu::quantize_row_q16_32(x.data(), x.size(), a.data());
  cpu::avx2::quantize_row_q16_32(x.data(), x.size(), b.data());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size()));
  const auto* blocks = reinterpret_cast<const cpu::ActQ16Block*>(a.data());
  for (std::size_t i = 0; i < x.size() / 32; ++i) {
    for (int j = 0; j < 32; ++j) {
      ASSERT_LE(std::abs(int{blocks[i].lo[j]}), 127);  // Q8_0 kernels negate it
      ASSERT_LE(std::abs(int{blocks[i].hi[j]}), 127);
    }
  }
  // The int16 form holds the same values (in slot order): q = 254 * hi + lo, same d, s and
  // neg8_qsum.
  std::vector<std::uint8_t> c(x.size() / 32 * sizeof(cpu::ActI16Block)), d(c.size());
  cpu::quantize_row_i16_32(x.data(), x.size(), c.data());
  cpu::avx2::quantize_row_i16_32(x.data(), x.size(), d.data());
  EXPECT_EQ(0, std::memcmp(c.data(), d.data(), c.size()));
  const auto* wide = reinterpret_cast<const cpu::ActI16Block*>(c.data());
  for (std::size_t i = 0; i < x.size() / 32; ++i) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(wide[i].d), std::bit_cast<std::uint32_t>(blocks[i].d));
    ASSERT_EQ(std::bit_cast<std::uint32_t>(wide[i].s), std::bit_cast<std::uint32_t>(blocks[i].s));
    int sum = 0;
    for (int j = 0; j < 32; ++j) {
      ASSERT_EQ(int{wide[i].q[cpu::i16_slot(j)]},
                cpu::kActQ16Base * blocks[i].hi[j] + blocks[i].lo[j]);
      sum += wide[i].q[j];
    }
    // Q4_0's offset term in the integer sums: -8 * sum(q), in both forms.
    ASSERT_EQ(wide[i].neg8_qsum, -8 * sum) << "block " << i;
    ASSERT_EQ(blocks[i].neg8_qsum, -8 * sum) << "block " << i;
  }
}

// Every level's activation quantizers write the scalar ones' bytes (8-bit,
// 16-bit halves and int16 forms), zero blocks, ties, huge and tiny values
// included; levels the CPU lacks are named and skipped.
TEST(Matmul, EveryLevelsQuantizersWriteTheScalarBytes) {
  using cpu::QuantizeRowFn;
  struct Level {
    Isa isa;
    const char* name;
    QuantizeRowFn q8, q16, i16;
  };
  const Level levels[] = {{Isa::kAvx2, "avx2", cpu::avx2::quantize_row_q8_32,
                           cpu::avx2::quantize_row_q16_32, cpu::avx2::quantize_row_i16_32},
                          {Isa::kAvx512, "avx512", cpu::avx512::quantize_row_q8_32,
                           cpu::avx512::quantize_row_q16_32, cpu::avx512::quantize_row_i16_32}};
  std::mt19937 rng(13);
  std::vector<float> x = testing::random_activations(32 * 64, rng);
  std::fill(x.begin(), x.begin() + 32, 0.0f);
  for (int j = 0; j < 32; ++j) x[32 + j] = static_cast<float>(j - 16) + 0.5f;  // ties
  for (int j = 0; j < 32; ++j) x[64 + j] = static_cast<float>(j) * 0.25f - 4.0f;
  x[96] = 1e30f;
  x[128 + 17] = -3e-38f;
  x[160 + 31] = -5.0f;  // the block's maximum in its last lane, negative
  const struct {
    const char* name;
    std::size_t block_bytes;
    QuantizeRowFn scalar;
    QuantizeRowFn Level::*of;
  } forms[] = {{"q8_32", sizeof(cpu::ActQ8Block), cpu::quantize_row_q8_32, &Level::q8},
               {"q16_32", sizeof(cpu::ActQ16Block), cpu::quantize_row_q16_32, &Level::q16},
               {"i16_32", sizeof(cpu::ActI16Block), cpu::quantize_row_i16_32, &Level::i16}};
  int covered = 0;
  for (const Level& level : levels) {
    if (detected_isa() < level.isa) {
      std::printf("[ skipped  ] %s quantizers: this CPU lacks %s\n", level.name, level.name);
      continue;
    }
    ++covered;
    for (const auto& form : forms) {
      std::vector<std::uint8_t> want(x.size() / 32 * form.block_bytes, 0xAB), got(want.size(), 0);
      form.scalar(x.data(), x.size(), want.data());
      (level.*form.of)(x.data(), x.size(), got.data());
      EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size()))
          << level.name << " " << form.name;
    }
  }
  if (covered == 0) GTEST_SKIP() << "no AVX2 on this CPU";
}

// The AMX path's fused quantizer writes the bytes that quantizing rows and
// regrouping them into tiles writes, ties, zero blocks and huge values included.
TEST(Matmul, AmxTileQuantizerMatchesRowsThenRegroup) {
  if (detected_isa() < Isa::kAvx512) GTEST_SKIP() << "no AVX-512 on this CPU";
  const cpu::AmxKernel* a = cpu::amx_kernel(TensorType::Q4_0, ActivationBits::k16);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(a->quantize_tiles, nullptr);
  std::mt19937 rng(21);
  const std::size_t cols = 96, nb = cols / 32;
  std::vector<float> x = testing::random_activations(16 * cols, rng);
  std::fill(x.begin(), x.begin() + 32, 0.0f);
  for (int j = 0; j < 32; ++j) x[32 + j] = static_cast<float>(j - 16) + 0.5f;  // ties
  x[5 * cols] = 1e30f;
  x[7 * cols + 40] = -3e-38f;
  const std::size_t stride = cpu::act_row_bytes(a->act, cols);
  std::vector<std::uint8_t> rows(16 * stride), want(nb * a->tile_block_bytes), got(want.size());
  for (std::size_t r = 0; r < 16; ++r)
    a->quantize(x.data() + r * cols, cols, rows.data() + r * stride);
  a->regroup(rows.data(), stride, nb, want.data());
  a->quantize_tiles(x.data(), cols, got.data());
  EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size()));
}

// The rounding bound is not vacuous: corrupting one weight block breaks it by far.
TEST(Matmul, ToleranceCatchesAWrongBlock) {
  ThreadPool pool(1);
  std::mt19937 rng(7);
  for (TensorType t : {TensorType::Q4_1, TensorType::Q4_K, TensorType::Q6_K}) {
    const std::size_t cols = quant::traits(t).block_elems * 2;
    auto bytes = testing::random_weights(t, 1, cols, rng);
    const WeightMatrix w = WeightMatrix::prepare(t, bytes, 1, cols);
    const auto x = testing::random_activations(cols, rng);
    const auto xq = quantized_activations(t, ActivationBits::k16, x);
    float ref = 0, fast = 0;
    matmul_ref(w, xq.data(), 1, &ref);
    std::vector<std::uint8_t> broken = bytes;
    // Flip quant bits of the first block (skip its fp16 scales).
    for (std::size_t i = 4; i < quant::traits(t).block_bytes - 4; ++i) broken[i] ^= 0x5A;
    const WeightMatrix wb = WeightMatrix::prepare(t, broken, 1, cols);
    matmul(wb, x.data(), 1, &fast, pool);
    EXPECT_GT(std::fabs(fast - ref), 10 * tolerances(w, ActivationBits::k16, x, 1).rounding[0])
        << quant::traits(t).name;
  }
}

void batch_and_thread_invariant(ThreadPool& pool1, ThreadPool& pool2, std::mt19937& rng) {
  for (ActivationBits bits : kAllBits) {
    for (TensorType t : kTypes) {
      const std::size_t rows = 37, cols = col_sizes(t).back(), n = 67;
      const auto bytes = testing::random_weights(t, rows, cols, rng);
      const WeightMatrix w = WeightMatrix::prepare(t, bytes, rows, cols);
      const bool panel_type = t == TensorType::Q4_0 || t == TensorType::Q4_1 ||
                              t == TensorType::Q5_0 || t == TensorType::Q5_1 ||
                              t == TensorType::Q8_0 || t == TensorType::Q4_K ||
                              t == TensorType::Q6_K;
      if (panel_type && active_isa() >= Isa::kAvx2) {  // the k16 layout, shared with k8 calls
        EXPECT_TRUE(w.repacked()) << quant::traits(t).name << " should use the 8-row panel layout";
      }
      const auto x = testing::random_activations(n * cols, rng);
      std::vector<float> batched(n * rows), single(rows), two(n * rows);
      matmul(w, x.data(), n, batched.data(), pool1, bits);
      matmul(w, x.data(), n, two.data(), pool2, bits);
      EXPECT_EQ(0, std::memcmp(batched.data(), two.data(), batched.size() * 4))
          << quant::traits(t).name;
      for (std::size_t c = 0; c < n; ++c) {
        matmul(w, x.data() + c * cols, 1, single.data(), pool2, bits);
        // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison): bit-identical floats wanted
        EXPECT_EQ(0, std::memcmp(single.data(), batched.data() + c * rows, rows * 4))
            << quant::traits(t).name << " row " << c;
      }
    }
  }
}

// Greedy decoding must not depend on the batch: row c of a batched product is
// bit-identical to the product of that row alone, with any thread count.
// n = 67 spans more than one activation chunk and a partial 4-row tile; 37
// rows end in a partial 8-row panel for the repacked types (after two
// two-panel calls at the AVX-512 level). At every level the host supports.
TEST(Matmul, BatchAndThreadInvariant) {
  ThreadPool pool1(1), pool2(2);
  std::mt19937 rng(99);
  for (Isa isa : testing::supported_isas()) {
    IsaOverride force(isa);
    SCOPED_TRACE(std::string(isa_name(isa)));
    batch_and_thread_invariant(pool1, pool2, rng);
  }
}

// Matrices that read the same activations run in one pass of the pool when
// they share a kernel (q, k, v of one type) and one matmul each otherwise
// (a type or column count differs): either way every output is bit-identical
// to its own matmul, with partial panels and pairs at the ends of matrices,
// at every level the host supports, for decode (n = 1) and prefill rows.
TEST(Matmul, SharedInputMatchesSeparateProducts) {
  ThreadPool pool(2);
  std::mt19937 rng(7);
  struct Shape {
    TensorType type;
    std::size_t rows;
  };
  const std::vector<std::vector<Shape>> groups = {
      {{TensorType::Q4_0, 37}, {TensorType::Q4_0, 8}, {TensorType::Q4_0, 29}},
      {{TensorType::Q8_0, 16}, {TensorType::Q8_0, 3}},
      {{TensorType::Q4_1, 24}, {TensorType::Q8_0, 17}, {TensorType::Q4_1, 9}},  // mixed types
      {{TensorType::Q4_K, 12}, {TensorType::Q6_K, 20}},
      {{TensorType::F32, 5}, {TensorType::F32, 11}}};  // no panel kernel
  for (Isa isa : testing::supported_isas()) {
    IsaOverride force(isa);
    for (const auto& group : groups) {
      const std::size_t cols = quant::traits(group[0].type).block_elems == 256 ? 512 : 64;
      std::vector<std::vector<std::uint8_t>> bytes;
      std::vector<WeightMatrix> ws;
      for (const Shape& sh : group) {
        bytes.push_back(testing::random_weights(sh.type, sh.rows, cols, rng));
        ws.push_back(WeightMatrix::prepare(sh.type, bytes.back(), sh.rows, cols));
      }
      for (std::size_t n : {1, 3, 17}) {
        const auto x = testing::random_activations(n * cols, rng);
        for (ActivationBits bits : kAllBits) {
          std::vector<std::vector<float>> shared(group.size()), alone(group.size());
          std::vector<MatmulOutput> outs;
          for (std::size_t m = 0; m < group.size(); ++m) {
            shared[m].assign(n * group[m].rows, -1.0f);
            alone[m].assign(n * group[m].rows, -2.0f);
            outs.push_back({&ws[m], shared[m].data()});
            matmul(ws[m], x.data(), n, alone[m].data(), pool, bits);
          }
          matmul_shared_input(outs, x.data(), n, pool, bits);
          for (std::size_t m = 0; m < group.size(); ++m) {
            // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison): bit-identical floats wanted
            EXPECT_EQ(0, std::memcmp(shared[m].data(), alone[m].data(), shared[m].size() * 4))
                << isa_name(isa) << " " << quant::traits(group[m].type).name << " output " << m
                << " n=" << n << " act" << static_cast<int>(bits);
          }
        }
      }
    }
  }
}

TEST(Matmul, RejectsBadShapesAndTypes) {
  std::vector<std::uint8_t> bytes(18 * 4);
  EXPECT_THROW(WeightMatrix::prepare(TensorType::Q4_0, bytes, 2, 48), Error);  // cols % 32
  EXPECT_THROW(WeightMatrix::prepare(TensorType::Q4_0, bytes, 3, 64), Error);  // too few bytes
  EXPECT_THROW(WeightMatrix::prepare(TensorType::Q4_0, bytes, 1, 64), Error);  // too many bytes
  EXPECT_THROW(WeightMatrix::prepare(TensorType::IQ2_XXS, bytes, 1, 256), Error);
  EXPECT_NO_THROW(WeightMatrix::prepare(TensorType::Q4_0, bytes, 2, 64));
}

}  // namespace
}  // namespace folio::kernels
