// `folio bench throughput [-m MODEL] [engine flags] ...`: the paged engine's
// benchmarks (issue #4, section 6), all through engine::LLMEngine:
//
//  1. throughput: N requests (random token prompts of --input-len /
//     --output-len, each varied by --range-ratio as vLLM's random dataset, or
//     --dataset FILE with generate's JSONL), in three modes on the same
//     requests: continuous (paged KV + continuous batching), static (batches
//     of --static-batch-size run to completion before the next starts) and
//     serial (one request at a time). Reports requests/s, output tokens/s,
//     total tokens/s.
//  2. --kv-efficiency: a mixed-length load on a KV pool of --kv-seqs
//     max-model-len sequences: share of allocated slots holding live tokens
//     (mean over steps) and peak concurrent sequences vs what contiguous
//     max-model-len allocation would fit.
//  3. --prefix-ttft: TTFT of requests sharing a --prefix-len token system
//     prompt, cold (no prefix caching) vs warm (cache primed).
//  4. --decode-concurrency 1,8,32: aggregate decode tokens/s with that many
//     sequences of --decode-input prompt + --decode-output generated tokens.
// Output lengths are exact (ignore_eos), so modes are compared on equal work.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/timer.h"
#include "cli/commands.h"
#include "cli/count_list.h"
#include "cli/default_model.h"
#include "cli/engine_flags.h"

namespace folio::cli {

namespace {

struct ThroughputArgs {
  std::string model, dataset, modes = "continuous,static,serial";
  int num_prompts = 16, input_len = 64, output_len = 32, static_batch = 8;
  double range_ratio = 0.5;
  unsigned seed = 0;
  bool kv_efficiency = false, prefix_ttft = false, json_out = false;
  int prefix_len = 1000, kv_seqs = 4;
  std::string decode_concurrency;  // e.g. "1,8,32"
  int decode_input = 128, decode_output = 128;
  EngineFlags engine;
};

struct Job {
  std::vector<TokenId> prompt;
  std::int32_t max_tokens;
};

struct Ctx {
  const ThroughputArgs& a;
  const EngineModel& m;
  nlohmann::json report;
};

std::vector<TokenId> random_tokens(std::mt19937& rng, std::size_t n, std::size_t vocab) {
  // Ordinary tokens only: stay clear of the special ids at both ends.
  std::uniform_int_distribution<TokenId> d(1000, static_cast<TokenId>(vocab) - 1000);
  std::vector<TokenId> t(n);
  for (auto& x : t) x = d(rng);
  return t;
}

int vary(std::mt19937& rng, int len, double ratio) {
  const int lo = std::max(1, static_cast<int>(len * (1 - ratio)));
  const int hi = std::max(lo, static_cast<int>(len * (1 + ratio)));
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

std::vector<Job> random_jobs(const Ctx& c, int n, int in, int out, double ratio) {
  std::mt19937 rng(c.a.seed);
  std::vector<Job> jobs;
  for (int i = 0; i < n; ++i) {
    const int li = vary(rng, in, ratio), lo = vary(rng, out, ratio);
    jobs.push_back({random_tokens(rng, static_cast<std::size_t>(li), c.m.model.n_vocab()), lo});
  }
  return jobs;
}

std::vector<Job> dataset_jobs(const Ctx& c) {
  std::ifstream in(c.a.dataset);
  if (!in) throw Error("cannot open --dataset " + c.a.dataset);
  std::vector<Job> jobs;
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      const auto j = nlohmann::json::parse(line);
      Job job;
      job.max_tokens = j.value("max_tokens", 16);
      if (j.at("prompt").is_string()) {
        job.prompt = c.m.tok.encode(j["prompt"].get<std::string>(), {.add_special = true});
      } else {
        job.prompt = j["prompt"].get<std::vector<TokenId>>();
      }
      jobs.push_back(std::move(job));
    } catch (const std::exception& e) {
      throw Error("--dataset line " + std::to_string(no) + ": " + e.what());
    }
  }
  return jobs;
}

sampling::SamplingParams fixed_length(std::int32_t max_tokens) {
  sampling::SamplingParams p;
  p.temperature = 0;
  p.max_tokens = max_tokens;
  p.ignore_eos = true;
  return p;
}

std::unique_ptr<EngineStack> make_engine(const Ctx& c, const engine::EngineConfig& cfg) {
  return std::make_unique<EngineStack>(c.m, c.a.engine, cfg);
}

engine::EngineRequest fixed_request(std::uint64_t& next_id, std::vector<TokenId> prompt,
                                    std::int32_t max_tokens) {
  engine::EngineRequest r;
  r.id = engine::RequestId{next_id++};
  r.prompt = std::move(prompt);
  r.params = fixed_length(max_tokens);
  return r;
}

// Runs jobs [begin, end) to completion on `e`.
void run_jobs(engine::LLMEngine& e, const std::vector<Job>& jobs, std::size_t begin,
              std::size_t end, std::uint64_t& next_id) {
  for (std::size_t i = begin; i < end; ++i)
    e.add_request(fixed_request(next_id, jobs[i].prompt, jobs[i].max_tokens));
  e.run_until_idle();
}

void print_stages(const char* what, const engine::EngineStats& s) {
  std::printf("%s stage seconds:", what);
  for (const auto& [name, secs] : s.stage.named()) std::printf(" %s %.2fs", name.c_str(), secs);
  std::printf("\n");
}

void throughput(Ctx& c) {
  const auto jobs = c.a.dataset.empty() ? random_jobs(c, c.a.num_prompts, c.a.input_len,
                                                      c.a.output_len, c.a.range_ratio)
                                        : dataset_jobs(c);
  std::int64_t in_tokens = 0, out_tokens = 0;
  for (const Job& j : jobs) {
    in_tokens += static_cast<std::int64_t>(j.prompt.size());
    out_tokens += j.max_tokens;
  }
  std::printf("\n== throughput: %zu requests, %lld prompt + %lld output tokens ==\n", jobs.size(),
              static_cast<long long>(in_tokens), static_cast<long long>(out_tokens));
  std::printf("%-11s %10s %10s %12s %12s %8s\n", "mode", "seconds", "req/s", "output t/s",
              "total t/s", "steps");
  const engine::EngineConfig cfg = to_engine_config(c.a.engine);
  engine::EngineStats continuous;
  std::stringstream modes(c.a.modes);
  for (std::string mode; std::getline(modes, mode, ',');) {
    auto e = make_engine(c, cfg);
    std::uint64_t id = 1;
    Stopwatch sw;
    if (mode == "continuous") {
      run_jobs(e->core, jobs, 0, jobs.size(), id);
    } else if (mode == "static" || mode == "serial") {
      const std::size_t b = mode == "serial" ? 1 : static_cast<std::size_t>(c.a.static_batch);
      for (std::size_t i = 0; i < jobs.size(); i += b)
        run_jobs(e->core, jobs, i, std::min(jobs.size(), i + b), id);
    } else {
      throw Error("--modes: unknown mode '" + mode + "' (continuous, static, serial)");
    }
    const double s = sw.seconds();
    const auto st = e->core.stats();
    if (mode == "continuous") continuous = st;
    std::printf("%-11s %10.2f %10.3f %12.1f %12.1f %8llu\n", mode.c_str(), s, jobs.size() / s,
                out_tokens / s, (in_tokens + out_tokens) / s,
                static_cast<unsigned long long>(st.num_steps));
    c.report["throughput"][mode] = {{"seconds", s},
                                    {"requests_per_s", jobs.size() / s},
                                    {"output_tokens_per_s", out_tokens / s},
                                    {"total_tokens_per_s", (in_tokens + out_tokens) / s},
                                    {"steps", st.num_steps}};
    if (const std::string spec = spec_summary(st); !spec.empty()) {
      std::printf("            %s\n", spec.c_str());
      c.report["throughput"][mode]["speculative"] = spec;
    }
    std::fflush(stdout);
  }
  if (continuous.num_steps > 0) print_stages("continuous", continuous);
}

void kv_efficiency(Ctx& c) {
  engine::EngineConfig cfg = to_engine_config(c.a.engine);
  if (cfg.max_model_len <= 0) cfg.max_model_len = 1024;
  const std::int64_t per_block = static_cast<std::int64_t>(engine::PagedKvCache::bytes_per_block(
      c.m.model.config(), cfg.block_size, cfg.kv_cache_dtype));
  const std::int64_t blocks_per_seq = (cfg.max_model_len + cfg.block_size - 1) / cfg.block_size;
  cfg.kv_cache_memory = per_block * blocks_per_seq * c.a.kv_seqs;
  auto e = make_engine(c, cfg);
  // Mixed lengths: prompts 1/16 .. 1/4 of max-model-len, outputs short.
  const auto jobs = random_jobs(c, c.a.num_prompts * 2, cfg.max_model_len / 8, 16, 0.8);
  std::uint64_t id = 1;
  for (const Job& j : jobs) e->core.add_request(fixed_request(id, j.prompt, j.max_tokens));
  double eff_sum = 0, eff_min = 1;
  int samples = 0, peak = 0;
  while (e->core.step()) {
    const auto s = e->core.stats();
    peak = std::max(peak, s.num_running);
    if (s.kv_allocated_slots == 0) continue;
    const double eff = static_cast<double>(s.kv_live_tokens) / s.kv_allocated_slots;
    eff_sum += eff;
    eff_min = std::min(eff_min, eff);
    ++samples;
  }
  const std::int64_t slots = static_cast<std::int64_t>(e->core.num_kv_blocks()) * cfg.block_size;
  const std::int64_t contiguous = slots / cfg.max_model_len;
  std::printf(
      "\n== KV efficiency: %zu mixed-length requests, %d blocks x %d = %lld slots, "
      "max-model-len %d ==\n",
      jobs.size(), e->core.num_kv_blocks(), cfg.block_size, static_cast<long long>(slots),
      cfg.max_model_len);
  std::printf("live/allocated slots: mean %.1f%%, min %.1f%% over %d steps\n",
              100 * eff_sum / std::max(samples, 1), 100 * eff_min, samples);
  std::printf(
      "peak concurrent sequences: paged %d vs contiguous max-model-len %lld (%.1fx); "
      "preemptions %lld\n",
      peak, static_cast<long long>(contiguous),
      static_cast<double>(peak) / static_cast<double>(std::max<std::int64_t>(contiguous, 1)),
      static_cast<long long>(e->core.stats().num_preemptions));
  c.report["kv_efficiency"] = {{"mean_live_over_allocated", eff_sum / std::max(samples, 1)},
                               {"min_live_over_allocated", eff_min},
                               {"peak_sequences", peak},
                               {"contiguous_sequences", contiguous}};
  std::fflush(stdout);
}

// Mean TTFT of `k` requests (shared prefix + distinct suffix), one at a time.
double mean_ttft(engine::LLMEngine& e, const std::vector<TokenId>& prefix, std::mt19937& rng, int k,
                 std::uint64_t& id, std::size_t vocab) {
  double sum = 0;
  for (int i = 0; i < k; ++i) {
    auto p = prefix;
    const auto tail = random_tokens(rng, 16, vocab);
    p.insert(p.end(), tail.begin(), tail.end());
    auto ch = e.add_request(fixed_request(id, p, 1));
    e.run_until_idle();
    const engine::RequestOutput last = ch->drain().back();
    FOLIO_CHECK(last.finished && last.timing.has_value(), "a finished request carries its timing");
    sum += last.timing->queued_s + last.timing->prefill_s;  // arrival -> first token
  }
  return sum / k;
}

void prefix_ttft(Ctx& c) {
  std::mt19937 rng(c.a.seed + 1);
  const std::size_t vocab = c.m.model.n_vocab();
  const auto prefix = random_tokens(rng, static_cast<std::size_t>(c.a.prefix_len), vocab);
  engine::EngineConfig cfg = to_engine_config(c.a.engine);
  std::uint64_t id = 1;
  cfg.enable_prefix_caching = false;
  auto cold = make_engine(c, cfg);
  const double t_cold = mean_ttft(cold->core, prefix, rng, 2, id, vocab);
  cfg.enable_prefix_caching = true;
  auto warm = make_engine(c, cfg);
  mean_ttft(warm->core, prefix, rng, 1, id, vocab);  // primes the cache
  const double t_warm = mean_ttft(warm->core, prefix, rng, 3, id, vocab);
  std::printf("\n== prefix caching: %d-token shared prefix + 16-token suffix ==\n", c.a.prefix_len);
  std::printf("TTFT cold %.1f ms, warm %.1f ms (%.1fx lower); hit %lld of %lld tokens\n",
              1e3 * t_cold, 1e3 * t_warm, t_cold / t_warm,
              static_cast<long long>(warm->core.stats().prefix_cache_hits),
              static_cast<long long>(warm->core.stats().prefix_cache_queries));
  c.report["prefix_ttft"] = {{"cold_s", t_cold}, {"warm_s", t_warm}};
  std::fflush(stdout);
}

void decode_concurrency(Ctx& c, const std::vector<int>& counts) {
  std::printf("\n== aggregate decode: %d prompt + %d generated tokens per sequence ==\n",
              c.a.decode_input, c.a.decode_output);
  std::printf("%-6s %12s %12s %12s\n", "seqs", "decode t/s", "prefill s", "decode s");
  for (const int n : counts) {
    const auto jobs = random_jobs(c, n, c.a.decode_input, c.a.decode_output, 0.0);
    engine::EngineConfig cfg = to_engine_config(c.a.engine);
    cfg.max_num_seqs = std::max(cfg.max_num_seqs, n);
    auto e = make_engine(c, cfg);
    std::uint64_t id = 1;
    for (const Job& j : jobs) e->core.add_request(fixed_request(id, j.prompt, j.max_tokens));
    Stopwatch sw;
    double t_first = -1;
    std::uint64_t tokens_first = 0;
    while (e->core.step()) {
      const auto s = e->core.stats();
      if (t_first < 0 && s.num_generated_tokens >= static_cast<std::uint64_t>(n)) {
        t_first = sw.seconds();  // every sequence has its first token: decode from here
        tokens_first = s.num_generated_tokens;
      }
    }
    const double total = sw.seconds();
    const double decode_s = total - t_first;
    const double tps =
        (e->core.stats().num_generated_tokens - tokens_first) / std::max(decode_s, 1e-9);
    std::printf("%-6d %12.1f %12.2f %12.2f\n", n, tps, t_first, decode_s);
    c.report["decode"][std::to_string(n)] = {
        {"decode_tokens_per_s", tps}, {"prefill_s", t_first}, {"decode_s", decode_s}};
    std::fflush(stdout);
  }
}

int bench_throughput(const ThroughputArgs& a) {
  // Flags are checked before the model loads.
  const std::vector<int> counts =
      a.decode_concurrency.empty()
          ? std::vector<int>{}
          : parse_count_list("--decode-concurrency", a.decode_concurrency, "sequence count");
  const auto m = load_engine_model(resolve_model_path(a.model), a.engine);
  Ctx c{a, *m, nlohmann::json::object()};
  print_engine_summary(*make_engine(*m, a.engine));
  if (!a.modes.empty()) throughput(c);
  if (a.kv_efficiency) kv_efficiency(c);
  if (a.prefix_ttft) prefix_ttft(c);
  if (!counts.empty()) decode_concurrency(c, counts);
  if (a.json_out) std::printf("%s\n", c.report.dump(2).c_str());
  return 0;
}

}  // namespace

Command register_bench_throughput(CLI::App& app) {
  CLI::App* bench = app.get_subcommand("bench");
  auto* sub = bench->add_subcommand("throughput",
                                    "Paged engine: throughput by batching mode, KV efficiency, "
                                    "prefix-cache TTFT, decode concurrency");
  auto a = std::make_shared<ThroughputArgs>();
  sub->add_option("-m,--model", a->model,
                  "GGUF file or HF checkpoint directory (default: the default model)");
  sub->add_option("-n,--num-prompts", a->num_prompts, "Requests")->capture_default_str();
  sub->add_option("--input-len", a->input_len, "Prompt tokens per request")->capture_default_str();
  sub->add_option("--output-len", a->output_len, "Output tokens per request")
      ->capture_default_str();
  sub->add_option("--range-ratio", a->range_ratio,
                  "Lengths vary uniformly in [len*(1-r), len*(1+r)]")
      ->capture_default_str();
  sub->add_option("--dataset", a->dataset, "JSONL requests ({prompt, max_tokens}) instead");
  sub->add_option("--modes", a->modes, "Comma list of continuous, static, serial ('' skips)")
      ->capture_default_str();
  sub->add_option("--static-batch-size", a->static_batch, "Batch size of the static mode")
      ->capture_default_str();
  sub->add_option("--seed", a->seed, "Random seed of the prompts")->capture_default_str();
  sub->add_flag("--kv-efficiency", a->kv_efficiency, "Run the KV efficiency measurement");
  sub->add_option("--kv-seqs", a->kv_seqs, "KV pool size in max-model-len sequences")
      ->capture_default_str();
  sub->add_flag("--prefix-ttft", a->prefix_ttft, "Run the prefix-caching TTFT measurement");
  sub->add_option("--prefix-len", a->prefix_len, "Shared prefix tokens")->capture_default_str();
  sub->add_option("--decode-concurrency", a->decode_concurrency,
                  "Comma list of concurrent sequences for aggregate decode, e.g. 1,8,32");
  sub->add_option("--decode-input", a->decode_input, "Prompt tokens per decode sequence")
      ->capture_default_str();
  sub->add_option("--decode-output", a->decode_output, "Generated tokens per decode sequence")
      ->capture_default_str();
  sub->add_flag("--json", a->json_out, "Also print the results as JSON");
  add_engine_flags(sub, a->engine);
  return {sub, [a]() { return bench_throughput(*a); }};
}

}  // namespace folio::cli
