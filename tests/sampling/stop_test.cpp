// Token stop conditions and the streaming stop-string matcher, including a
// property test: for every way of splitting a text into deltas, the emitted
// text is the same and never contains part of the stop string.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "sampling/stop_conditions.h"
#include "sampling/stop_matcher.h"

namespace folio::sampling {
namespace {

const std::vector<TokenId> kEos = {2};

TEST(StopConditions, EosStopTokenMaxTokensAndMinTokens) {
  SamplingParams p;
  p.max_tokens = 5;
  p.stop_token_ids = {7};
  EXPECT_EQ(check_token_stop(p, kEos, 2, 1), FinishReason::kStop);  // EOS
  EXPECT_EQ(check_token_stop(p, kEos, 7, 1), FinishReason::kStop);  // stop token
  EXPECT_EQ(check_token_stop(p, kEos, 3, 4), FinishReason::kNone);
  EXPECT_EQ(check_token_stop(p, kEos, 3, 5), FinishReason::kLength);
  EXPECT_EQ(check_token_stop(p, kEos, 7, 5), FinishReason::kStop);  // a stop token beats length
  EXPECT_STREQ(finish_reason_name(FinishReason::kLength), "length");
  EXPECT_STREQ(finish_reason_name(FinishReason::kStop), "stop");
  p.ignore_eos = true;
  EXPECT_EQ(check_token_stop(p, kEos, 2, 1), FinishReason::kNone);
  EXPECT_EQ(check_token_stop(p, kEos, 7, 1), FinishReason::kStop);  // ignore_eos keeps stop tokens
  p.ignore_eos = false;
  p.min_tokens = 3;
  EXPECT_EQ(check_token_stop(p, kEos, 2, 2), FinishReason::kNone);
  EXPECT_EQ(check_token_stop(p, kEos, 2, 3), FinishReason::kStop);
}

std::string feed_all(StopMatcher& m, const std::vector<std::string>& deltas, bool* stopped) {
  std::string out;
  for (const auto& d : deltas) {
    auto r = m.feed(d);
    out += r.text;
    if (r.stop) {
      *stopped = true;
      return out;
    }
  }
  *stopped = false;
  return out + m.flush();
}

TEST(StopMatcher, MatchAcrossTokenBoundaries) {
  StopMatcher m({"<|im_end|>"}, false);
  auto r = m.feed("Hello <|im");
  EXPECT_EQ(r.text, "Hello ");  // "<|im" is held back
  EXPECT_EQ(m.held_bytes(), 4u);
  r = m.feed("_end|> trailing");
  EXPECT_EQ(r.text, "");
  ASSERT_TRUE(r.stop.has_value());
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.feed("more").text, "");
}

TEST(StopMatcher, FalseAlarmIsReleased) {
  StopMatcher m({"\n\n"}, false);
  EXPECT_EQ(m.feed("a\n").text, "a");
  EXPECT_EQ(m.feed("b").text, "\nb");
  EXPECT_EQ(m.feed("c\n").text, "c");
  EXPECT_EQ(m.flush(), "\n");
}

TEST(StopMatcher, EarliestOfSeveralAndIncludeOption) {
  StopMatcher m({"world", "lo w"}, true);
  auto r = m.feed("hello world");
  EXPECT_EQ(r.text, "hello w");
  EXPECT_EQ(r.stop, 1u);
}

TEST(StopMatcher, EverySplitGivesSameOutput) {
  const std::vector<std::string> stops = {"STOP", "ab\xC3\xA9"};
  const std::string text = "xx a\xC3\xA9 aSTO abSTa STOPtail";
  std::mt19937 rng(9);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::string> deltas;
    std::size_t i = 0;
    while (i < text.size()) {
      std::size_t n = 1 + rng() % 4;
      // Deltas are whole UTF-8 characters, as the detokenizer sends them.
      while (i + n < text.size() && (static_cast<unsigned char>(text[i + n]) & 0xC0) == 0x80) ++n;
      deltas.push_back(text.substr(i, n));
      i += n;
    }
    StopMatcher m(stops, false);
    bool stopped = false;
    std::string out;
    for (const auto& d : deltas) {
      auto r = m.feed(d);
      // Emitted-so-far must always be a prefix of the final answer.
      out += r.text;
      ASSERT_EQ(std::string("xx a\xC3\xA9 aSTO abSTa ").substr(0, out.size()), out);
      if (r.stop) {
        stopped = true;
        break;
      }
    }
    EXPECT_TRUE(stopped);
    EXPECT_EQ(out, "xx a\xC3\xA9 aSTO abSTa ");
  }
}

TEST(StopMatcher, NoStopStringsPassesThrough) {
  StopMatcher m({}, false);
  bool stopped = true;
  EXPECT_EQ(feed_all(m, {"a", "b"}, &stopped), "ab");
  EXPECT_FALSE(stopped);
}

}  // namespace
}  // namespace folio::sampling
