// loadgen/bench_serve.cpp: arrival timer + concurrency gate + progress over
// SseClient (see bench_serve.h).
//
//   arrival timer ──(offset reached)──▶ ready queue ──(in_flight < limit)──▶ SseClient::post
//        ▲                                               ▲                          │
//        └── re-armed for the next arrival               └──── one finishes ◀───────┘
#include "loadgen/bench_serve.h"

#include <unistd.h>

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>

#include "base/error.h"
#include "base/timer.h"

namespace folio::loadgen {

namespace asio = boost::asio;

std::string resolve_model(const HttpUrl& url, const ClientOptions& opt,
                          const std::string& requested) {
  if (!requested.empty()) return requested;
  const HttpReply r = http_get(url, "/v1/models", opt);
  if (r.status != 200)
    throw Error("GET /v1/models: HTTP " + std::to_string(r.status) + ": " + r.body.substr(0, 300) +
                " (pass --model)");
  const auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_discarded() || !j.contains("data") || !j["data"].is_array() || j["data"].empty() ||
      !j["data"][0].contains("id") || !j["data"][0]["id"].is_string())
    throw Error("GET /v1/models: no model id in the answer (pass --model)");
  return j["data"][0]["id"].get<std::string>();
}

namespace {

bool is_chat(const std::string& endpoint) {
  return endpoint.size() >= 16 &&
         endpoint.compare(endpoint.size() - 16, 16, "chat/completions") == 0;
}

}  // namespace

std::string request_body(const BenchServeConfig& c, const std::string& model, const Prompt& p) {
  nlohmann::json j = {{"model", model},     {"max_tokens", p.max_tokens},
                      {"stream", true},     {"stream_options", {{"include_usage", true}}},
                      {"ignore_eos", true}, {"temperature", 0}};
  if (is_chat(c.endpoint)) {
    if (!p.prompt.is_string())
      throw Error("--endpoint " + c.endpoint +
                  " needs text prompts: use --dataset-path with string prompts");
    j["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", p.prompt}}});
  } else {
    j["prompt"] = p.prompt;
  }
  return j.dump();
}

namespace {

RequestRecord seed_record(const Prompt& p) {
  RequestRecord r;
  r.prompt_tokens = p.prompt_tokens;
  r.expected_output = p.max_tokens;
  return r;
}

std::chrono::steady_clock::duration seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(s));
}

// The state of one run; everything happens on the io_context's thread.
class Runner {
 public:
  Runner(const BenchServeConfig& c, std::string model)
      : c_(c),
        model_(std::move(model)),
        client_(io_, c.url, c.client),
        arrival_timer_(io_),
        progress_timer_(io_),
        offsets_(arrival_offsets(c.prompts.size(), c.arrivals)),
        records_(c.prompts.size()) {
    bodies_.reserve(c.prompts.size());
    for (const Prompt& p : c.prompts) bodies_.push_back(request_body(c, model_, p));
  }

  RequestRecord warmup() {
    RequestRecord out;
    client_.post(c_.endpoint, bodies_.front(), seed_record(c_.prompts.front()),
                 [&](RequestRecord r) { out = std::move(r); });
    io_.run();
    io_.restart();
    return out;
  }

  double run() {
    start_ = monotonic_seconds();
    arm_arrival();
    if (c_.progress) arm_progress();
    io_.run();
    return last_end_ - start_;
  }

  std::vector<RequestRecord> take_records() { return std::move(records_); }

 private:
  void arm_arrival() {
    if (next_ >= offsets_.size()) return;
    arrival_timer_.expires_at(std::chrono::steady_clock::now() +
                              seconds(start_ + offsets_[next_] - monotonic_seconds()));
    arrival_timer_.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      const double now = monotonic_seconds() - start_;
      while (next_ < offsets_.size() && offsets_[next_] <= now) ready_.push_back(next_++);
      start_ready();
      arm_arrival();
    });
  }

  void start_ready() {
    while (!ready_.empty() && (c_.max_concurrency == 0 || in_flight_ < c_.max_concurrency)) {
      const std::size_t i = ready_.front();
      ready_.pop_front();
      ++in_flight_;
      client_.post(c_.endpoint, std::move(bodies_[i]), seed_record(c_.prompts[i]),
                   [this, i](RequestRecord r) { on_done(i, std::move(r)); });
    }
  }

  void on_done(std::size_t i, RequestRecord r) {
    --in_flight_;
    ++done_;
    if (!r.ok) ++failed_;
    last_end_ = std::max(last_end_, r.end);
    records_[i] = std::move(r);
    if (done_ == records_.size()) {
      progress_timer_.cancel();
      if (c_.progress) print_progress(true);
      return;
    }
    start_ready();
  }

  void arm_progress() {
    progress_timer_.expires_after(std::chrono::seconds(1));
    progress_timer_.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      print_progress(false);
      arm_progress();
    });
  }

  void print_progress(bool last) {
    const bool tty = isatty(STDERR_FILENO) != 0;
    std::fprintf(stderr, "%s[bench serve] %zu/%zu done, %zu failed, %zu in flight, %.1f s%s",
                 tty ? "\r" : "", done_, records_.size(), failed_, in_flight_,
                 monotonic_seconds() - start_, tty && !last ? "" : "\n");
    std::fflush(stderr);
  }

  const BenchServeConfig& c_;
  std::string model_;
  asio::io_context io_;
  SseClient client_;
  asio::steady_timer arrival_timer_, progress_timer_;
  std::vector<double> offsets_;
  std::vector<std::string> bodies_;
  std::vector<RequestRecord> records_;
  std::deque<std::size_t> ready_;
  std::size_t next_ = 0, in_flight_ = 0, done_ = 0, failed_ = 0;
  double start_ = 0, last_end_ = 0;
};

}  // namespace

BenchServeResult run_bench_serve(const BenchServeConfig& c) {
  if (c.prompts.empty()) throw Error("bench serve: no prompts to send");
  validate(c.arrivals);
  BenchServeResult out;
  out.model = resolve_model(c.url, c.client, c.model);
  Runner runner(c, out.model);
  if (c.warmup) {
    const RequestRecord w = runner.warmup();
    if (!w.ok)
      throw Error("the warm-up request to " + c.url.str() + c.endpoint + " failed: " + w.error);
  }
  const double duration = runner.run();
  out.records = runner.take_records();
  out.summary = summarize(out.records, duration, c.slo);
  return out;
}

nlohmann::json result_json(const BenchServeConfig& c, const BenchServeResult& r) {
  nlohmann::json j = to_json(r.summary);
  j["backend"] = "openai";
  j["base_url"] = c.url.str();
  j["endpoint"] = c.endpoint;
  j["model_id"] = r.model;
  j["num_prompts"] = c.prompts.size();
  j["request_rate"] = std::isinf(c.arrivals.request_rate) ? nlohmann::json("inf")
                                                          : nlohmann::json(c.arrivals.request_rate);
  j["burstiness"] = c.arrivals.burstiness;
  j["max_concurrency"] =
      c.max_concurrency == 0 ? nlohmann::json(nullptr) : nlohmann::json(c.max_concurrency);
  j["seed"] = c.arrivals.seed;
  nlohmann::json in = nlohmann::json::array(), outl = nlohmann::json::array(),
                 ttfts = nlohmann::json::array(), e2els = nlohmann::json::array();
  for (const RequestRecord& rec : r.records) {
    in.push_back(rec.prompt_tokens);
    outl.push_back(rec.ok ? rec.output_tokens : 0);
    ttfts.push_back(rec.ok ? rec.ttft() : 0.0);
    e2els.push_back(rec.ok ? rec.e2e() : 0.0);
  }
  j["input_lens"] = in;
  j["output_lens"] = outl;
  j["ttfts"] = ttfts;
  j["e2els"] = e2els;
  return j;
}

}  // namespace folio::loadgen
