// tests/server/metrics_test.cpp: Prometheus text rendering.
#include "server/metrics.h"

#include <gtest/gtest.h>

namespace folio::server {
namespace {

TEST(Metrics, HistogramBucketsAreCumulative) {
  Histogram h({0.1, 1.0});
  h.observe(0.05);
  h.observe(0.5);
  h.observe(0.5);
  h.observe(7);
  std::string out;
  h.render(out, "x", "m=\"a\"");
  EXPECT_EQ(out,
            "x_bucket{le=\"0.10000000000000001\",m=\"a\"} 1\n"
            "x_bucket{le=\"1\",m=\"a\"} 3\n"
            "x_bucket{le=\"+Inf\",m=\"a\"} 4\n"
            "x_sum{m=\"a\"} 8.0500000000000007\n"
            "x_count{m=\"a\"} 4\n");
}

TEST(Metrics, LabelValuesAreEscaped) {
  EXPECT_EQ(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  ServerMetrics m("we\"ird");
  const std::string out = m.render(engine::EngineStats{});
  EXPECT_NE(out.find("model_name=\"we\\\"ird\""), std::string::npos);
}

TEST(Metrics, EveryFamilyHasHelpAndTypeOnce) {
  ServerMetrics m("m");
  m.add_prompt_tokens(3);
  m.request_finished("stop");
  const std::string out = m.render(engine::EngineStats{});
  std::size_t types = 0, pos = 0;
  while ((pos = out.find("# TYPE ", pos)) != std::string::npos) ++types, ++pos;
  // 3 gauges + 9 counters (3 of them spec_decode_*) + 6 histograms + the stage counter; the
  // per-position acceptance family and the row-cost gauge only while speculative decoding is on.
  EXPECT_EQ(types, 19u);
  EXPECT_NE(out.find("folio:request_success_total{finished_reason=\"stop\",model_name=\"m\"} 1\n"),
            std::string::npos);
  EXPECT_NE(out.find("folio:prompt_tokens_total{model_name=\"m\"} 3\n"), std::string::npos);
}

TEST(Metrics, SpeculativeDecodingCountersUseVllmNames) {
  ServerMetrics m("m");
  engine::EngineStats e;
  e.spec_num_drafts = 5;
  e.spec_num_draft_tokens = 20;
  e.spec_num_accepted_tokens = 9;
  e.spec_accepted_per_pos = {5, 3, 1, 0};
  const std::string out = m.render(e);
  EXPECT_NE(out.find("folio:spec_decode_num_drafts_total{model_name=\"m\"} 5\n"),
            std::string::npos);
  EXPECT_NE(out.find("folio:spec_decode_num_draft_tokens_total{model_name=\"m\"} 20\n"),
            std::string::npos);
  EXPECT_NE(out.find("folio:spec_decode_num_accepted_tokens_total{model_name=\"m\"} 9\n"),
            std::string::npos);
  for (int i = 0; i < 4; ++i) {
    const std::string line =
        "folio:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"m\","
        "position=\"" +
        std::to_string(i) + "\"} " +
        std::to_string(e.spec_accepted_per_pos[static_cast<std::size_t>(i)]) + "\n";
    EXPECT_NE(out.find(line), std::string::npos) << line;
  }
  EXPECT_NE(out.find("stage=\"propose\""), std::string::npos);
  EXPECT_EQ(out.find("folio:spec_decode_row_cost"), std::string::npos);  // not measured: 0
  e.spec_row_cost = 0.125;
  EXPECT_NE(m.render(e).find("# TYPE folio:spec_decode_row_cost gauge\n"
                             "folio:spec_decode_row_cost{model_name=\"m\"} 0.125\n"),
            std::string::npos);
  EXPECT_EQ(out.find("folio:spec_decode_draft_cost"), std::string::npos);  // ngram: 0
  e.spec_draft_cost = 0.25;
  EXPECT_NE(m.render(e).find("# TYPE folio:spec_decode_draft_cost gauge\n"
                             "folio:spec_decode_draft_cost{model_name=\"m\"} 0.25\n"),
            std::string::npos);
}

}  // namespace
}  // namespace folio::server
