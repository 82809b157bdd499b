// Validation of SamplingParams: every out-of-range field is rejected with a
// message naming it; defaults and edge values pass.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "base/error.h"
#include "sampling/sampling_params.h"

namespace folio::sampling {
namespace {

constexpr std::int32_t kVocab = 100;

void expect_rejected(const std::function<void(SamplingParams&)>& edit, const std::string& field) {
  SamplingParams p;
  edit(p);
  try {
    p.validate(kVocab);
    FAIL() << "accepted bad " << field;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(SamplingParams, DefaultsAndEdgesAreValid) {
  SamplingParams p;
  EXPECT_NO_THROW(p.validate(kVocab));
  p.temperature = 0.0f;
  p.top_p = 1.0f;
  p.top_k = -1;
  p.min_p = 1.0f;
  p.presence_penalty = -2.0f;
  p.frequency_penalty = 2.0f;
  p.logit_bias = {{0, -100.0f}, {99, 100.0f}};
  p.max_tokens = 1;
  p.min_tokens = 1;
  p.logprobs = 20;
  p.stop = {"\n\n"};
  p.stop_token_ids = {0, 99};
  EXPECT_NO_THROW(p.validate(kVocab));
  EXPECT_TRUE(p.greedy());
}

TEST(SamplingParams, RejectsOutOfRange) {
  expect_rejected([](auto& p) { p.temperature = -0.1f; }, "temperature");
  expect_rejected([](auto& p) { p.temperature = NAN; }, "temperature");
  expect_rejected([](auto& p) { p.temperature = INFINITY; }, "temperature");
  expect_rejected([](auto& p) { p.top_p = 0.0f; }, "top_p");
  expect_rejected([](auto& p) { p.top_p = 1.01f; }, "top_p");
  expect_rejected([](auto& p) { p.top_k = -2; }, "top_k");
  expect_rejected([](auto& p) { p.min_p = -0.1f; }, "min_p");
  expect_rejected([](auto& p) { p.min_p = 1.5f; }, "min_p");
  expect_rejected([](auto& p) { p.presence_penalty = 2.5f; }, "presence_penalty");
  expect_rejected([](auto& p) { p.frequency_penalty = -3.0f; }, "frequency_penalty");
  expect_rejected([](auto& p) { p.repetition_penalty = 0.0f; }, "repetition_penalty");
  expect_rejected([](auto& p) { p.logit_bias = {{100, 1.0f}}; }, "logit_bias");
  expect_rejected([](auto& p) { p.logit_bias = {{-1, 1.0f}}; }, "logit_bias");
  expect_rejected([](auto& p) { p.logit_bias = {{3, 101.0f}}; }, "logit_bias");
  expect_rejected([](auto& p) { p.max_tokens = 0; }, "max_tokens");
  expect_rejected([](auto& p) { p.min_tokens = -1; }, "min_tokens");
  expect_rejected(
      [](auto& p) {
        p.max_tokens = 4;
        p.min_tokens = 5;
      },
      "min_tokens");
  expect_rejected([](auto& p) { p.stop = {""}; }, "stop");
  expect_rejected([](auto& p) { p.stop = std::vector<std::string>(17, "x"); }, "stop");
  expect_rejected([](auto& p) { p.stop = {std::string(2000, 'x')}; }, "stop");
  expect_rejected([](auto& p) { p.stop_token_ids = {kVocab}; }, "stop_token_ids");
  expect_rejected([](auto& p) { p.logprobs = 21; }, "logprobs");
  expect_rejected([](auto& p) { p.logprobs = -1; }, "logprobs");
}

}  // namespace
}  // namespace folio::sampling
