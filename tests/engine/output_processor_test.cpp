// tests/engine/output_processor_test.cpp: the consumer side of the protocol
// (detokenization, stop strings, logprob text, n samples, the final item),
// checked against Tokenizer::decode / token_to_piece of the same ids on a
// vocab-only GGUF (no model).
#include "engine/output_processor.h"

#include <gtest/gtest.h>

#include "gguf/gguf_file.h"

namespace folio::engine {
namespace {

const tokenizer::Tokenizer& tok() {
  static const tokenizer::Tokenizer t = tokenizer::Tokenizer::from_gguf(gguf::GgufFile::open(
      std::string(FOLIO_SHARED_DIR) + "/tokenizer-vectors/ggml-vocab-gpt-2.gguf"));
  return t;
}

struct Result {
  std::string text;
  FinishReason finish = FinishReason::kNone;
  std::vector<TokenId> counted;
  std::string stop_reason;
  bool hit = false;
};

// Feeds ids one per delta to sample 0 of a one-sample processor.
Result run(const std::vector<TokenId>& ids, const sampling::SamplingParams& p,
           FinishReason last = FinishReason::kLength, OutputOptions opt = {}) {
  OutputProcessor out(tok(), p, 1, opt);
  Result r;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    RequestOutput o;
    SampleDelta d;
    d.token_ids = {ids[i]};
    if (i + 1 == ids.size()) d.finish = last;
    o.samples.push_back(d);
    o.finished = i + 1 == ids.size();
    for (const TextDelta& t : out.apply(o)) {
      r.text += t.text;
      r.counted.insert(r.counted.end(), t.token_ids.begin(), t.token_ids.end());
      if (t.finish != FinishReason::kNone) r.finish = t.finish;
      if (t.stop_string_hit) {
        r.hit = true;
        r.stop_reason = t.stop_reason;
      }
    }
  }
  EXPECT_TRUE(out.finished());
  return r;
}

// A token the detokenizer cannot show (an id beyond the vocabulary: an
// engine bug) ends its sample with kError and the reason; the text before it
// stands, nothing after it is shown, and the other sample goes on.
TEST(OutputProcessor, UnknownTokenEndsItsSampleWithAnError) {
  const auto ids = tok().encode("Hello world");
  OutputProcessor out(tok(), {}, 2);
  RequestOutput o;
  SampleDelta bad, good;
  bad.index = 0;
  bad.token_ids = {ids[0], 999999, ids[1]};
  good.index = 1;
  good.token_ids = ids;
  o.samples = {bad, good};
  const auto deltas = out.apply(o);
  ASSERT_EQ(deltas.size(), 2u);
  const std::vector<TokenId> first = {ids[0]};
  EXPECT_EQ(deltas[0].text, tok().decode(first, {.render_special = false}));
  EXPECT_EQ(deltas[0].finish, FinishReason::kError);
  EXPECT_EQ(out.sample(0).finish_reason(), FinishReason::kError);
  EXPECT_NE(out.sample(0).error().find("999999"), std::string::npos);
  EXPECT_EQ(out.error(), out.sample(0).error());
  EXPECT_EQ(deltas[1].text, "Hello world");
  EXPECT_FALSE(out.sample(1).finished());
  RequestOutput more;
  SampleDelta later;
  later.index = 0;
  later.token_ids = {ids[1]};
  more.samples = {later};
  EXPECT_TRUE(out.apply(more).empty());  // the failed sample shows nothing more
}

TEST(OutputProcessor, MatchesDecodeWithoutStops) {
  const std::string s = "Hello, wörld! ✓ 日本語 text";
  const auto ids = tok().encode(s);
  const Result r = run(ids, {});
  EXPECT_EQ(r.text, s);
  EXPECT_EQ(r.text, tok().decode(ids, {.render_special = false}));
  EXPECT_EQ(r.finish, FinishReason::kLength);
  EXPECT_EQ(r.counted, ids);
  EXPECT_FALSE(r.hit);
}

TEST(OutputProcessor, StopStringAcrossTokensEndsTheSampleThere) {
  const auto ids = tok().encode(" Hello world. The quick brown fox");
  sampling::SamplingParams p;
  p.stop = {"", "zzz", "ld. Th"};  // the empty one is ignored
  const Result r = run(ids, p);
  EXPECT_EQ(r.text, " Hello wor");
  EXPECT_EQ(r.finish, FinishReason::kStop);
  EXPECT_TRUE(r.hit);
  EXPECT_EQ(r.stop_reason, "ld. Th");
  // Counted up to the token that completed the stop string, none after it.
  const auto upto = tok().encode(" Hello world. The");
  EXPECT_EQ(r.counted, upto);
  p.include_stop_str_in_output = true;
  EXPECT_EQ(run(ids, p).text, " Hello world. Th");
}

TEST(OutputProcessor, HeldBackPrefixIsReleasedAtEnd) {
  const auto ids = tok().encode(" Hello wor");
  sampling::SamplingParams p;
  p.stop = {"world!"};
  const Result r = run(ids, p);
  EXPECT_EQ(r.text, " Hello wor");
  EXPECT_EQ(r.finish, FinishReason::kLength);
}

TEST(OutputProcessor, TokenStopIsCountedNotRenderedUnlessIncluded) {
  const auto ids = tok().encode(" a b c");
  Result r = run(ids, {}, FinishReason::kStop);
  EXPECT_EQ(r.text, " a b");
  EXPECT_EQ(r.finish, FinishReason::kStop);
  EXPECT_EQ(r.counted, ids);  // the stop token counts (usage), as vLLM
  EXPECT_FALSE(r.hit);        // the engine stopped it itself
  sampling::SamplingParams p;
  p.include_stop_str_in_output = true;
  EXPECT_EQ(run(ids, p, FinishReason::kStop).text, " a b c");
}

TEST(OutputProcessor, SpecialTokensFollowSkipSpecialTokens) {
  const auto eot = tok().vocab().find("<|endoftext|>");
  ASSERT_TRUE(eot.has_value());
  std::vector<TokenId> ids = tok().encode(" x");
  ids.push_back(*eot);
  ids.push_back(tok().encode(" y")[0]);
  EXPECT_EQ(run(ids, {}).text, " x y");
  EXPECT_EQ(run(ids, {}, FinishReason::kLength, {.skip_special_tokens = false}).text,
            " x<|endoftext|> y");
}

TEST(OutputProcessor, LogprobTextAndOffsets) {
  const auto ids = tok().encode(" one two");
  ASSERT_EQ(ids.size(), 2u);
  OutputProcessor out(tok(), {}, 1, {.text_offset_base = 5});
  RequestOutput o;
  SampleDelta d;
  d.token_ids = ids;
  for (TokenId id : ids) d.logprobs.push_back({{id, -0.25f}, {{id, -0.25f}, {7, -3.0f}}});
  o.samples.push_back(d);
  const auto deltas = out.apply(o);
  ASSERT_EQ(deltas.size(), 1u);
  const TextDelta& t = deltas[0];
  ASSERT_EQ(t.logprobs.size(), 2u);
  EXPECT_EQ(t.logprobs[0].chosen.piece, tok().token_to_piece(ids[0]));
  EXPECT_EQ(t.logprobs[1].chosen.piece, tok().token_to_piece(ids[1]));
  EXPECT_FLOAT_EQ(t.logprobs[1].chosen.logprob, -0.25f);
  ASSERT_EQ(t.logprobs[0].top.size(), 2u);
  EXPECT_EQ(t.logprobs[0].top[1].piece, tok().token_to_piece(7));
  EXPECT_FLOAT_EQ(t.logprobs[0].top[1].logprob, -3.0f);
  const std::vector<TokenId> first = {ids[0]};
  EXPECT_EQ(t.text_offsets, (std::vector<std::size_t>{5, 5 + tok().decode(first).size()}));
}

// Samples are routed by index; the final item ends every sample the engine
// left open (kAbort, or kError when the item carries an error); nothing is
// produced after it.
TEST(OutputProcessor, SamplesRoutedByIndexAndFinalItemEndsTheRest) {
  for (const bool with_error : {false, true}) {
    OutputProcessor out(tok(), {}, 3);
    RequestOutput a;
    SampleDelta d1;
    d1.index = 1;
    d1.token_ids = tok().encode(" b");
    d1.finish = FinishReason::kLength;
    SampleDelta bogus;
    bogus.index = 7;  // not a sample of this request: ignored
    bogus.token_ids = {1};
    a.samples = {d1, bogus};
    auto first = out.apply(a);
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0].index, 1);
    EXPECT_EQ(first[0].text, " b");
    RequestOutput last;
    last.finished = true;
    if (with_error) last.error = "boom";
    const auto rest = out.apply(last);
    ASSERT_EQ(rest.size(), 2u);  // samples 0 and 2
    for (const TextDelta& t : rest)
      EXPECT_EQ(t.finish, with_error ? FinishReason::kError : FinishReason::kAbort);
    EXPECT_TRUE(out.finished());
    EXPECT_EQ(out.sample(1).finish_reason(), FinishReason::kLength);
    EXPECT_EQ(out.sample(1).num_tokens(), 1);
    EXPECT_TRUE(out.apply(a).empty());
  }
}

}  // namespace
}  // namespace folio::engine
