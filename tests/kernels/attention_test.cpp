// tests/kernels/attention_test.cpp: tiled online-softmax attention (every
// ISA level the host runs) against attention_ref (materialized scores, f64 softmax) over page
// splits, GQA ratios, head sizes, sliding windows, soft-capping and K/V dtypes.
//
// Tolerance: outputs are convex combinations of V rows, so errors scale with
// max|v|; f32 dots over <= 256 dims and the online rescaling stay within a
// few 1e-6 relative; 2e-5 * max|v| is well above that and far below any
// wrong-position or wrong-head error (which moves outputs by O(max|v|)).
#include "kernels/attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/fp16.h"
#include "isa_levels.h"
#include "kernels/cpu_features.h"
#include "kernels/kv_row.h"

namespace folio::kernels {
namespace {

struct Cache {
  std::size_t n_kv = 0, hd = 0;
  std::vector<float> k, v;  // [T x n_kv x hd]
  // The same rows stored as each cache dtype (kernels/kv_row.h).
  std::map<KvDtype, std::vector<std::uint8_t>> kb, vb;
};

Cache make_cache(std::size_t T, std::size_t n_kv, std::size_t hd, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  Cache c{n_kv, hd, {}, {}, {}, {}};
  const std::size_t row = n_kv * hd;
  c.k.resize(T * row);
  c.v.resize(T * row);
  for (auto& x : c.k) x = nd(rng);
  for (auto& x : c.v) x = nd(rng);
  for (KvDtype dt : {KvDtype::kF32, KvDtype::kF16, KvDtype::kI8, KvDtype::kI4}) {
    const std::size_t rb = n_kv * kv_head_bytes(dt, hd);
    c.kb[dt].resize(T * rb);
    c.vb[dt].resize(T * rb);
    for (std::size_t t = 0; t < T; ++t) {
      kv_store_row(dt, c.k.data() + t * row, n_kv, hd, c.kb[dt].data() + t * rb);
      kv_store_row(dt, c.v.data() + t * row, n_kv, hd, c.vb[dt].data() + t * rb);
    }
  }
  return c;
}

std::vector<KvPage> split(const Cache& c, const std::vector<std::size_t>& sizes, KvDtype dt) {
  const std::size_t rb = c.n_kv * kv_head_bytes(dt, c.hd);
  std::vector<KvPage> pages;
  std::size_t t = 0;
  for (std::size_t n : sizes) {
    pages.push_back({c.kb.at(dt).data() + t * rb, c.vb.at(dt).data() + t * rb, n});
    t += n;
  }
  return pages;
}

std::vector<std::vector<std::size_t>> splits(std::size_t T, std::mt19937& rng) {
  std::vector<std::vector<std::size_t>> out = {{T}, std::vector<std::size_t>(T, 1)};
  std::vector<std::size_t> sixteen, ragged;
  for (std::size_t t = 0; t < T; t += 16) sixteen.push_back(std::min<std::size_t>(16, T - t));
  std::uniform_int_distribution<std::size_t> len(1, 70);
  for (std::size_t t = 0; t < T;) {
    const std::size_t n = std::min(len(rng), T - t);
    ragged.push_back(n);
    t += n;
  }
  out.push_back(sixteen);
  out.push_back(ragged);
  return out;
}

void compare(const AttentionShape& s, std::size_t T, std::mt19937& rng, const std::string& what) {
  const Cache cache = make_cache(T, s.n_kv_heads, s.head_dim, rng);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> q(s.n_heads * s.head_dim);
  for (auto& x : q) x = nd(rng);
  std::vector<float> ref(q.size()), fast(q.size());
  for (const auto& sizes : splits(T, rng)) {
    const auto pages = split(cache, sizes, s.kv_dtype);
    for (std::size_t pos : {T - 1, T / 2, std::size_t{0}}) {
      attention_ref(q.data(), pos, pages, s, ref.data());
      for (Isa isa : testing::supported_isas()) {
        IsaOverride force(isa);
        attention(q.data(), pos, pages, s, fast.data());
        for (std::size_t i = 0; i < ref.size(); ++i) {
          ASSERT_NEAR(fast[i], ref[i], 2e-5 * 5.0)
              << what << " pos " << pos << " pages " << sizes.size() << " isa " << isa_name(isa)
              << " i " << i;
        }
      }
    }
  }
}

TEST(Attention, MatchesReferenceAcrossShapesAndPages) {
  std::mt19937 rng(5);
  for (std::size_t hd : {64, 128, 256, 40, 36}) {
    for (std::size_t ratio : {1, 3, 4, 5}) {  // 5: a block of three heads, then two
      for (KvDtype dt : {KvDtype::kF32, KvDtype::kF16, KvDtype::kI8, KvDtype::kI4}) {
        const std::size_t kv = 2;
        AttentionShape s{kv * ratio, kv, hd, 1.0f / std::sqrt(static_cast<float>(hd)), dt, 0, 0.0f};
        compare(s, 150, rng, "hd " + std::to_string(hd) + " ratio " + std::to_string(ratio));
      }
    }
  }
}

TEST(Attention, SlidingWindowAndSoftcap) {
  std::mt19937 rng(6);
  for (std::size_t window : {1, 7, 64, 1000}) {
    AttentionShape s{4, 2, 64, 0.5f, KvDtype::kF32, window, 0.0f};
    compare(s, 130, rng, "window " + std::to_string(window));
  }
  AttentionShape capped{8, 2, 128, 1.0f, KvDtype::kF16, 0, 30.0f};  // large logits, capped
  compare(capped, 100, rng, "softcap");
}

// attention_rows (a run of consecutive queries sharing K/V tiles) gives each
// row exactly the bytes a single-query call gives (which reads f32 / f16 rows
// in place at the SIMD levels), at every level, for runs that start
// anywhere, span several tiles and pages, with and without a sliding window
// (which falls back to one query at a time when the rows' windows differ),
// GQA and both KV types; it also matches the reference.
TEST(Attention, RowsAreBitIdenticalToSingleQueries) {
  std::mt19937 rng(9);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const std::size_t T = 200;
  for (KvDtype dt : {KvDtype::kF32, KvDtype::kF16, KvDtype::kI8, KvDtype::kI4}) {
    for (std::size_t window : {std::size_t{0}, std::size_t{50}, std::size_t{500}}) {
      for (std::size_t hd : {64, 36}) {
        AttentionShape s{6, 2, hd, 1.0f / std::sqrt(static_cast<float>(hd)), dt, window, 0.0f};
        const std::size_t qd = s.n_heads * hd;
        const Cache cache = make_cache(T, s.n_kv_heads, hd, rng);
        for (const auto& sizes : splits(T, rng)) {
          const auto pages = split(cache, sizes, dt);
          for (auto [pos0, nq] : {std::pair<std::size_t, std::size_t>{0, 16},
                                  {0, 1},
                                  {5, 16},
                                  {60, 100},
                                  {130, 70},
                                  {199, 1}}) {
            std::vector<float> q(nq * qd), rows(nq * qd), one(qd), ref(qd);
            for (auto& x : q) x = nd(rng);
            for (Isa isa : testing::supported_isas()) {
              if (isa < Isa::kAvx2 && active_isa() >= Isa::kAvx2) continue;  // one path there
              IsaOverride force(isa);
              attention_rows(q.data(), nq, pos0, pages, s, rows.data());
              for (std::size_t i = 0; i < nq; ++i) {
                attention(q.data() + i * qd, pos0 + i, pages, s, one.data());
                ASSERT_EQ(0, std::memcmp(one.data(), rows.data() + i * qd, qd * sizeof(float)))
                    << isa_name(isa) << " window " << window << " hd " << hd << " pos0 " << pos0
                    << " row " << i;
              }
            }
            const std::size_t last = nq - 1;
            attention_ref(q.data() + last * qd, pos0 + last, pages, s, ref.data());
            for (std::size_t k = 0; k < qd; ++k) {
              ASSERT_NEAR(ref[k], rows[last * qd + k], 1e-4) << "window " << window;
            }
          }
        }
      }
    }
  }
}

// n_kv head rows of N(0, 3) values for the round-trip tests: head 1 all
// zeros, one outlier at value 5 of head 0.
std::vector<float> test_heads(std::mt19937& rng, std::size_t n_kv, std::size_t hd, float outlier) {
  std::normal_distribution<float> nd(0.0f, 3.0f);
  std::vector<float> x(n_kv * hd);
  for (auto& v : x) v = nd(rng);
  std::fill(x.begin() + static_cast<std::ptrdiff_t>(hd),
            x.begin() + static_cast<std::ptrdiff_t>(2 * hd), 0.0f);
  x[5] = outlier;
  return x;
}

// int8 rows: every element within half a step of its group's scale (plus
// the scale's own fp16 rounding), |q| <= 127, zero rows stay zero, and the
// scale is max|x| / 127 of the group (head_dim 36: a partial last group).
TEST(KvRow, Int8RoundTripIsWithinHalfAStep) {
  std::mt19937 rng(12);
  for (std::size_t hd : {64, 36, 256}) {
    const std::size_t n_kv = 3;
    std::vector<float> x = test_heads(rng, n_kv, hd, 1e4f), back(hd);
    const std::size_t hb = kv_head_bytes(KvDtype::kI8, hd);
    EXPECT_EQ(hb, hd + 2 * ((hd + 31) / 32));
    std::vector<std::uint8_t> row(n_kv * hb);
    kv_store_row(KvDtype::kI8, x.data(), n_kv, hd, row.data());
    for (std::size_t h = 0; h < n_kv; ++h) {
      kv_load_head(KvDtype::kI8, row.data() + h * hb, hd, back.data());
      for (std::size_t i = 0; i < hd; ++i) {
        const std::size_t g0 = i / 32 * 32, g1 = std::min(hd, g0 + 32);
        float amax = 0.0f;
        for (std::size_t j = g0; j < g1; ++j) amax = std::max(amax, std::fabs(x[h * hd + j]));
        const float step = amax / 127.0f;
        ASSERT_LE(std::fabs(back[i] - x[h * hd + i]), 0.5f * step * 1.002f + 1e-30f)
            << "hd " << hd << " head " << h << " i " << i;
        if (h == 1) {
          ASSERT_EQ(back[i], 0.0f);
        }
      }
    }
  }
}

// int4 rows: every element within half a step of its group's scale (the
// value of largest magnitude m is exactly -8 steps, step = |m| / 8, up to
// the scale's fp16 rounding; values of the other sign beyond 7.5 steps clamp
// at 7), zero rows stay zero, head_dim 36 has a short
// last group of 4, and the nibbles are laid out as kv_row.h says.
TEST(KvRow, Int4RoundTripIsWithinHalfAStep) {
  std::mt19937 rng(13);
  std::normal_distribution<float> nd(0.0f, 3.0f);
  for (std::size_t hd : {64, 36, 256}) {
    const std::size_t n_kv = 3;
    std::vector<float> x = test_heads(rng, n_kv, hd, -1e4f), back(hd);
    const std::size_t hb = kv_head_bytes(KvDtype::kI4, hd);
    std::vector<std::uint8_t> row(n_kv * hb);
    kv_store_row(KvDtype::kI4, x.data(), n_kv, hd, row.data());
    // Power-of-two heads are stored rotated: the bounds hold for H x, and
    // reading rotates back, so H back is what was rounded.
    const bool rotated = kv_i4_rotated(hd);
    EXPECT_EQ(rotated, hd != 36);
    if (rotated)
      for (std::size_t h = 0; h < n_kv; ++h) kv_hadamard(x.data() + h * hd, hd);
    for (std::size_t h = 0; h < n_kv; ++h) {
      kv_load_head(KvDtype::kI4, row.data() + h * hb, hd, back.data());
      if (rotated) kv_hadamard(back.data(), hd);
      for (std::size_t i = 0; i < hd; ++i) {
        const std::size_t g0 = i / 32 * 32, g1 = std::min(hd, g0 + 32);
        float amax = 0.0f;
        for (std::size_t j = g0; j < g1; ++j) amax = std::max(amax, std::fabs(x[h * hd + j]));
        const float step = amax / 8.0f;
        // q stops at 7 on the side opposite m: a value beyond 7.5 steps there
        // is off by at most |x| - 7 steps (< 1 step); the fp16 scale adds up to
        // 8 x 2^-11 of a step.
        const float bound = std::max(0.5f * step, std::fabs(x[h * hd + i]) - 7.0f * step);
        ASSERT_LE(std::fabs(back[i] - x[h * hd + i]), bound + step * 0.005f + 1e-6f)
            << "hd " << hd << " head " << h << " i " << i;
        if (h == 1) {
          ASSERT_EQ(back[i], 0.0f);
        }
      }
    }
  }
  // The rotation is orthogonal and its own inverse.
  std::vector<float> r(64), r0;
  for (auto& v : r) v = nd(rng);
  r0 = r;
  kv_hadamard(r.data(), 64);
  float n0 = 0.0f, n1 = 0.0f;
  for (std::size_t i = 0; i < 64; ++i) n0 += r0[i] * r0[i], n1 += r[i] * r[i];
  EXPECT_NEAR(n0, n1, 1e-3f * n0);
  kv_hadamard(r.data(), 64);
  for (std::size_t i = 0; i < 64; ++i) ASSERT_NEAR(r[i], r0[i], 1e-5f);
  // Layout (an unrotated head of 36): value j of a group in byte j's low
  // nibble, j + 16 in its high one.
  std::vector<float> x(36, 0.0f);
  x[0] = -8.0f;  // scale 1
  x[1] = 3.0f;
  x[17] = -2.0f;
  std::vector<std::uint8_t> row(kv_head_bytes(KvDtype::kI4, 36));
  kv_store_row(KvDtype::kI4, x.data(), 1, 36, row.data());
  EXPECT_EQ(row[0], 0x80);           // value 0: -8 + 8 = 0 (low); value 16: 0 + 8 (high)
  EXPECT_EQ(row[1], (6 << 4) | 11);  // value 1: 3 + 8; value 17: -2 + 8
}

// f16 rows: every level stores each value as f32_to_fp16 does (round to
// nearest even, fp16 subnormals, overflow to inf), including the cases that
// pin the rounding, NaN (whose chunk takes the scalar path) and a short tail.
TEST(KvRow, F16RowsAreTheScalarConversionAtEveryLevel) {
  std::mt19937 rng(21);
  std::vector<float> x = {1.0f,  -2.5f,          65504.0f,        65519.99f, 65520.0f,
                          -1e6f, 0x1p-24f,       0x1p-25f,        0x3p-25f,  0x1.4p-23f,
                          0.0f,  -0.0f,          1e-30f,          INFINITY,  -INFINITY,
                          NAN,   1.00048828125f, 1.000732421875f, 6.1e-5f,   -3.0e-6f};
  std::uniform_real_distribution<float> exponent(-30.0f, 17.0f);
  std::bernoulli_distribution negative(0.5);
  while (x.size() < 20 + 64 * 7 + 5) {  // several magnitudes, and a tail of 5 after whole chunks
    const float v = std::exp2(exponent(rng)) * (1.0f + static_cast<float>(x.size() % 97) / 97.0f);
    x.push_back(negative(rng) ? -v : v);
  }
  for (Isa isa : testing::supported_isas()) {
    IsaOverride force(isa);
    std::vector<std::uint8_t> row(2 * x.size());
    kv_store_row(KvDtype::kF16, x.data(), 1, x.size(), row.data());
    for (std::size_t i = 0; i < x.size(); ++i) {
      std::uint16_t h;
      std::memcpy(&h, row.data() + 2 * i, 2);
      ASSERT_EQ(h, f32_to_fp16(x[i])) << isa_name(isa) << " value " << x[i] << " at " << i;
    }
    std::uint16_t h[10];
    std::memcpy(h, row.data(), sizeof h);
    EXPECT_EQ(h[0], 0x3c00);  // 1
    EXPECT_EQ(h[2], 0x7bff);  // the largest finite fp16
    EXPECT_EQ(h[3], 0x7bff);  // below the midpoint to inf
    EXPECT_EQ(h[4], 0x7c00);  // the midpoint rounds to even: inf
    EXPECT_EQ(h[6], 0x0001);  // the smallest subnormal
    EXPECT_EQ(h[7], 0x0000);  // half of it: a tie, to even (0)
    EXPECT_EQ(h[8], 0x0002);  // 1.5 of it: a tie, to even (2)
    EXPECT_EQ(h[9], 0x0002);  // 2.5 of it: to even (2)
  }
}

// The one row-size formula (every KV size folio reports is a sum of it) and
// --kv-cache-dtype's spellings.
TEST(KvRow, HeadBytesAndDtypeNames) {
  EXPECT_EQ(kv_head_bytes(KvDtype::kF32, 64), 256u);
  EXPECT_EQ(kv_head_bytes(KvDtype::kF16, 64), 128u);
  EXPECT_EQ(kv_head_bytes(KvDtype::kI8, 64), 64u + 2 * 2);  // two fp16 scales
  EXPECT_EQ(kv_head_bytes(KvDtype::kI8, 80), 80u + 2 * 3);  // a partial last group
  EXPECT_EQ(parse_kv_dtype("auto"), KvDtype::kF16);
  EXPECT_EQ(parse_kv_dtype("float16"), KvDtype::kF16);
  EXPECT_EQ(parse_kv_dtype("float32"), KvDtype::kF32);
  EXPECT_EQ(parse_kv_dtype("int8"), KvDtype::kI8);
  EXPECT_EQ(parse_kv_dtype("int4"), KvDtype::kI4);
  EXPECT_EQ(kv_head_bytes(KvDtype::kI4, 64), 32u + 2 * 2);    // 4 bits + two fp16 scales
  EXPECT_EQ(kv_head_bytes(KvDtype::kI4, 256), 128u + 2 * 8);  // Gemma 3's heads: 0.5625 B/value
  EXPECT_EQ(kv_head_bytes(KvDtype::kI4, 36), 18u + 2 * 2);    // a partial last group
  for (KvDtype d : {KvDtype::kF32, KvDtype::kF16, KvDtype::kI8, KvDtype::kI4})
    EXPECT_EQ(parse_kv_dtype(kv_dtype_name(d)), d);
  for (const char* bad : {"int2", "fp8", "", "F16"})
    EXPECT_THROW(parse_kv_dtype(bad), Error) << bad;
}

// A window of 1 attends only to the current position: output = V[pos] exactly.
TEST(Attention, WindowOfOneReturnsCurrentValue) {
  std::mt19937 rng(8);
  const Cache c = make_cache(10, 1, 64, rng);
  const auto pages = split(c, {3, 7}, KvDtype::kF32);
  std::vector<float> q(64, 0.1f), out(64);
  AttentionShape s{1, 1, 64, 0.125f, KvDtype::kF32, 1, 0.0f};
  attention(q.data(), 5, pages, s, out.data());
  for (std::size_t i = 0; i < 64; ++i) EXPECT_FLOAT_EQ(out[i], c.v[5 * 64 + i]);
}

}  // namespace
}  // namespace folio::kernels

namespace folio::kernels {
namespace {

// Sink + window attention (base/attention_window.h): a query reads the first
// `sinks` positions against its own q_sink row and the window against q;
// pages wholly between them are never touched (they are null here, as the
// blocks a paged window released are), and a run of queries gives each row
// the bytes of a single-query call.
TEST(Attention, SinksPlusWindow) {
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const std::size_t T = 180, page = 16;
  for (KvDtype dt : {KvDtype::kF32, KvDtype::kF16, KvDtype::kI8, KvDtype::kI4}) {
    for (auto [window, sinks] :
         {std::pair<std::size_t, std::size_t>{40, 4}, {40, 16}, {17, 1}, {64, 20}}) {
      AttentionShape s{6, 2, 64, 0.125f, dt, window, 0.0f, sinks};
      const std::size_t qd = s.n_heads * s.head_dim;
      const Cache cache = make_cache(T, s.n_kv_heads, s.head_dim, rng);
      for (auto [pos0, nq] :
           {std::pair<std::size_t, std::size_t>{179, 1}, {100, 1}, {30, 16}, {150, 16}, {41, 5}}) {
        // Pages of 16; those wholly in the gap that the last query's
        // window left are null.
        const std::size_t first = pos0 + 1 > window ? pos0 + 1 - window : 0;
        std::vector<KvPage> pages = split(cache, std::vector<std::size_t>(T / page + 1, page), dt);
        pages.back().n_tokens = T - (T / page) * page;
        for (std::size_t p = 0; p < pages.size(); ++p) {
          if (p * page >= sinks && (p + 1) * page <= first) pages[p].k = pages[p].v = nullptr;
        }
        std::vector<float> q(nq * qd), qs(nq * qd), rows(nq * qd), one(qd), ref(qd);
        for (auto& x : q) x = nd(rng);
        for (auto& x : qs) x = nd(rng);
        for (Isa isa : testing::supported_isas()) {
          IsaOverride force(isa);
          attention_rows(q.data(), nq, pos0, pages, s, rows.data(), qs.data());
          for (std::size_t i = 0; i < nq; ++i) {
            attention(q.data() + i * qd, pos0 + i, pages, s, one.data(), qs.data() + i * qd);
            ASSERT_EQ(0, std::memcmp(one.data(), rows.data() + i * qd, qd * sizeof(float)))
                << "window " << window << " sinks " << sinks << " pos0 " << pos0 << " row " << i;
            attention_ref(q.data() + i * qd, pos0 + i, pages, s, ref.data(), qs.data() + i * qd);
            for (std::size_t k = 0; k < qd; ++k) {
              ASSERT_NEAR(ref[k], one[k], 1e-4)
                  << kv_dtype_name(dt) << " window " << window << " sinks " << sinks << " pos "
                  << pos0 + i << " isa " << isa_name(isa);
            }
          }
        }
      }
    }
  }
}

// The sinks change the result exactly when the window has left them, and
// q_sink is what they are scored against: a reference that reads the sink
// positions with q_sink and the window with q, written out here.
TEST(Attention, SinksAreScoredAgainstTheirOwnQuery) {
  std::mt19937 rng(12);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const std::size_t T = 60, hd = 8;
  const Cache cache = make_cache(T, 1, hd, rng);
  const std::vector<KvPage> pages = split(cache, {T}, KvDtype::kF32);
  const AttentionShape s{1, 1, hd, 0.5f, KvDtype::kF32, 10, 0.0f, 3};
  std::vector<float> q(hd), qs(hd), out(hd), plain(hd);
  for (auto& x : q) x = nd(rng);
  for (auto& x : qs) x = nd(rng);
  const std::size_t pos = 50;  // reads 0..2 (q_sink) and 41..50 (q)
  attention(q.data(), pos, pages, s, out.data(), qs.data());
  std::vector<double> w;
  std::vector<std::size_t> at;
  for (std::size_t t = 0; t <= pos; ++t) {
    if (t >= 3 && t < 41) continue;
    const float* qq = t < 3 ? qs.data() : q.data();
    double d = 0;
    for (std::size_t i = 0; i < hd; ++i) d += static_cast<double>(qq[i]) * cache.k[t * hd + i];
    w.push_back(d * 0.5);
    at.push_back(t);
  }
  const double mx = *std::max_element(w.begin(), w.end());
  double sum = 0;
  for (double& x : w) sum += (x = std::exp(x - mx));
  for (std::size_t i = 0; i < hd; ++i) {
    double acc = 0;
    for (std::size_t j = 0; j < w.size(); ++j) acc += w[j] * cache.v[at[j] * hd + i];
    EXPECT_NEAR(out[i], acc / sum, 1e-5) << i;
  }
  // Without sinks the result is the window alone, and differs.
  const AttentionShape no_sinks{1, 1, hd, 0.5f, KvDtype::kF32, 10, 0.0f, 0};
  attention(q.data(), pos, pages, no_sinks, plain.data());
  double diff = 0;
  for (std::size_t i = 0; i < hd; ++i) diff += std::abs(plain[i] - out[i]);
  EXPECT_GT(diff, 1e-3);
}

}  // namespace
}  // namespace folio::kernels

namespace folio::kernels {
namespace {

// attention_rows_heads over disjoint KV head ranges writes exactly those
// heads' parts of the output, bit-identical to attention_rows, and leaves the
// other heads' parts alone (so the ranges may run in parallel).
TEST(Attention, HeadRangesAreBitIdenticalAndDisjoint) {
  std::mt19937 rng(13);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const std::size_t T = 120, hd = 64;
  for (KvDtype dt : {KvDtype::kF16, KvDtype::kI4}) {
    AttentionShape s{9, 3, hd, 0.125f, dt, 50, 0.0f, 4};
    const std::size_t qd = s.n_heads * hd;
    const Cache cache = make_cache(T, s.n_kv_heads, hd, rng);
    const auto pages = split(cache, {40, 40, 40}, dt);
    for (auto [pos0, nq] : {std::pair<std::size_t, std::size_t>{119, 1}, {90, 16}}) {
      std::vector<float> q(nq * qd), qs(nq * qd), whole(nq * qd), parts(nq * qd, 7.0f);
      for (auto& x : q) x = nd(rng);
      for (auto& x : qs) x = nd(rng);
      attention_rows(q.data(), nq, pos0, pages, s, whole.data(), qs.data());
      attention_rows_heads(q.data(), nq, pos0, pages, s, parts.data(), qs.data(), 1, 2);
      for (std::size_t i = 0; i < nq; ++i)
        for (std::size_t k = 0; k < qd; ++k) {
          const bool mine = k >= 3 * hd && k < 6 * hd;  // query heads 3..5 of KV head 1
          ASSERT_EQ(parts[i * qd + k], mine ? whole[i * qd + k] : 7.0f) << i << " " << k;
        }
      attention_rows_heads(q.data(), nq, pos0, pages, s, parts.data(), qs.data(), 0, 1);
      attention_rows_heads(q.data(), nq, pos0, pages, s, parts.data(), qs.data(), 2, 3);
      ASSERT_EQ(0, std::memcmp(parts.data(), whole.data(), whole.size() * sizeof(float)));
    }
  }
}

// The SIMD levels score and accumulate the same per-element arithmetic
// however many query heads they block together (kernels/cpu/attention_prims.h),
// so every level from AVX2 up gives the same bytes: group sizes 1 to 7 cover
// blocks of three, two and one head, head sizes with and without a tail of
// eight, and tiles with key counts that are and are not multiples of eight.
// One query (nq 1) reads f32 / f16 rows in place at the AVX-512 level, page
// part by page part, against the AVX2 level's converted tiles: one page,
// pages of 16 and ragged pages (parts of 1 to 70 keys).
TEST(Attention, SimdLevelsAreBitIdentical) {
  std::vector<Isa> levels;
  for (Isa isa : testing::supported_isas())
    if (isa >= Isa::kAvx2) levels.push_back(isa);
  if (levels.size() < 2) GTEST_SKIP() << "this host runs fewer than two SIMD levels";
  std::mt19937 rng(17);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const std::size_t T = 150;
  for (std::size_t group = 1; group <= 7; ++group) {
    for (std::size_t hd : {64, 36, 256}) {
      for (KvDtype dt : {KvDtype::kF16, KvDtype::kI8, KvDtype::kF32}) {
        for (float softcap : {0.0f, 20.0f}) {
          AttentionShape s{2 * group, 2, hd, 0.125f, dt, 0, softcap};
          const std::size_t qd = s.n_heads * hd;
          const Cache cache = make_cache(T, s.n_kv_heads, hd, rng);
          const auto all = splits(T, rng);
          const auto& sizes = all[(group + hd) % all.size()];  // one page, ones, 16s, ragged
          const auto pages = split(cache, sizes, dt);
          for (auto [pos0, nq] :
               {std::pair<std::size_t, std::size_t>{0, 75}, {149, 1}, {100, 1}, {3, 1}}) {
            std::vector<float> q(nq * qd), base(nq * qd), other(nq * qd);
            for (auto& x : q) x = nd(rng);
            {
              IsaOverride force(levels[0]);
              attention_rows(q.data(), nq, pos0, pages, s, base.data());
            }
            for (std::size_t l = 1; l < levels.size(); ++l) {
              IsaOverride force(levels[l]);
              attention_rows(q.data(), nq, pos0, pages, s, other.data());
              ASSERT_EQ(0, std::memcmp(base.data(), other.data(), base.size() * sizeof(float)))
                  << isa_name(levels[l]) << " vs " << isa_name(levels[0]) << ": group " << group
                  << " hd " << hd << " dtype " << kv_dtype_name(dt) << " pages " << pages.size()
                  << " softcap " << softcap << " pos0 " << pos0;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace folio::kernels
