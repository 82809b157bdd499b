// loadgen/latency_stats.cpp: per-request metrics and their summary (see latency_stats.h).
#include "loadgen/latency_stats.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "base/error.h"

namespace folio::loadgen {

double RequestRecord::tpot() const {
  if (output_tokens <= 1) return 0.0;
  return (e2e() - ttft()) / static_cast<double>(output_tokens - 1);
}

Slo parse_goodput(const std::vector<std::string>& items) {
  Slo slo;
  for (const std::string& item : items) {
    const std::size_t colon = item.find(':');
    const std::string name = item.substr(0, colon);
    double ms = -1;
    if (colon != std::string::npos) {
      const char* b = item.data() + colon + 1;
      const char* e = item.data() + item.size();
      const auto [end, ec] = std::from_chars(b, e, ms);
      if (ec != std::errc{} || end != e || b == e) ms = -1;
    }
    if (!std::isfinite(ms) || ms < 0)
      throw Error("--goodput: '" + item + "' is not NAME:MILLISECONDS (e.g. ttft:200 tpot:50)");
    if (name == "ttft")
      slo.ttft_ms = ms;
    else if (name == "tpot")
      slo.tpot_ms = ms;
    else if (name == "e2el")
      slo.e2el_ms = ms;
    else
      throw Error("--goodput: unknown metric '" + name + "' (use ttft, tpot or e2el)");
  }
  return slo;
}

bool meets(const RequestRecord& r, const Slo& slo) {
  if (!r.ok) return false;
  if (slo.ttft_ms && 1e3 * r.ttft() > *slo.ttft_ms) return false;
  if (slo.tpot_ms && 1e3 * r.tpot() > *slo.tpot_ms) return false;
  if (slo.e2el_ms && 1e3 * r.e2e() > *slo.e2el_ms) return false;
  return true;
}

double percentile(const std::vector<double>& sorted, double p) {
  FOLIO_CHECK(!sorted.empty());
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(rank));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (rank - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

Distribution distribution_ms(std::vector<double> seconds) {
  Distribution d;
  d.count = seconds.size();
  if (seconds.empty()) return d;
  for (double& v : seconds) v *= 1e3;
  std::sort(seconds.begin(), seconds.end());
  const double n = static_cast<double>(seconds.size());
  d.mean = std::accumulate(seconds.begin(), seconds.end(), 0.0) / n;
  double ss = 0;
  for (double v : seconds) ss += (v - d.mean) * (v - d.mean);
  d.std = std::sqrt(ss / n);  // population sd, as numpy.std
  d.median = percentile(seconds, 50);
  d.p90 = percentile(seconds, 90);
  d.p99 = percentile(seconds, 99);
  return d;
}

namespace {

std::string output_source(std::size_t with_usage, std::size_t completed) {
  if (with_usage == completed) return "usage";
  return with_usage == 0 ? "events" : "mixed";
}

}  // namespace

Summary summarize(const std::vector<RequestRecord>& records, double duration_s, const Slo& slo) {
  Summary s;
  s.duration_s = duration_s;
  std::vector<double> ttft, tpot, itl, e2el;
  std::size_t with_usage = 0, good = 0;
  for (const RequestRecord& r : records) {
    if (!r.ok) {
      ++s.failed;
      ++s.errors[r.error];
      continue;
    }
    ++s.completed;
    s.total_input_tokens += r.prompt_tokens;
    s.total_output_tokens += r.output_tokens;
    if (r.usage_reported) ++with_usage;
    if (r.expected_output > 0 && r.output_tokens != r.expected_output) ++s.output_len_mismatches;
    ttft.push_back(r.ttft());
    e2el.push_back(r.e2e());
    if (r.output_tokens > 1) tpot.push_back(r.tpot());
    for (std::size_t i = 1; i < r.chunk_times.size(); ++i)
      itl.push_back(r.chunk_times[i] - r.chunk_times[i - 1]);
    if (meets(r, slo)) ++good;
  }
  s.output_tokens_source = output_source(with_usage, s.completed);
  const double d = duration_s > 0 ? duration_s : 1e-9;
  s.request_throughput = static_cast<double>(s.completed) / d;
  s.output_throughput = static_cast<double>(s.total_output_tokens) / d;
  s.total_token_throughput = static_cast<double>(s.total_input_tokens + s.total_output_tokens) / d;
  if (!slo.empty()) s.request_goodput = static_cast<double>(good) / d;
  s.ttft = distribution_ms(std::move(ttft));
  s.tpot = distribution_ms(std::move(tpot));
  s.itl = distribution_ms(std::move(itl));
  s.e2el = distribution_ms(std::move(e2el));
  return s;
}

nlohmann::json to_json(const Summary& s) {
  nlohmann::json j = {
      {"completed", s.completed},
      {"failed", s.failed},
      {"duration", s.duration_s},
      {"total_input_tokens", s.total_input_tokens},
      {"total_output_tokens", s.total_output_tokens},
      {"request_throughput", s.request_throughput},
      {"output_throughput", s.output_throughput},
      {"total_token_throughput", s.total_token_throughput},
      {"request_goodput", s.request_goodput ? nlohmann::json(*s.request_goodput) : nullptr},
      {"output_tokens_source", s.output_tokens_source},
      {"output_len_mismatches", s.output_len_mismatches},
  };
  const std::pair<const char*, const Distribution*> metrics[] = {
      {"ttft", &s.ttft}, {"tpot", &s.tpot}, {"itl", &s.itl}, {"e2el", &s.e2el}};
  for (const auto& [name, d] : metrics) {
    const std::string m(name);
    j["mean_" + m + "_ms"] = d->mean;
    j["median_" + m + "_ms"] = d->median;
    j["std_" + m + "_ms"] = d->std;
    j["p90_" + m + "_ms"] = d->p90;
    j["p99_" + m + "_ms"] = d->p99;
  }
  nlohmann::json errors = nlohmann::json::array();
  for (const auto& [text, count] : s.errors) errors.push_back({{"error", text}, {"count", count}});
  j["errors"] = errors;
  return j;
}

}  // namespace folio::loadgen
