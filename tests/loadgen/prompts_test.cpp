// Prompts: vLLM's random-dataset length bounds, id range, determinism; JSONL parsing.
#include "loadgen/prompts.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "base/error.h"

namespace folio::loadgen {
namespace {

TEST(Prompts, RandomLengthsAndIdsStayInRange) {
  RandomPromptConfig c;
  c.num_prompts = 500;
  c.input_len = 100;
  c.output_len = 20;
  c.range_ratio = 0.5;
  c.token_lo = 1000;
  c.token_hi = 1010;
  int min_in = 1 << 30, max_in = 0;
  for (const Prompt& p : random_prompts(c)) {
    ASSERT_TRUE(p.prompt.is_array());
    EXPECT_EQ(p.prompt_tokens, static_cast<std::int64_t>(p.prompt.size()));
    min_in = std::min<int>(min_in, static_cast<int>(p.prompt_tokens));
    max_in = std::max<int>(max_in, static_cast<int>(p.prompt_tokens));
    EXPECT_GE(p.max_tokens, 10);
    EXPECT_LE(p.max_tokens, 30);
    for (const auto& t : p.prompt) {
      EXPECT_GE(t.get<int>(), 1000);
      EXPECT_LT(t.get<int>(), 1010);
    }
  }
  EXPECT_EQ(min_in, 50);  // 500 draws from 101 values reach both ends
  EXPECT_EQ(max_in, 150);
}

TEST(Prompts, FixedLengthsWithoutRangeAndDeterministicBySeed) {
  RandomPromptConfig c;
  c.num_prompts = 5;
  c.input_len = 16;
  c.output_len = 8;
  const auto a = random_prompts(c);
  for (const Prompt& p : a) {
    EXPECT_EQ(p.prompt_tokens, 16);
    EXPECT_EQ(p.max_tokens, 8);
  }
  const auto b = random_prompts(c);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].prompt, b[i].prompt);
  c.seed = 1;
  EXPECT_NE(random_prompts(c)[0].prompt, a[0].prompt);
}

TEST(Prompts, RejectsBadConfig) {
  RandomPromptConfig c;
  c.num_prompts = 0;
  EXPECT_THROW(random_prompts(c), Error);
  c = {};
  c.range_ratio = 1.0;
  EXPECT_THROW(random_prompts(c), Error);
  c = {};
  c.input_len = 0;
  EXPECT_THROW(random_prompts(c), Error);
  c = {};
  c.token_hi = c.token_lo;
  EXPECT_THROW(random_prompts(c), Error);
  c = {};
  c.num_prompts = 100000;
  c.input_len = 100000;  // 1e10 prompt tokens: refused before allocating
  EXPECT_THROW(random_prompts(c), Error);
}

// ctest runs each test in its own process, in parallel: a file per test and process.
std::string write_temp(const std::string& text) {
  std::string path = ::testing::TempDir() + "loadgen_prompts_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                     std::to_string(::getpid()) + ".jsonl";
  std::ofstream(path) << text;
  return path;
}

TEST(Prompts, DatasetTextAndIds) {
  const auto path = write_temp(
      "{\"prompt\": \"hello\", \"max_tokens\": 4}\n\n{\"prompt\": [1, 2, 3]}\n{\"prompt\": "
      "\"x\"}\n");
  const auto all = dataset_prompts(path, 100, 16);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].prompt, "hello");
  EXPECT_EQ(all[0].max_tokens, 4);
  EXPECT_EQ(all[0].prompt_tokens, 0);
  EXPECT_EQ(all[1].prompt_tokens, 3);
  EXPECT_EQ(all[1].max_tokens, 16);
  EXPECT_EQ(dataset_prompts(path, 2, 16).size(), 2u);
  std::remove(path.c_str());
}

TEST(Prompts, DatasetErrorsNameTheLine) {
  for (const char* bad : {"{\"prompt\": 5}", "{\"max_tokens\": 3}", "[1]", "{\"prompt\": [-1]}",
                          "{\"prompt\": \"a\", \"max_tokens\": 0}", "not json"}) {
    const auto path = write_temp(std::string("{\"prompt\": \"ok\"}\n") + bad + "\n");
    try {
      dataset_prompts(path, 10, 16);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(dataset_prompts("/nonexistent/x.jsonl", 10, 16), Error);
  const auto blank = write_temp("\n\n");
  EXPECT_THROW(dataset_prompts(blank, 10, 16), Error);
  std::remove(blank.c_str());
}

}  // namespace
}  // namespace folio::loadgen
