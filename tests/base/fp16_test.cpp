// fp16/bf16 conversions checked against the CPU's own F16C instructions
// (an independent reference) over every half value and many floats.
#include "base/fp16.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace folio {
namespace {

TEST(Fp16, EveryHalfMatchesF16C) {
#if defined(__F16C__)
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float want = _cvtsh_ss(static_cast<unsigned short>(h));
    const float got = fp16_to_f32(static_cast<std::uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << h;
    } else {
      EXPECT_EQ(std::bit_cast<std::uint32_t>(want), std::bit_cast<std::uint32_t>(got)) << h;
    }
  }
#else
  GTEST_SKIP() << "no F16C on this build target";
#endif
}

TEST(Fp16, FloatToHalfRoundsLikeF16C) {
#if defined(__F16C__)
  std::mt19937 rng(42);
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < 2'000'000; ++i) {
    const std::uint32_t b = bits(rng);
    const float f = std::bit_cast<float>(b);
    // _cvtss_sh spelled out: clang's macro for it is a C99 compound literal (-Wpedantic).
    const std::uint16_t want = static_cast<std::uint16_t>(
        _mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT), 0));
    const std::uint16_t got = f32_to_fp16(f);
    if (std::isnan(f)) {
      EXPECT_EQ(got & 0x7c00u, 0x7c00u);
      EXPECT_NE(got & 0x3ffu, 0u);
    } else {
      ASSERT_EQ(want, got) << "bits " << b;
    }
  }
  // Round-trips of every finite half are exact.
  for (std::uint32_t h = 0; h < 65536; ++h) {
    if ((h & 0x7c00u) == 0x7c00u) continue;
    EXPECT_EQ(f32_to_fp16(fp16_to_f32(static_cast<std::uint16_t>(h))), h);
  }
#else
  GTEST_SKIP() << "no F16C on this build target";
#endif
}

TEST(Bf16, RoundTripAndRounding) {
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  // 1 + 2^-8 is a tie between 1.0 and 1.0078125: rounds to even (1.0).
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f808000u)), 0x3f80);
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::nanf("")))));
}

}  // namespace
}  // namespace folio
