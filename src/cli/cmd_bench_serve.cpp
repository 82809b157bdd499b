// `folio bench serve [--base-url URL] [--num-prompts N] ...`: a serving load
// generator with `vllm bench serve`'s flags and metrics, for any
// OpenAI-compatible server (folio serve, llama-server, vLLM ...).
//
// Random token-id prompts (or a JSONL dataset) go to /v1/completions as
// streaming requests with ignore_eos, so every server generates exactly the
// requested lengths; arrivals follow --request-rate / --burstiness and at most
// --max-concurrency are in flight. Prints vLLM's result table (TTFT, TPOT, ITL,
// E2E latency, throughput, goodput) and optionally saves the JSON. The work
// lives in loadgen/ (see loadgen/bench_serve.h); this file maps flags.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/fd_limit.h"
#include "cli/commands.h"
#include "loadgen/bench_serve.h"
#include "loadgen/report.h"

namespace folio::cli {

namespace {

struct BenchServeArgs {
  std::string base_url, host, endpoint = "/v1/completions", model, dataset_path;
  int port = 0;
  long long num_prompts = 1000;  // signed, so "-3" is an error, not a huge size_t
  loadgen::RandomPromptConfig random;
  std::string token_range = "1000:10000";
  std::string request_rate = "inf";
  double burstiness = 1.0;
  int max_concurrency = 0;
  std::uint64_t seed = 0;
  std::vector<std::string> goodput;
  bool save_result = false, json = false, no_warmup = false, disable_progress = false;
  std::string result_dir, result_filename, api_key;
  double timeout_s = 600;
};

loadgen::HttpUrl url_of(const BenchServeArgs& a) {
  if (!a.base_url.empty() && (!a.host.empty() || a.port != 0))
    throw Error("give --base-url or --host/--port, not both");
  if (!a.base_url.empty()) return loadgen::parse_base_url(a.base_url);
  const std::string host = a.host.empty() ? "127.0.0.1" : a.host;
  return loadgen::parse_base_url("http://" + host + ":" + std::to_string(a.port ? a.port : 8000));
}

// "LO:HI" -> the random prompts' token id range.
void parse_token_range(const std::string& s, loadgen::RandomPromptConfig& r) {
  const std::size_t colon = s.find(':');
  try {
    std::size_t end_lo = 0, end_hi = 0;
    if (colon == std::string::npos) throw std::invalid_argument("no colon");
    r.token_lo = std::stoi(s.substr(0, colon), &end_lo);
    r.token_hi = std::stoi(s.substr(colon + 1), &end_hi);
    if (end_lo != colon || end_hi != s.size() - colon - 1) throw std::invalid_argument("junk");
  } catch (const std::exception&) {
    throw Error("--random-token-range: '" + s + "' is not LO:HI (e.g. 1000:10000)");
  }
}

std::string default_filename(const BenchServeArgs& a) {
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  std::string name = "folio-bench-serve-" + a.request_rate + "qps";
  if (a.max_concurrency > 0) name += "-concurrency" + std::to_string(a.max_concurrency);
  return name + "-" + stamp + ".json";
}

loadgen::BenchServeConfig to_config(const BenchServeArgs& a) {
  loadgen::BenchServeConfig c;
  c.url = url_of(a);
  if (a.endpoint.empty() || a.endpoint.front() != '/')
    throw Error("--endpoint must be a path starting with '/', e.g. /v1/completions");
  c.endpoint = a.endpoint;
  c.model = a.model;
  if (a.max_concurrency < 0) throw Error("--max-concurrency must be >= 1 (or 0: unlimited)");
  c.max_concurrency = static_cast<std::size_t>(a.max_concurrency);
  c.arrivals = {loadgen::parse_request_rate(a.request_rate), a.burstiness, a.seed};
  loadgen::validate(c.arrivals);
  c.slo = loadgen::parse_goodput(a.goodput);
  if (!(a.timeout_s > 0)) throw Error("--timeout must be > 0 seconds");
  c.client.idle_timeout_s = a.timeout_s;
  c.client.api_key = a.api_key;
  if (c.client.api_key.empty()) {
    if (const char* k = std::getenv("OPENAI_API_KEY")) c.client.api_key = k;
  }
  c.warmup = !a.no_warmup;
  c.progress = !a.disable_progress;
  loadgen::RandomPromptConfig r = a.random;
  if (a.num_prompts < 1) throw Error("--num-prompts must be at least 1");
  r.num_prompts = static_cast<std::size_t>(a.num_prompts);
  r.seed = a.seed;
  parse_token_range(a.token_range, r);
  loadgen::validate(r);
  c.prompts = a.dataset_path.empty()
                  ? loadgen::random_prompts(r)
                  : loadgen::dataset_prompts(a.dataset_path, r.num_prompts, r.output_len);
  if (c.prompts.size() < r.num_prompts)
    std::fprintf(stderr, "folio bench serve: %s holds %zu requests; sending those\n",
                 a.dataset_path.c_str(), c.prompts.size());
  return c;
}

void save(const nlohmann::json& j, const BenchServeArgs& a) {
  std::string path = a.result_filename.empty() ? default_filename(a) : a.result_filename;
  if (!a.result_dir.empty()) path = a.result_dir + "/" + path;
  std::ofstream out(path);
  if (!out) throw Error("--result-filename: cannot write " + path);
  out << j.dump(2) << "\n";
  std::fprintf(stderr, "folio bench serve: results saved to %s\n", path.c_str());
}

int bench_serve(const BenchServeArgs& a) {
  raise_open_file_limit();  // one socket per request in flight
  const loadgen::BenchServeConfig c = to_config(a);
  std::fprintf(stderr,
               "folio bench serve: %zu requests to %s%s, request rate %s, burstiness %g, "
               "max concurrency %s\n",
               c.prompts.size(), c.url.str().c_str(), c.endpoint.c_str(), a.request_rate.c_str(),
               a.burstiness,
               a.max_concurrency ? std::to_string(a.max_concurrency).c_str() : "unlimited");
  const loadgen::BenchServeResult r = loadgen::run_bench_serve(c);
  const std::string table = loadgen::format_table(
      r.summary,
      {a.request_rate, a.max_concurrency ? std::to_string(a.max_concurrency) : "unlimited"});
  std::fputs(table.c_str(), a.json ? stderr : stdout);
  for (const auto& [text, count] : r.summary.errors)
    std::fprintf(stderr, "folio bench serve: %zu request(s) failed: %s\n", count, text.c_str());
  if (r.summary.output_len_mismatches > 0)
    std::fprintf(stderr,
                 "folio bench serve: note: %zu request(s) generated a different number of "
                 "tokens than max_tokens (does the server honour ignore_eos?)\n",
                 r.summary.output_len_mismatches);
  const nlohmann::json j = loadgen::result_json(c, r);
  if (a.save_result || !a.result_filename.empty()) save(j, a);
  if (a.json) std::printf("%s\n", j.dump(2).c_str());
  return r.summary.completed > 0 ? 0 : 1;
}

void add_flags(CLI::App* sub, BenchServeArgs& a) {
  sub->add_option("--base-url", a.base_url,
                  "Server URL, http://HOST:PORT (default: http://127.0.0.1:8000)");
  sub->add_option("--host", a.host, "Server host (instead of --base-url; default 127.0.0.1)");
  sub->add_option("--port", a.port, "Server port (instead of --base-url; default 8000)")
      ->check(CLI::Range(1, 65535));
  sub->add_option("--endpoint", a.endpoint, "API path")->capture_default_str();
  sub->add_option("--model", a.model, "Model name to send (default: first id of GET /v1/models)");
  sub->add_option("--num-prompts", a.num_prompts, "Requests to send")->capture_default_str();
  sub->add_option("--random-input-len", a.random.input_len, "Prompt tokens per random request")
      ->capture_default_str();
  sub->add_option("--random-output-len", a.random.output_len, "Output tokens per request")
      ->capture_default_str();
  sub->add_option("--random-range-ratio", a.random.range_ratio,
                  "Lengths drawn uniformly in [len*(1-r), len*(1+r)]")
      ->capture_default_str();
  sub->add_option("--random-token-range", a.token_range,
                  "LO:HI, token ids of random prompts (ordinary tokens of the vocabulary)")
      ->capture_default_str();
  sub->add_option("--dataset-path", a.dataset_path,
                  "JSONL requests ({\"prompt\": text or ids, \"max_tokens\": n}) instead");
  sub->add_option("--request-rate", a.request_rate, "Requests/s, or inf: all at once")
      ->capture_default_str();
  sub->add_option("--burstiness", a.burstiness,
                  "Gamma shape of the arrival gaps (1: Poisson; <1 burstier)")
      ->capture_default_str();
  sub->add_option("--max-concurrency", a.max_concurrency, "Most requests in flight (0: unlimited)")
      ->capture_default_str();
  sub->add_option("--seed", a.seed, "Seed of prompts and arrivals")->capture_default_str();
  sub->add_option("--goodput", a.goodput, "SLOs, e.g. ttft:200 tpot:50 e2el:2000 (ms)");
  sub->add_flag("--save-result", a.save_result, "Save the result JSON to a file");
  sub->add_option("--result-dir", a.result_dir, "Folder of the saved result");
  sub->add_option("--result-filename", a.result_filename, "File name of the saved result");
  sub->add_flag("--json", a.json, "Print the result JSON on stdout (the table goes to stderr)");
  sub->add_option("--api-key", a.api_key, "Sent as 'Authorization: Bearer KEY' ($OPENAI_API_KEY)");
  sub->add_flag("--no-warmup", a.no_warmup, "Skip the untimed warm-up request");
  sub->add_flag("--disable-tqdm,--disable-progress", a.disable_progress, "No progress on stderr");
  sub->add_option("--timeout", a.timeout_s, "Seconds a request may wait on the socket")
      ->capture_default_str();
}

}  // namespace

Command register_bench_serve(CLI::App& app) {
  CLI::App* bench = app.get_subcommand("bench");
  auto* sub = bench->add_subcommand(
      "serve", "Load-test an OpenAI-compatible server (vllm bench serve's flags and metrics)");
  auto a = std::make_shared<BenchServeArgs>();
  add_flags(sub, *a);
  return {sub, [a]() { return bench_serve(*a); }};
}

}  // namespace folio::cli
