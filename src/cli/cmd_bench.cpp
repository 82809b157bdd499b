// `folio bench [-m MODEL] [-p 512] [-n 128] [-t 2] [-r 5] [--json]`: prompt
// processing and text generation speed, in the spirit of llama-bench.
//
//   ppN: one forward of N prompt tokens in a single batch on an empty cache
//        (logits for the last token only): N / time.
//   tgN: N forwards of one token each, starting from an empty cache: N / time.
// Tokens are pseudo-random ids (fixed seed), as llama-bench uses. One warm-up
// run precedes the `-r` timed repetitions; reported: mean ± sd of tokens/s.
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/timer.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "cli/engine_flags.h"
#include "cli/model_file.h"
#include "gguf/gguf_file.h"
#include "kernels/thread_pool.h"
#include "model/contiguous_kv_cache.h"
#include "model/model.h"

namespace folio::cli {

namespace {

struct BenchArgs {
  std::string model;
  int n_prompt = 512;
  int n_gen = 128;
  int threads = 2;
  int reps = 5;
  std::string precision = "fast";
  int activation_bits = 16;
  bool json = false;
};

struct Stats {
  double mean = 0, sd = 0;
  std::vector<double> samples;  // tokens/s
};

Stats stats(std::vector<double> s) {
  Stats r;
  for (double v : s) r.mean += v;
  r.mean /= static_cast<double>(s.size());
  for (double v : s) r.sd += (v - r.mean) * (v - r.mean);
  r.sd = s.size() > 1 ? std::sqrt(r.sd / static_cast<double>(s.size() - 1)) : 0.0;
  r.samples = std::move(s);
  return r;
}

class Bench {
 public:
  Bench(const model::Model& m, int threads) : m_(m), pool_(threads), rng_(1234) {}

  // Seconds for one prefill of n tokens.
  double prompt(int n) {
    model::ContiguousKvCache kv(m_.config(), 1, static_cast<std::size_t>(n));
    model::Batch b;
    for (int i = 0; i < n; ++i) b.add(random_token(), i, 0, i + 1 == n);
    Stopwatch t;
    m_.forward(b, kv, ws_, pool_);
    return t.seconds();
  }

  // Seconds for n single-token forwards.
  double generate(int n) {
    model::ContiguousKvCache kv(m_.config(), 1, static_cast<std::size_t>(n));
    model::Batch b;
    Stopwatch t;
    for (int i = 0; i < n; ++i) {
      b.clear();
      b.add(random_token(), i, 0, true);
      m_.forward(b, kv, ws_, pool_);
    }
    return t.seconds();
  }

 private:
  TokenId random_token() { return static_cast<TokenId>(rng_() % m_.n_vocab()); }

  const model::Model& m_;
  kernels::ThreadPool pool_;
  model::Workspace ws_;
  std::mt19937_64 rng_;
};

// Warm-up + `reps` timed runs of `fn(n)`; tokens/s samples.
template <class F>
Stats measure(int n, int reps, F&& fn) {
  fn(n);
  std::vector<double> s;
  for (int r = 0; r < reps; ++r) s.push_back(n / fn(n));
  return stats(std::move(s));
}

int bench(const BenchArgs& a) {
  if (a.n_prompt < 0 || a.n_gen < 0 || a.reps < 1 || a.threads < 1) {
    throw Error("bench: -p and -n must be >= 0, -r and -t >= 1");
  }
  const auto file = open_model_file(resolve_model_path(a.model));
  Stopwatch load;
  const model::Model m = model::Model::load(
      file,
      {model::parse_precision(a.precision), kernels::parse_activation_bits(a.activation_bits)});
  const double load_s = load.seconds();
  Bench b(m, a.threads);

  nlohmann::ordered_json out;
  out["model"] = file.source();
  out["arch"] = m.config().arch;
  out["precision"] = model::precision_name(m.precision());
  out["activation_bits"] = static_cast<int>(m.activation_bits());
  out["threads"] = a.threads;
  out["repetitions"] = a.reps;
  out["load_s"] = load_s;
  out["results"] = nlohmann::ordered_json::array();
  auto add = [&](const std::string& test, const Stats& s) {
    out["results"].push_back(
        {{"test", test}, {"tokens_per_s", s.mean}, {"sd", s.sd}, {"samples", s.samples}});
    if (!a.json) {
      std::printf("| %-8s | %-5s | %3d | %2d | %10.2f ± %7.2f t/s |\n", test.c_str(),
                  std::string(model::precision_name(m.precision())).c_str(),
                  static_cast<int>(m.activation_bits()), a.threads, s.mean, s.sd);
      std::fflush(stdout);
    }
  };
  if (!a.json) {
    std::printf(
        "model: %s (%s), load %.2f s\n| test     | prec  | act |  t |  tokens/s              |\n",
        file.source().c_str(), m.config().arch.c_str(), load_s);
  }
  if (a.n_prompt > 0) {
    add("pp" + std::to_string(a.n_prompt),
        measure(a.n_prompt, a.reps, [&](int n) { return b.prompt(n); }));
  }
  if (a.n_gen > 0) {
    add("tg" + std::to_string(a.n_gen),
        measure(a.n_gen, a.reps, [&](int n) { return b.generate(n); }));
  }
  if (a.json) std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

}  // namespace

Command register_bench(CLI::App& app) {
  auto* sub = app.add_subcommand("bench", "Measure prompt (pp) and generation (tg) tokens/s");
  auto a = std::make_shared<BenchArgs>();
  sub->add_option("-m,--model", a->model,
                  "GGUF file or HF checkpoint directory (default: the default model)");
  sub->add_option("-p,--n-prompt", a->n_prompt, "Prompt tokens per pp run (0: skip)")
      ->capture_default_str();
  sub->add_option("-n,--n-gen", a->n_gen, "Tokens per tg run (0: skip)")->capture_default_str();
  sub->add_option("-t,--threads", a->threads, "Threads")->capture_default_str();
  sub->add_option("-r,--repetitions", a->reps, "Timed repetitions")->capture_default_str();
  sub->add_option("--precision", a->precision, "fast or ref")->capture_default_str();
  add_activation_bits_flag(sub, a->activation_bits);
  sub->add_flag("--json", a->json, "Print the results as JSON");
  return {sub, [a]() { return bench(*a); }};
}

}  // namespace folio::cli
