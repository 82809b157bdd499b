// loadgen/report.cpp: the result table (see report.h).
#include "loadgen/report.h"

#include <cstdio>

namespace folio::loadgen {

namespace {

void row(std::string& out, const std::string& label, const std::string& value) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%-40s%-10s\n", label.c_str(), value.c_str());
  out += buf;
}

std::string num(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

void title(std::string& out, const std::string& text, char fill) {
  const std::size_t width = 50;
  const std::size_t pad = text.size() + 2 < width ? width - text.size() : 0;
  std::string line(pad / 2, fill);
  line += text;
  line += std::string(pad - pad / 2, fill);
  out += line + "\n";
}

void section(std::string& out, const std::string& heading, const std::string& name,
             const Distribution& d) {
  title(out, heading, '-');
  row(out, "Mean " + name + " (ms):", num(d.mean));
  row(out, "Median " + name + " (ms):", num(d.median));
  row(out, "P90 " + name + " (ms):", num(d.p90));
  row(out, "P99 " + name + " (ms):", num(d.p99));
}

}  // namespace

std::string format_table(const Summary& s, const ReportContext& ctx) {
  std::string out;
  title(out, " Serving Benchmark Result ", '=');
  row(out, "Successful requests:", std::to_string(s.completed));
  row(out, "Failed requests:", std::to_string(s.failed));
  row(out, "Request rate (req/s):", ctx.request_rate);
  row(out, "Maximum request concurrency:", ctx.max_concurrency);
  row(out, "Benchmark duration (s):", num(s.duration_s));
  row(out, "Total input tokens:", std::to_string(s.total_input_tokens));
  row(out, "Total generated tokens:", std::to_string(s.total_output_tokens));
  row(out, "Generated tokens counted from:", s.output_tokens_source);
  row(out, "Request throughput (req/s):", num(s.request_throughput));
  if (s.request_goodput) row(out, "Request goodput (req/s):", num(*s.request_goodput));
  row(out, "Output token throughput (tok/s):", num(s.output_throughput));
  row(out, "Total Token throughput (tok/s):", num(s.total_token_throughput));
  section(out, "Time to First Token", "TTFT", s.ttft);
  section(out, "Time per Output Token (excl. 1st token)", "TPOT", s.tpot);
  section(out, "Inter-token Latency", "ITL", s.itl);
  section(out, "End-to-end Latency", "E2EL", s.e2el);
  out += std::string(50, '=') + "\n";
  return out;
}

}  // namespace folio::loadgen
