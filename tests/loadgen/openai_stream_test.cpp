// OpenAI stream chunks -> records: token chunks, usage, errors, chat deltas.
#include "loadgen/openai_stream.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace folio::loadgen {
namespace {

TEST(OpenAiStream, CompletionChunksAndUsage) {
  RequestRecord r;
  r.prompt_tokens = 3;
  OpenAiStreamReader rd(r);
  EXPECT_FALSE(rd.on_event(R"({"choices":[{"index":0,"text":"a","finish_reason":null}]})", 1.0));
  EXPECT_FALSE(rd.on_event(R"({"choices":[{"index":0,"text":"","finish_reason":null}]})", 1.5));
  EXPECT_FALSE(rd.on_event(
      R"({"choices":[{"index":0,"text":"b","finish_reason":"length"}],"usage":null})", 2.0));
  EXPECT_FALSE(rd.on_event(
      R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}})", 2.1));
  EXPECT_TRUE(rd.on_event("[DONE]", 2.2));
  rd.finish();
  EXPECT_EQ(r.chunk_times,
            (std::vector<double>{1.0, 2.0}));  // the empty-text chunk is not a token chunk
  EXPECT_TRUE(r.usage_reported);
  EXPECT_EQ(r.output_tokens, 3);
  EXPECT_EQ(r.prompt_tokens, 5);
  EXPECT_TRUE(rd.saw_done());
}

TEST(OpenAiStream, WithoutUsageCountsTokenChunks) {
  RequestRecord r;
  r.prompt_tokens = 4;
  OpenAiStreamReader rd(r);
  rd.on_event(R"({"choices":[{"delta":{"role":"assistant"}}]})", 1.0);
  rd.on_event(R"({"choices":[{"delta":{"content":"x"}}]})", 1.1);
  rd.on_event(R"({"choices":[{"delta":{"content":"y"}}]})", 1.2);
  rd.finish();
  EXPECT_FALSE(r.usage_reported);
  EXPECT_EQ(r.output_tokens, 2);
  EXPECT_EQ(r.prompt_tokens, 4);
  EXPECT_EQ(r.chunk_times.size(), 2u);
}

TEST(OpenAiStream, ErrorsAndMalformedEventsThrow) {
  RequestRecord r;
  OpenAiStreamReader rd(r);
  EXPECT_THROW(rd.on_event(R"({"error":{"message":"too long","type":"invalid_request_error"}})", 1),
               Error);
  EXPECT_THROW(rd.on_event("{not json", 1), Error);
  EXPECT_THROW(rd.on_event("[1,2]", 1), Error);
}

}  // namespace
}  // namespace folio::loadgen
