// tests/kernels/kv_prefetch_test.cpp: KvPrefetch (a later attention call's
// rows requested piece by piece) counts exactly the rows of its range in the
// pages that hold rows, hands them out to the end and no further, and an
// attention call given one computes the same bits as without it, at every
// ISA level the host runs.
#include "kernels/kv_prefetch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "isa_levels.h"
#include "kernels/attention.h"
#include "kernels/cpu_features.h"
#include "kernels/kv_row.h"

namespace folio::kernels {
namespace {

TEST(KvPrefetch, CountsTheRowsOfItsRangeInPagesWithRows) {
  const std::size_t row = 384;
  std::vector<std::uint8_t> k(64 * row), v(64 * row);
  // Positions 0-15 released (no rows), 16-31, 32-41, 42-57.
  const std::vector<KvPage> pages = {{nullptr, nullptr, 16},
                                     {k.data(), v.data(), 16},
                                     {k.data() + 16 * row, v.data() + 16 * row, 10},
                                     {k.data() + 26 * row, v.data() + 26 * row, 16}};
  EXPECT_EQ(KvPrefetch().remaining(), 0u);
  EXPECT_EQ(KvPrefetch(pages, 0, 58, row).remaining(), 42 * row);
  EXPECT_EQ(KvPrefetch(pages, 20, 40, row).remaining(), 20 * row);  // 20-31, 32-39
  EXPECT_EQ(KvPrefetch(pages, 3, 12, row).remaining(), 0u);         // released rows only
  EXPECT_EQ(KvPrefetch(pages, 41, 42, row).remaining(), row);
  EXPECT_EQ(KvPrefetch(pages, 40, 40, row).remaining(), 0u);

  // Handed out in whole cache lines, in pieces of any size, to the end.
  for (std::size_t piece : {std::size_t{1}, std::size_t{100}, std::size_t{777}, 5 * row}) {
    KvPrefetch p(pages, 5, 50, row);
    std::size_t left = p.remaining(), steps = 0;
    ASSERT_EQ(left, 34 * row);
    while (p.remaining() > 0) {
      p.advance(piece);
      const std::size_t want = std::min(left, (piece + 63) / 64 * 64);
      ASSERT_EQ(p.remaining(), left - want) << piece;
      left -= want;
      ASSERT_LT(++steps, 100000u);
    }
    p.advance(piece);  // nothing left: nothing happens
    EXPECT_EQ(p.remaining(), 0u);
  }
}

// A decode (one query) and a prefill run (16), with and without a window
// and sinks, given the next call's rows (its own pages and another list):
// the same bits as without, and the next call's rows all requested.
TEST(KvPrefetch, AttentionComputesTheSameBitsWithIt) {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const std::size_t T = 150, hd = 64, n_kv = 3;
  for (KvDtype dt : {KvDtype::kF32, KvDtype::kF16, KvDtype::kI8, KvDtype::kI4}) {
    const std::size_t rb = n_kv * kv_head_bytes(dt, hd);
    std::vector<std::uint8_t> kb(T * rb), vb(T * rb);
    for (auto& b : kb) b = static_cast<std::uint8_t>(rng() % 64);  // finite in every dtype
    for (auto& b : vb) b = static_cast<std::uint8_t>(rng() % 64);
    std::vector<KvPage> pages, other;
    for (std::size_t t = 0; t < T; t += 16) {
      const std::size_t n = std::min<std::size_t>(16, T - t);
      pages.push_back({kb.data() + t * rb, vb.data() + t * rb, n});
      other.insert(other.begin(), {vb.data() + t * rb, kb.data() + t * rb, n});
    }
    for (const AttentionShape& s : {AttentionShape{9, 3, hd, 0.125f, dt, 0, 0.0f},
                                    AttentionShape{9, 3, hd, 0.125f, dt, 40, 0.0f, 4}}) {
      for (auto [pos0, nq] : {std::pair<std::size_t, std::size_t>{149, 1}, {100, 16}}) {
        const std::size_t qd = s.n_heads * hd;
        std::vector<float> q(nq * qd), plain(nq * qd), with(nq * qd);
        for (auto& x : q) x = nd(rng);
        for (Isa isa : testing::supported_isas()) {
          IsaOverride force(isa);
          attention_rows_heads(q.data(), nq, pos0, pages, s, plain.data(), nullptr, 0, n_kv);
          for (const auto* next_pages : {&pages, &other}) {
            KvPrefetch next(*next_pages, 7, T, rb);
            attention_rows_heads(q.data(), nq, pos0, pages, s, with.data(), nullptr, 0, n_kv,
                                 &next);
            ASSERT_EQ(0, std::memcmp(plain.data(), with.data(), plain.size() * sizeof(float)))
                << kv_dtype_name(dt) << " window " << s.window << " nq " << nq << " "
                << isa_name(isa);
            EXPECT_EQ(next.remaining(), 0u);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace folio::kernels
