// server/metrics.cpp: Prometheus text rendering of server and engine metrics.
#include "server/metrics.h"

#include <cmath>
#include <cstdio>

namespace folio::server {
namespace {

// vLLM's bucket boundaries, so dashboards built for it read ours the same.
const std::vector<double> kTtftBuckets = {0.001, 0.005, 0.01, 0.02,  0.04,  0.06,  0.08, 0.1,
                                          0.25,  0.5,   0.75, 1.0,   2.5,   5.0,   7.5,  10.0,
                                          20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
const std::vector<double> kItlBuckets = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                         0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
const std::vector<double> kLatencyBuckets = {0.3,  0.5,   0.8,   1.0,   1.5,   2.0,    2.5,
                                             5.0,  10.0,  15.0,  20.0,  30.0,  40.0,   50.0,
                                             60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
// Stages always listed (0 until measured), in pipeline order.
const char* const kStages[] = {"model_load", "tokenize", "schedule", "attention",
                               "ffn",        "lm_head",  "sampling", "detokenize"};

std::string num(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void sample(std::string& out, const std::string& name, const std::string& labels, double v) {
  out += name + "{" + labels + "} " + num(v) + "\n";
}

}  // namespace

void append_family(std::string& out, const std::string& name, const char* type, const char* help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

std::string escape_label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double v) {
  if (!std::isfinite(v)) return;
  std::size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += v;
  ++count_;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& labels) const {
  std::uint64_t cum = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    cum += counts_[i];
    const std::string le = i < bounds_.size() ? num(bounds_[i]) : "+Inf";
    out += name + "_bucket{le=\"" + le + "\"," + labels + "} " + std::to_string(cum) + "\n";
  }
  out += name + "_sum{" + labels + "} " + num(sum_) + "\n";
  out += name + "_count{" + labels + "} " + std::to_string(count_) + "\n";
}

ServerMetrics::ServerMetrics(const std::string& model_name)
    : labels_("model_name=\"" + escape_label(model_name) + "\""),
      ttft_(kTtftBuckets),
      itl_(kItlBuckets),
      e2e_(kLatencyBuckets),
      queue_(kLatencyBuckets),
      prefill_(kLatencyBuckets),
      decode_(kLatencyBuckets) {}

void ServerMetrics::add_prompt_tokens(std::int64_t n) {
  std::lock_guard l(mu_);
  prompt_tokens_ += n;
}
void ServerMetrics::add_generation_tokens(std::int64_t n) {
  std::lock_guard l(mu_);
  generation_tokens_ += n;
}
void ServerMetrics::request_finished(const std::string& r) {
  std::lock_guard l(mu_);
  ++success_[r];
}
void ServerMetrics::observe_ttft(double s) {
  std::lock_guard l(mu_);
  ttft_.observe(s);
}
void ServerMetrics::observe_itl(double s) {
  std::lock_guard l(mu_);
  itl_.observe(s);
}
void ServerMetrics::observe_e2e(double s) {
  std::lock_guard l(mu_);
  e2e_.observe(s);
}
void ServerMetrics::observe_timing(const engine::RequestTiming& t) {
  std::lock_guard l(mu_);
  queue_.observe(t.queued_s);
  queue_ewma_ = queue_ewma_ == 0 ? t.queued_s : 0.8 * queue_ewma_ + 0.2 * t.queued_s;
  prefill_.observe(t.prefill_s);
  decode_.observe(t.decode_s);
}
void ServerMetrics::add_stage_seconds(const std::string& stage, double s) {
  std::lock_guard l(mu_);
  stages_[stage] += s;
}

double ServerMetrics::recent_queue_seconds() const {
  std::lock_guard l(mu_);
  return queue_ewma_;
}

std::string ServerMetrics::render(const engine::EngineStats& e) const {
  std::lock_guard l(mu_);
  std::string out;
  const auto gauge = [&](const char* n, const char* help, double v) {
    append_family(out, std::string("folio:") + n, "gauge", help);
    sample(out, std::string("folio:") + n, labels_, v);
  };
  const auto counter = [&](const char* n, const char* help, double v) {
    append_family(out, std::string("folio:") + n + "_total", "counter", help);
    sample(out, std::string("folio:") + n + "_total", labels_, v);
  };
  gauge("num_requests_running", "Number of requests in model execution batches.", e.num_running);
  gauge("num_requests_waiting", "Number of requests waiting to be processed.", e.num_waiting);
  gauge("kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", e.kv_cache_usage);
  counter("prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.",
          static_cast<double>(e.prefix_cache_queries));
  counter("prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
          static_cast<double>(e.prefix_cache_hits));
  counter("num_preemptions", "Cumulative number of preemptions from the engine.",
          static_cast<double>(e.num_preemptions));
  counter("prompt_tokens", "Number of prefill tokens processed.",
          static_cast<double>(prompt_tokens_));
  counter("generation_tokens", "Number of generation tokens processed.",
          static_cast<double>(generation_tokens_));
  // Speculative decoding, as vLLM names it (spec/, engine/engine_stats.h).
  counter("spec_decode_num_drafts", "Number of spec decoding drafts.",
          static_cast<double>(e.spec_num_drafts));
  counter("spec_decode_num_draft_tokens", "Number of draft tokens.",
          static_cast<double>(e.spec_num_draft_tokens));
  counter("spec_decode_num_accepted_tokens", "Number of accepted tokens.",
          static_cast<double>(e.spec_num_accepted_tokens));
  if (!e.spec_accepted_per_pos.empty()) {
    append_family(out, "folio:spec_decode_num_accepted_tokens_per_pos_total", "counter",
                  "Accepted tokens per draft position.");
    for (std::size_t i = 0; i < e.spec_accepted_per_pos.size(); ++i) {
      sample(out, "folio:spec_decode_num_accepted_tokens_per_pos_total",
             labels_ + ",position=\"" + std::to_string(i) + "\"",
             static_cast<double>(e.spec_accepted_per_pos[i]));
    }
  }
  if (e.spec_row_cost > 0) {  // folio's own: what the adaptive rule charges a verification row
    gauge("spec_decode_row_cost",
          "One verification row's cost as a fraction of a single-stream decode step (measured, "
          "or the configured row_cost); the adaptive rule drafts the j-th token while "
          "acceptance^j is at least this plus the draft cost.",
          e.spec_row_cost);
  }
  if (e.spec_draft_cost > 0) {  // folio's own: what it charges a model drafter's forward
    gauge("spec_decode_draft_cost",
          "One draft forward's cost as a fraction of a single-stream decode step (measured, "
          "the weight-bytes estimate until then, or the configured draft_cost).",
          e.spec_draft_cost);
  }
  append_family(out, "folio:request_success_total", "counter",
                "Count of successfully processed requests.");
  for (const char* r : {"stop", "length", "abort"}) {
    const auto it = success_.find(r);
    sample(out, "folio:request_success_total",
           "finished_reason=\"" + std::string(r) + "\"," + labels_,
           it == success_.end() ? 0.0 : static_cast<double>(it->second));
  }
  const auto hist = [&](const char* n, const char* help, const Histogram& h) {
    append_family(out, std::string("folio:") + n, "histogram", help);
    h.render(out, std::string("folio:") + n, labels_);
  };
  hist("time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttft_);
  hist("inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", itl_);
  hist("e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", e2e_);
  hist("request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
       queue_);
  hist("request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
       prefill_);
  hist("request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
       decode_);
  // Where the time goes: server stages plus the engine's, one counter family.
  std::map<std::string, double> stages(stages_.begin(), stages_.end());
  for (const char* s : kStages) stages.try_emplace(s, 0.0);
  for (const auto& [name, secs] : e.stage.named()) stages[name] += secs;
  append_family(
      out, "folio:stage_seconds_total", "counter",
      "Cumulative seconds spent per pipeline stage (tokenize, schedule, prepare, attention, ffn, "
      "lm_head, sampling, detokenize, update, propose, model_load).");
  for (const auto& [name, secs] : stages) {
    sample(out, "folio:stage_seconds_total", labels_ + ",stage=\"" + escape_label(name) + "\"",
           secs);
  }
  return out;
}

std::string merge_expositions(const std::vector<std::string>& parts) {
  if (parts.size() == 1) return parts.front();
  std::vector<std::string> order;                    // family names, first seen first
  std::map<std::string, std::string> head, samples;  // family -> HELP/TYPE lines, sample lines
  for (const std::string& text : parts) {
    std::string current;
    std::size_t pos = 0;
    while (pos < text.size()) {
      std::size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      const std::string line = text.substr(pos, end - pos) + "\n";
      pos = end + 1;
      if (line.starts_with("# HELP ") || line.starts_with("# TYPE ")) {
        const std::size_t name_end = line.find(' ', 7);
        current = line.substr(7, name_end - 7);
        if (!head.contains(current)) order.push_back(current);
        std::string& h = head[current];
        if (h.find(line) == std::string::npos) h += line;
      } else {
        samples[current] += line;
      }
    }
  }
  std::string out;
  for (const std::string& f : order) out += head[f] + samples[f];
  return out;
}

}  // namespace folio::server
