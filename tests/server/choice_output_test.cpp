// tests/server/choice_output_test.cpp: detokenize + stop strings per choice,
// checked against Tokenizer::decode of the same ids.
#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "server/choice_output.h"

namespace folio::server {
namespace {

const tokenizer::Tokenizer& tok() {
  static const tokenizer::Tokenizer t = tokenizer::Tokenizer::from_gguf(
      gguf::GgufFile::open(std::string(FOLIO_SHARED_DIR) + "/tokenizer-vectors/ggml-vocab-gpt-2.gguf"));
  return t;
}

// Feeds ids one per delta; returns the concatenated text and the finish reason.
std::pair<std::string, std::string> run(const std::vector<TokenId>& ids, sampling::SamplingParams p,
                                        FinishReason last = FinishReason::kLength) {
  ChoiceOutput out(tok(), p, true, 0);
  std::string text, reason;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    SampleDelta d;
    d.tokens = {ids[i]};
    if (i + 1 == ids.size()) d.finish = last;
    auto cd = out.apply(d);
    text += cd.text;
    if (cd.finish_reason) reason = *cd.finish_reason;
  }
  return {text, reason};
}

TEST(ChoiceOutput, MatchesDecodeWithoutStops) {
  const std::string s = "Hello, wörld! ✓ 日本語 text";
  const auto ids = tok().encode(s);
  EXPECT_EQ(run(ids, {}), std::make_pair(s, std::string("length")));
}

TEST(ChoiceOutput, StopStringAcrossTokens) {
  const auto ids = tok().encode(" Hello world. The quick brown fox");
  sampling::SamplingParams p;
  p.stop = {"ld. Th"};
  EXPECT_EQ(run(ids, p), std::make_pair(std::string(" Hello wor"), std::string("stop")));
  p.include_stop_str_in_output = true;
  EXPECT_EQ(run(ids, p).first, " Hello world. Th");
}

TEST(ChoiceOutput, HeldBackPrefixIsReleasedAtEnd) {
  const auto ids = tok().encode(" Hello wor");
  sampling::SamplingParams p;
  p.stop = {"world!"};
  EXPECT_EQ(run(ids, p), std::make_pair(std::string(" Hello wor"), std::string("length")));
}

TEST(ChoiceOutput, TokenStopNotRendered) {
  const auto ids = tok().encode(" a b c");
  EXPECT_EQ(run(ids, {}, FinishReason::kStop), std::make_pair(std::string(" a b"), std::string("stop")));
}

}  // namespace
}  // namespace folio::server
