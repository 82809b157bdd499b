// loadgen/bench_serve.h: the `folio bench serve` runner.
//
// Sends each prompt to an OpenAI-compatible endpoint as a streaming request
// ({prompt, max_tokens, stream, stream_options.include_usage, ignore_eos,
// temperature 0}) at the times of an open-loop arrival schedule, never more
// than max_concurrency in flight (a request that arrives while the limit is
// reached waits, and its latency starts when it is sent, as in vLLM). All
// requests run on one io_context thread (the caller's). Prints progress on
// stderr about once a second.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "loadgen/arrivals.h"
#include "loadgen/latency_stats.h"
#include "loadgen/prompts.h"
#include "loadgen/sse_client.h"

namespace folio::loadgen {

struct BenchServeConfig {
  HttpUrl url;
  std::string endpoint = "/v1/completions";  // or /v1/chat/completions (text prompts only)
  std::string model;                         // "": the first id of GET /v1/models
  std::vector<Prompt> prompts;
  ArrivalConfig arrivals;
  std::size_t max_concurrency = 0;  // 0: unlimited
  Slo slo;
  ClientOptions client;
  bool warmup = true;    // one untimed request (the first prompt) before the run
  bool progress = true;  // completed/total on stderr
};

struct BenchServeResult {
  std::vector<RequestRecord> records;  // in prompt order
  Summary summary;
  std::string model;
};

// The model id to send: `requested`, else the first one the server lists.
std::string resolve_model(const HttpUrl& url, const ClientOptions& opt,
                          const std::string& requested);

// The JSON request body for one prompt.
std::string request_body(const BenchServeConfig& c, const std::string& model, const Prompt& p);

// Runs the benchmark. Throws folio::Error when the warm-up request fails (the
// server is unreachable or rejects the requests); failures during the run are
// counted, not thrown.
BenchServeResult run_bench_serve(const BenchServeConfig& c);

// to_json(summary) plus the run's configuration and per-request arrays
// (input_lens, output_lens, ttfts, e2els in seconds, as vLLM saves them).
nlohmann::json result_json(const BenchServeConfig& c, const BenchServeResult& r);

}  // namespace folio::loadgen
