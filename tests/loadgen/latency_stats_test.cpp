// Latency statistics on hand-computed examples (vLLM's definitions, numpy's percentiles).
#include "loadgen/latency_stats.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace folio::loadgen {
namespace {

// A request that started at `start`, streamed chunks at `chunks` and ended at `end`.
RequestRecord rec(double start, std::vector<double> chunks, double end, std::int64_t out,
                  std::int64_t in = 10) {
  RequestRecord r;
  r.ok = true;
  r.start = start;
  r.end = end;
  r.chunk_times = std::move(chunks);
  r.output_tokens = out;
  r.expected_output = out;
  r.prompt_tokens = in;
  r.usage_reported = true;
  return r;
}

TEST(LatencyStats, PercentileInterpolatesLikeNumpy) {
  const std::vector<double> v = {1, 2, 3, 4};
  // numpy.percentile([1,2,3,4], q): 50 -> 2.5, 90 -> 3.7, 99 -> 3.97, 0 -> 1, 100 -> 4.
  EXPECT_DOUBLE_EQ(percentile(v, 50), 2.5);
  EXPECT_NEAR(percentile(v, 90), 3.7, 1e-12);
  EXPECT_NEAR(percentile(v, 99), 3.97, 1e-12);
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 4);
  EXPECT_DOUBLE_EQ(percentile({7}, 99), 7);
}

TEST(LatencyStats, DistributionInMilliseconds) {
  const Distribution d = distribution_ms({0.001, 0.002, 0.003, 0.004, 0.010});
  EXPECT_EQ(d.count, 5u);
  EXPECT_NEAR(d.mean, 4.0, 1e-9);
  EXPECT_NEAR(d.median, 3.0, 1e-9);
  // numpy.std([1,2,3,4,10]) = sqrt(10) ; numpy.percentile(..., 90) = 7.6, 99 = 9.76.
  EXPECT_NEAR(d.std, std::sqrt(10.0), 1e-9);
  EXPECT_NEAR(d.p90, 7.6, 1e-9);
  EXPECT_NEAR(d.p99, 9.76, 1e-9);
  EXPECT_EQ(distribution_ms({}).count, 0u);
}

TEST(LatencyStats, TtftTpotItlE2eOnHandComputedRequests) {
  // A: start 0, chunks at .1 .15 .25 .30, end .30, 4 tokens:
  //    TTFT 100 ms, E2E 300 ms, TPOT (300-100)/3 = 66.67 ms, ITL 50, 100, 50.
  // B: start 1, chunks 1.2 1.6, end 1.6, 2 tokens: TTFT 200, E2E 600, TPOT 400, ITL 400.
  // C: start 2, one chunk 2.05, end 2.05, 1 token: TTFT 50, E2E 50, no TPOT, no ITL.
  const std::vector<RequestRecord> rs = {rec(0, {.1, .15, .25, .30}, .30, 4),
                                         rec(1, {1.2, 1.6}, 1.6, 2), rec(2, {2.05}, 2.05, 1)};
  const Summary s = summarize(rs, 4.0, {});
  EXPECT_EQ(s.completed, 3u);
  EXPECT_EQ(s.failed, 0u);
  EXPECT_EQ(s.total_output_tokens, 7);
  EXPECT_EQ(s.total_input_tokens, 30);
  EXPECT_DOUBLE_EQ(s.request_throughput, 0.75);
  EXPECT_DOUBLE_EQ(s.output_throughput, 7 / 4.0);
  EXPECT_DOUBLE_EQ(s.total_token_throughput, 37 / 4.0);
  EXPECT_EQ(s.output_tokens_source, "usage");
  EXPECT_FALSE(s.request_goodput.has_value());

  EXPECT_EQ(s.ttft.count, 3u);
  EXPECT_NEAR(s.ttft.mean, (100 + 200 + 50) / 3.0, 1e-9);
  EXPECT_NEAR(s.ttft.median, 100, 1e-9);
  EXPECT_EQ(s.tpot.count, 2u);
  EXPECT_NEAR(s.tpot.mean, (200.0 / 3 + 400) / 2, 1e-9);
  EXPECT_EQ(s.itl.count, 4u);
  EXPECT_NEAR(s.itl.mean, (50 + 100 + 50 + 400) / 4.0, 1e-9);
  EXPECT_NEAR(s.itl.median, 75, 1e-9);
  EXPECT_NEAR(s.e2el.mean, (300 + 600 + 50) / 3.0, 1e-9);
  EXPECT_NEAR(s.e2el.p99, 300 + 0.98 * (600 - 300), 1e-9);
}

TEST(LatencyStats, FailuresAreCountedAndGroupedNotMeasured) {
  RequestRecord bad;
  bad.error = "HTTP 500: boom";
  std::vector<RequestRecord> rs = {rec(0, {.1, .2}, .2, 2), bad, bad};
  rs[2].error = "connect: refused";
  const Summary s = summarize(rs, 1.0, {});
  EXPECT_EQ(s.completed, 1u);
  EXPECT_EQ(s.failed, 2u);
  EXPECT_EQ(s.ttft.count, 1u);
  ASSERT_EQ(s.errors.size(), 2u);
  EXPECT_EQ(s.errors.at("HTTP 500: boom"), 1u);
  const auto j = to_json(s);
  EXPECT_EQ(j["failed"], 2);
  EXPECT_EQ(j["errors"].size(), 2u);
}

TEST(LatencyStats, OutputSourceAndLengthMismatches) {
  auto a = rec(0, {.1, .2}, .2, 2);
  auto b = rec(0, {.1, .2, .3}, .3, 3);
  b.usage_reported = false;
  b.expected_output = 8;  // generated fewer than asked
  const Summary s = summarize({a, b}, 1.0, {});
  EXPECT_EQ(s.output_tokens_source, "mixed");
  EXPECT_EQ(s.output_len_mismatches, 1u);
  a.usage_reported = false;
  EXPECT_EQ(summarize({a}, 1.0, {}).output_tokens_source, "events");
}

TEST(LatencyStats, GoodputCountsRequestsMeetingEverySlo) {
  // TTFT 100/200/50 ms, TPOT 66.7/400/0 ms, E2E 300/600/50 ms over 2 s.
  const std::vector<RequestRecord> rs = {rec(0, {.1, .15, .25, .30}, .30, 4),
                                         rec(1, {1.2, 1.6}, 1.6, 2), rec(2, {2.05}, 2.05, 1)};
  EXPECT_DOUBLE_EQ(*summarize(rs, 2.0, parse_goodput({"ttft:150"})).request_goodput, 1.0);
  EXPECT_DOUBLE_EQ(*summarize(rs, 2.0, parse_goodput({"tpot:100"})).request_goodput, 1.0);
  EXPECT_DOUBLE_EQ(*summarize(rs, 2.0, parse_goodput({"ttft:100", "e2el:250"})).request_goodput,
                   0.5);
  EXPECT_DOUBLE_EQ(*summarize(rs, 2.0, parse_goodput({"e2el:1000"})).request_goodput, 1.5);
  EXPECT_DOUBLE_EQ(*summarize(rs, 2.0, parse_goodput({"ttft:10"})).request_goodput, 0.0);
}

TEST(LatencyStats, ParseGoodputRejectsBadItems) {
  const Slo s = parse_goodput({"ttft:200", "tpot:50.5", "e2el:1000"});
  EXPECT_EQ(*s.ttft_ms, 200);
  EXPECT_EQ(*s.tpot_ms, 50.5);
  EXPECT_EQ(*s.e2el_ms, 1000);
  EXPECT_TRUE(parse_goodput({}).empty());
  for (const char* bad : {"ttft", "ttft:", "ttft:abc", "ttft:-1", "latency:10", "ttft:5ms"})
    EXPECT_THROW(parse_goodput({bad}), Error) << bad;
}

}  // namespace
}  // namespace folio::loadgen
