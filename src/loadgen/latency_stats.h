// loadgen/latency_stats.h: what one benchmark request recorded and the
// summary `folio bench serve` reports, with `vllm bench serve`'s definitions:
//
//   TTFT  first streamed chunk carrying generated text - request start
//   TPOT  (E2E - TTFT) / (output tokens - 1), per request with > 1 output token
//   ITL   every gap between consecutive generated-text chunks, all requests pooled
//   E2E   end of the response - request start
//   goodput  requests/s that met every given SLO (--goodput ttft:MS tpot:MS e2el:MS)
//
// Times are monotonic seconds; the summary reports milliseconds. Percentiles
// interpolate linearly between order statistics (numpy's default), so they
// match vLLM's numbers on the same data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace folio::loadgen {

struct RequestRecord {
  bool ok = false;
  std::string error;                 // why it failed (HTTP status + body, socket error ...)
  std::int64_t prompt_tokens = 0;    // usage.prompt_tokens, else the ids sent
  std::int64_t expected_output = 0;  // the max_tokens asked for
  std::int64_t output_tokens = 0;    // usage.completion_tokens, else token events
  bool usage_reported = false;       // output_tokens came from the server's usage
  double start = 0, end = 0;         // monotonic seconds
  std::vector<double> chunk_times;   // arrival of each chunk with generated text

  double ttft() const { return chunk_times.empty() ? end - start : chunk_times.front() - start; }
  double e2e() const { return end - start; }
  // 0 for a request with at most one output token (vLLM counts those as meeting a TPOT SLO).
  double tpot() const;
};

// --goodput: milliseconds per metric; absent metrics are not constrained.
struct Slo {
  std::optional<double> ttft_ms, tpot_ms, e2el_ms;
  bool empty() const { return !ttft_ms && !tpot_ms && !e2el_ms; }
};

// Parses "ttft:MS", "tpot:MS", "e2el:MS" items; throws folio::Error naming a bad item.
Slo parse_goodput(const std::vector<std::string>& items);

bool meets(const RequestRecord& r, const Slo& slo);

// p in [0, 100] over ascending `sorted` (non-empty), interpolating linearly.
double percentile(const std::vector<double>& sorted, double p);

struct Distribution {  // milliseconds
  std::size_t count = 0;
  double mean = 0, median = 0, std = 0, p90 = 0, p99 = 0;
};

// Distribution of `seconds`, reported in milliseconds (all zeros when empty).
Distribution distribution_ms(std::vector<double> seconds);

struct Summary {
  std::size_t completed = 0, failed = 0;
  double duration_s = 0;
  std::int64_t total_input_tokens = 0, total_output_tokens = 0;
  double request_throughput = 0, output_throughput = 0, total_token_throughput = 0;
  std::optional<double> request_goodput;  // only with an SLO
  std::string output_tokens_source;       // "usage", "events" or "mixed"
  std::size_t output_len_mismatches = 0;  // completed requests whose output != max_tokens
  Distribution ttft, tpot, itl, e2el;
  std::map<std::string, std::size_t> errors;  // distinct error text -> count
};

// `duration_s` is the wall time of the whole run (first send to last completion).
Summary summarize(const std::vector<RequestRecord>& records, double duration_s, const Slo& slo);

// vLLM's result keys (mean_ttft_ms, p99_itl_ms, request_throughput, ...) plus folio's extras.
nlohmann::json to_json(const Summary& s);

}  // namespace folio::loadgen
