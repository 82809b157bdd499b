// SSE parser: the same events whatever the TCP read boundaries; CRLF / CR / LF;
// comments; multi-line data; [DONE]; bounded memory.
#include "loadgen/sse_parser.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace folio::loadgen {
namespace {

std::vector<std::string> feed_split(std::string_view s, std::vector<std::size_t> cuts) {
  SseParser p;
  std::vector<std::string> events;
  std::size_t at = 0;
  cuts.push_back(s.size());
  for (std::size_t c : cuts) {
    p.feed(s.substr(at, c - at), events);
    at = c;
  }
  return events;
}

const std::string kStream =
    ": keep-alive comment\n"
    "data: {\"choices\":[{\"text\":\"Hel\"}]}\n\n"
    "event: message\r\n"
    "id: 7\r\n"
    "data: {\"choices\":[{\"text\":\"lo\"}]}\r\n\r\n"
    "data:no-space\r\r"
    "data: line one\n"
    "data: line two\n"
    "\n"
    "data:\n\n"
    "data: [DONE]\n\n";

const std::vector<std::string> kEvents = {"{\"choices\":[{\"text\":\"Hel\"}]}",
                                          "{\"choices\":[{\"text\":\"lo\"}]}",
                                          "no-space",
                                          "line one\nline two",
                                          "",
                                          "[DONE]"};

TEST(SseParser, WholeStream) {
  EXPECT_EQ(parse_sse(kStream), kEvents);
}

TEST(SseParser, EverySingleSplitPointGivesTheSameEvents) {
  for (std::size_t i = 0; i <= kStream.size(); ++i)
    EXPECT_EQ(feed_split(kStream, {i}), kEvents) << "split at " << i;
}

TEST(SseParser, EveryPairOfSplitPointsGivesTheSameEvents) {
  for (std::size_t i = 0; i <= kStream.size(); ++i)
    for (std::size_t j = i; j <= kStream.size(); ++j)
      ASSERT_EQ(feed_split(kStream, {i, j}), kEvents) << "splits at " << i << ", " << j;
}

TEST(SseParser, ByteByByte) {
  std::vector<std::size_t> cuts;
  for (std::size_t i = 1; i < kStream.size(); ++i) cuts.push_back(i);
  EXPECT_EQ(feed_split(kStream, cuts), kEvents);
}

TEST(SseParser, IncompleteEventIsHeldUntilItsBlankLine) {
  SseParser p;
  std::vector<std::string> events;
  p.feed("data: {\"a\":1}\n", events);
  EXPECT_TRUE(events.empty());
  EXPECT_TRUE(p.pending());
  p.feed("\n", events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0], "{\"a\":1}");
  EXPECT_FALSE(p.pending());
}

TEST(SseParser, CommentsAndUnknownFieldsMakeNoEvents) {
  EXPECT_TRUE(parse_sse(": ping\n\n:\n\nevent: x\nid: 3\nretry: 10\n\n").empty());
}

TEST(SseParser, DoneMarker) {
  EXPECT_TRUE(is_done("[DONE]"));
  EXPECT_FALSE(is_done(" [DONE]"));
  EXPECT_FALSE(is_done("{}"));
}

TEST(SseParser, OversizedEventThrowsInsteadOfGrowing) {
  SseParser p(64);
  std::vector<std::string> events;
  EXPECT_THROW(p.feed("data: " + std::string(100, 'x'), events), Error);
  SseParser q(64);
  EXPECT_THROW(q.feed("data: " + std::string(40, 'x') + "\ndata: " + std::string(40, 'y'), events),
               Error);
}

}  // namespace
}  // namespace folio::loadgen
