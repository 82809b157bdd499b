// Arithmetic of the logit steps, checked value by value.
#include "sampling/penalties.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace folio::sampling {
namespace {

TEST(Penalties, LogitBiasAddsToNamedTokensOnly) {
  std::vector<float> l = {1.0f, 2.0f, 3.0f};
  apply_logit_bias(l, {{0, 5.0f}, {2, -100.0f}});
  EXPECT_EQ(l, (std::vector<float>{6.0f, 2.0f, -97.0f}));
}

TEST(Penalties, RepetitionDividesPositiveMultipliesNegative) {
  std::vector<float> l = {2.0f, -2.0f, 3.0f, -1.0f, 0.0f};
  const std::vector<TokenId> prompt = {0, 1, 1, 4};  // 1 repeated: penalized once
  TokenHistory h(prompt);
  h.add_generated(1);  // in prompt too: still once
  h.add_generated(3);
  h.add_generated(3);
  apply_repetition_penalty(l, h, 2.0f);
  EXPECT_FLOAT_EQ(l[0], 1.0f);
  EXPECT_FLOAT_EQ(l[1], -4.0f);
  EXPECT_FLOAT_EQ(l[2], 3.0f);  // never seen
  EXPECT_FLOAT_EQ(l[3], -2.0f);
  EXPECT_FLOAT_EQ(l[4], 0.0f);
}

TEST(Penalties, RepetitionBelowOneFavoursSeenTokens) {
  std::vector<float> l = {2.0f, -2.0f};
  const std::vector<TokenId> prompt = {0, 1};
  apply_repetition_penalty(l, TokenHistory(prompt), 0.5f);
  EXPECT_FLOAT_EQ(l[0], 4.0f);
  EXPECT_FLOAT_EQ(l[1], -1.0f);
}

TEST(Penalties, PresenceFrequencyOpenAiDefinition) {
  std::vector<float> l = {1.0f, 1.0f, 1.0f, 1.0f};
  const std::vector<TokenId> prompt = {3};  // prompt tokens are not penalized
  TokenHistory h(prompt);
  h.add_generated(0);
  h.add_generated(1);
  h.add_generated(1);
  h.add_generated(1);
  apply_presence_frequency(l, h, 0.5f, 0.25f);
  EXPECT_FLOAT_EQ(l[0], 1.0f - 0.5f - 0.25f * 1);
  EXPECT_FLOAT_EQ(l[1], 1.0f - 0.5f - 0.25f * 3);
  EXPECT_FLOAT_EQ(l[2], 1.0f);
  EXPECT_FLOAT_EQ(l[3], 1.0f);
  EXPECT_EQ(h.num_generated(), 4);
}

TEST(Penalties, NegativePresenceEncouragesRepeats) {
  std::vector<float> l = {0.0f, 0.0f};
  TokenHistory h;
  h.add_generated(1);
  apply_presence_frequency(l, h, -1.0f, 0.0f);
  EXPECT_FLOAT_EQ(l[1], 1.0f);
}

TEST(Penalties, MaskSetsMinusInfinity) {
  std::vector<float> l = {1.0f, 2.0f, 3.0f};
  const std::vector<TokenId> ids = {1};
  mask_tokens(l, ids);
  EXPECT_TRUE(std::isinf(l[1]) && l[1] < 0);
  EXPECT_EQ(l[0], 1.0f);
}

}  // namespace
}  // namespace folio::sampling
