// tests/engine/request_limits_test.cpp: the one admission check, with no
// model: every limit refused with vLLM's wording (or the flag named), the
// default max_tokens, the boundary cases that must pass.
#include "engine/request_limits.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"

namespace folio::engine {
namespace {

// 64-token context, 16 sequences, 4 blocks of 4 (16 positions), vocab 100.
const RequestLimits kLimits({64, 16, 4, 4, 100});

EngineRequest req(std::size_t prompt_len, std::optional<std::int32_t> max_tokens,
                  std::int32_t n = 1) {
  EngineRequest r;
  r.id = RequestId{1};
  r.prompt.assign(prompt_len, 7);
  r.params.max_tokens = max_tokens;
  r.n = n;
  return r;
}

void expect_error(EngineRequest r, const std::string& needle) {
  try {
    kLimits.admit(std::move(r), 1.0);
    ADD_FAILURE() << "admitted; expected an error containing: " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(RequestLimits, RefusesWhatCanNeverRunWithTheLimitNamed) {
  expect_error(req(64, 1),
               "This model's maximum context length is 64 tokens. However, your request has 64 "
               "input tokens. Please reduce the length of the input messages.");
  expect_error(req(10, 60),
               "'max_tokens' or 'max_completion_tokens' is too large: 60. This model's maximum "
               "context length is 64 tokens and your request has 10 input tokens (60 > 64 - 10).");
  expect_error(req(10, 8),
               "request needs 5 KV blocks (17 positions) but the KV cache holds only 4");
  expect_error(req(10, 8), "--kv-cache-memory");
  expect_error(req(0, 2), "The decoder prompt cannot be empty");
  expect_error(req(4, 2, 0), "n = 0 must be between 1 and --max-num-seqs (16)");
  expect_error(req(4, 2, 17), "--max-num-seqs");
  expect_error(req(4, 0), "max_tokens");
  auto bad_id = req(4, 2);
  bad_id.prompt[2] = 100;
  expect_error(bad_id, "Token id 100 is out of vocabulary");
  auto bad_param = req(4, 2);
  bad_param.params.top_p = 7;
  expect_error(bad_param, "top_p");
  auto min_over_max = req(4, 2);
  min_over_max.params.min_tokens = 3;
  expect_error(min_over_max, "min_tokens");
  // The default max_tokens (64 - 4 = 60) is checked too: min_tokens above it fails.
  auto min_over_default = req(4, std::nullopt);
  min_over_default.params.min_tokens = 61;
  expect_error(min_over_default, "min_tokens");
}

TEST(RequestLimits, FillsTheDefaultAndKeepsTheRest) {
  // No max_tokens: what the context leaves. 4 blocks of 4 hold 16 positions,
  // so a small prompt's default of 60 would not fit the pool: use a bigger one.
  const RequestLimits roomy({64, 16, 100, 4, 100});
  auto r = req(10, std::nullopt, 3);
  r.priority = -2;
  r.params.temperature = 0.5f;
  const AdmittedRequest a = roomy.admit(r, 42.0);
  EXPECT_EQ(a.request().params.max_tokens, 54);
  EXPECT_EQ(a.request().arrival_time, 42.0);  // 0 means "now"
  EXPECT_EQ(a.request().n, 3);
  EXPECT_EQ(a.request().priority, -2);
  EXPECT_EQ(a.request().params.temperature, 0.5f);
  r.arrival_time = 7.0;  // a consumer's arrival time is kept
  EXPECT_EQ(roomy.admit(r, 42.0).request().arrival_time, 7.0);
}

TEST(RequestLimits, BoundariesThatMustPass) {
  // 63 + 1 = 64 = max_model_len; positions 63 > 16: needs a roomy pool.
  const RequestLimits roomy({64, 16, 16, 4, 100});
  EXPECT_EQ(roomy.admit(req(63, 1), 0).request().params.max_tokens, 1);
  EXPECT_EQ(roomy.admit(req(63, std::nullopt), 0).request().params.max_tokens, 1);
  // Exactly 16 positions (10 + 7 - 1) fill the 4 blocks of 4.
  EXPECT_EQ(kLimits.admit(req(10, 7), 0).request().params.max_tokens, 7);
  EXPECT_EQ(kLimits.admit(req(4, 2, 16), 0).request().n, 16);
  EXPECT_THROW(RequestLimits({0, 1, 1, 1, 1}), Error);
}

}  // namespace
}  // namespace folio::engine
