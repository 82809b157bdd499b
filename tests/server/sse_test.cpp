// tests/server/sse_test.cpp: SSE and chunked framing.
#include "server/sse.h"

#include <gtest/gtest.h>

namespace folio::server {
namespace {

TEST(Sse, EventFraming) {
  EXPECT_EQ(sse_data("{\"a\":1}"), "data: {\"a\":1}\n\n");
  EXPECT_EQ(sse_done(), "data: [DONE]\n\n");
}

TEST(Sse, ChunkFraming) {
  EXPECT_EQ(http_chunk("hello"), "5\r\nhello\r\n");
  EXPECT_EQ(http_chunk(std::string(255, 'x')).substr(0, 4), "ff\r\n");
  EXPECT_EQ(http_chunk(""), "");  // never a premature terminating chunk
  EXPECT_EQ(http_last_chunk(), "0\r\n\r\n");
}

}  // namespace
}  // namespace folio::server
