// server/metrics.h: the /metrics registry (Prometheus text exposition 0.0.4).
//
// vLLM's metric names under the `folio:` prefix, every series labelled
// model_name, so a vLLM dashboard needs only a prefix change. Gauges and
// engine-side counters (running, waiting, KV usage, prefix cache, preemptions,
// per-stage seconds) come from EngineStats at scrape time; request-level
// counters and histograms are recorded here by the server as requests
// progress. Thread-safe (one mutex; updates are a few adds).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine_stats.h"
#include "engine/protocol.h"

namespace folio::server {

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double v);
  // Appends the _bucket/_sum/_count lines of `name` with `labels` ("k=\"v\"").
  void render(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;  // per bucket, not cumulative; last = +Inf
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

class ServerMetrics {
 public:
  explicit ServerMetrics(const std::string& model_name);

  void add_prompt_tokens(std::int64_t n);
  void add_generation_tokens(std::int64_t n);
  void request_finished(const std::string& finished_reason);
  void observe_ttft(double s);
  void observe_itl(double s);
  void observe_e2e(double s);
  void observe_timing(const engine::RequestTiming& t);
  void add_stage_seconds(const std::string& stage, double s);  // server-side stages

  std::string render(const engine::EngineStats& engine) const;
  // Recent queue time (exponential moving average over finished requests,
  // weight 0.2 each): the router's estimate of the wait on this model.
  double recent_queue_seconds() const;

 private:
  std::string labels_;  // model_name="..."
  mutable std::mutex mu_;
  std::int64_t prompt_tokens_ = 0;
  std::int64_t generation_tokens_ = 0;
  std::map<std::string, std::int64_t> success_;
  std::map<std::string, double> stages_;
  Histogram ttft_, itl_, e2e_, queue_, prefill_, decode_;
  double queue_ewma_ = 0;
};

// Joins the expositions of several models (each ServerMetrics::render) so
// every family's HELP/TYPE appears once, followed by every model's samples
// in the order given (the text format requires a family's lines together).
std::string merge_expositions(const std::vector<std::string>& parts);

// Appends a family's "# HELP" and "# TYPE" lines.
void append_family(std::string& out, const std::string& name, const char* type, const char* help);

// Escapes a label value for the text format (backslash, quote, newline).
std::string escape_label(const std::string& v);

}  // namespace folio::server
