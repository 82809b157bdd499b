// `folio perplexity [-m MODEL] -f TEXT_FILE [--ctx-size 512] [--chunks N] ...`:
// the perplexity of a model on a text, by llama.cpp's llama-perplexity
// protocol (tools/perplexity/perplexity.cpp, `perplexity()`), so the numbers
// compare with that tool's.
//
//   tokens = tokenize(whole file, BOS added as the vocabulary asks)
//   chunk i = tokens[i*ctx, (i+1)*ctx), i < min(--chunks, n_tokens / ctx)
//   per chunk: first token -> BOS (when the vocabulary adds one); an empty
//   KV cache; forward in steps of at most --batch-size tokens; logits only
//   for the rows scored:
//
//     position   0 ........ first-1 | first ......... ctx-2 | ctx-1
//     scored     no (context only)  | NLL of token j+1     | no (nothing follows)
//                                     under row j
//     first = ctx/2, so ctx/2 - 1 tokens per chunk
//
//   NLL = logsumexp(row) - row[target], in f64; PPL = exp(mean NLL); the
//   uncertainty is llama.cpp's: PPL * sqrt((mean(NLL^2) - mean(NLL)^2) / (n - 1)).
//
// One departure: a text of at least ctx tokens is enough (llama-perplexity
// asks for 2 x ctx). --attention-window W --attention-sinks S put every
// token under that sink + window policy (base/attention_window.h).
//
// stdout: "[1]12.3456,[2]..." (running PPL after each chunk) and
// "Final estimate: PPL = X +/- U", or one JSON object with --json. Progress
// (tokens/s, ETA) and the load line go to stderr. Memory is bounded by the
// KV cache (ctx positions) and one step's logits (<= --batch-size rows), so a
// 20,480-token chunk runs like a 512-token one, only longer.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "base/attention_window.h"
#include "base/error.h"
#include "base/timer.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "cli/engine_flags.h"
#include "gguf/gguf_file.h"
#include "kernels/kv_row.h"
#include "kernels/thread_pool.h"
#include "model/contiguous_kv_cache.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace folio::cli {

namespace {

struct PerplexityArgs {
  std::string model;
  std::string file;
  int ctx = 512;
  std::optional<int> chunks;  // unset: every whole chunk of the text
  int batch = 512;
  int threads = 0;  // 0: all cores
  std::string kv_cache_dtype = "f32";
  std::string precision = "fast";
  int activation_bits = 16;
  int window = 0;  // --attention-window; 0: full attention
  int sinks = -1;  // --attention-sinks; -1: the default (to_attention_window)
  bool json = false;
};

void validate(const PerplexityArgs& a) {
  if (a.file.empty()) throw Error("perplexity: -f/--file TEXT_FILE is required");
  if (a.ctx < 16 || a.ctx % 2 != 0)
    throw Error("--ctx-size must be even and >= 16 (got " + std::to_string(a.ctx) + ")");
  if (a.chunks && *a.chunks < 1)
    throw Error("--chunks must be >= 1 (got " + std::to_string(*a.chunks) + ")");
  if (a.batch < 1) throw Error("--batch-size must be >= 1 (got " + std::to_string(a.batch) + ")");
  if (a.threads < 0) throw Error("-t/--threads must be >= 0");
}

// The whole file as bytes; an error naming the file and the reason otherwise.
std::string read_text_file(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw Error("cannot open text file " + path + ": " + std::strerror(errno));
  std::string data;
  char buf[1 << 16];
  for (;;) {
    const std::size_t n = std::fread(buf, 1, sizeof buf, f.get());
    data.append(buf, n);
    if (n < sizeof buf) {
      if (std::ferror(f.get()))
        throw Error("cannot read text file " + path + ": " + std::strerror(errno));
      return data;
    }
  }
}

// Sums of the NLLs and of their squares (llama.cpp's nll, nll2), in f64.
struct NllSums {
  double nll = 0, nll2 = 0;
  std::size_t count = 0;

  void add(double v) {
    nll += v;
    nll2 += v * v;
    ++count;
  }
  double ppl() const { return std::exp(nll / static_cast<double>(count)); }
  // llama.cpp's "+/-": the standard error of the mean NLL, times the PPL.
  double uncertainty() const {
    const double n = static_cast<double>(count);
    const double mean = nll / n;
    const double var = nll2 / n - mean * mean;
    return var > 0 && count > 1 ? std::sqrt(var / (n - 1)) * ppl() : 0.0;
  }
};

// -log softmax(row)[target], with a log-sum-exp in f64.
double row_nll(std::span<const float> row, TokenId target) {
  const double max = *std::max_element(row.begin(), row.end());
  double sum = 0;
  for (const float x : row) sum += std::exp(static_cast<double>(x) - max);
  return max + std::log(sum) - static_cast<double>(row[static_cast<std::size_t>(target)]);
}

// "1h02m", "3m05s", "42s".
std::string duration(double s) {
  const long t = std::lround(std::max(s, 0.0));
  char buf[32];
  if (t >= 3600) {
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, t / 60 % 60);
  } else if (t >= 60) {
    std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lds", t);
  }
  return buf;
}

// Progress lines on stderr: after the first forward step, then at most every
// 10 seconds, and at the end.
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total) {}

  void advance(std::size_t tokens) {
    done_ += tokens;
    const double s = clock_.seconds();
    if (printed_ && s - last_ < 10.0 && done_ < total_) return;
    const double rate = static_cast<double>(done_) / std::max(s, 1e-9);
    std::fprintf(stderr, "folio: perplexity: %zu/%zu tokens (%.1f%%), %.1f t/s, %s, ETA %s\n",
                 done_, total_, 100.0 * static_cast<double>(done_) / static_cast<double>(total_),
                 rate, duration(s).c_str(),
                 duration(static_cast<double>(total_ - done_) / std::max(rate, 1e-9)).c_str());
    printed_ = true;
    last_ = s;
  }
  double seconds() const { return clock_.seconds(); }

 private:
  std::size_t total_, done_ = 0;
  Stopwatch clock_;
  double last_ = 0;
  bool printed_ = false;
};

// What one run needs besides the arguments: the model, its scratch and the cache.
struct Evaluator {
  const model::Model& m;
  model::ContiguousKvCache& kv;
  model::Workspace& ws;
  kernels::ThreadPool& pool;
  AttentionWindow window;
  std::size_t batch;
};

// Runs one chunk (its first token already BOS when the vocabulary adds one)
// on an emptied cache and adds the NLLs of its scored tokens to `sums`.
void score_chunk(Evaluator& e, std::span<const TokenId> chunk, NllSums& sums, Progress& progress) {
  const std::size_t ctx = chunk.size();
  const std::size_t first = ctx / 2;  // rows first .. ctx-2 are scored
  const std::size_t n_vocab = e.m.n_vocab();
  e.kv.truncate(0, 0);  // an empty cache: the chunk sees nothing before it
  model::Batch b;
  std::vector<double> nll;
  for (std::size_t start = 0; start < ctx; start += e.batch) {
    const std::size_t end = std::min(ctx, start + e.batch);
    b.clear();
    for (std::size_t p = start; p < end; ++p) {
      const bool scored = p >= first && p + 1 < ctx;
      b.add(chunk[p], static_cast<std::int32_t>(p), 0, scored, e.window);
    }
    const std::span<const float> logits = e.m.forward(b, e.kv, e.ws, e.pool);
    // Logits rows are the consecutive positions row0, row0 + 1, ...
    const std::size_t rows = b.logit_rows.size(), row0 = std::max(start, first);
    nll.assign(rows, 0.0);
    e.pool.parallel_for(rows, [&](std::size_t r0, std::size_t r1, int) {
      for (std::size_t r = r0; r < r1; ++r)
        nll[r] = row_nll(logits.subspan(r * n_vocab, n_vocab), chunk[row0 + r + 1]);
    });
    for (const double v : nll) sums.add(v);  // in order: the sum does not depend on threads
    progress.advance(end - start);
  }
}

int default_threads() {
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

// The text's tokens as llama.cpp's common_tokenize(ctx, text, add_special =
// true) makes them: BOS first when the vocabulary adds one; control-token
// text is not parsed.
std::vector<TokenId> tokenize_text(const tokenizer::Tokenizer& tok, const std::string& text) {
  if (tok.vocab().add_eos())
    throw Error("perplexity: the vocabulary appends EOS to every text (llama.cpp refuses too)");
  return tok.encode(text, {.add_special = true, .parse_special = false});
}

struct Result {
  NllSums sums;
  std::vector<double> running;  // PPL after each chunk
  double seconds = 0;
};

// Scores chunks 0 .. n_chunks-1 of `tokens`; `bos` replaces each chunk's
// first token unless it is -1. Prints the running PPL to stdout unless `quiet`.
Result evaluate(Evaluator& e, std::span<const TokenId> tokens, std::size_t ctx,
                std::size_t n_chunks, TokenId bos, bool quiet) {
  Result r;
  Progress progress(n_chunks * ctx);
  std::vector<TokenId> chunk(ctx);
  for (std::size_t i = 0; i < n_chunks; ++i) {
    const auto chunk_tokens = tokens.subspan(i * ctx, ctx);
    std::copy(chunk_tokens.begin(), chunk_tokens.end(), chunk.begin());
    if (bos >= 0) chunk[0] = bos;
    score_chunk(e, chunk, r.sums, progress);
    r.running.push_back(r.sums.ppl());
    if (!quiet) {
      std::printf("[%zu]%.4f,", i + 1, r.running.back());
      std::fflush(stdout);
    }
  }
  r.seconds = progress.seconds();
  return r;
}

// What a run evaluates, for the start-up line and the JSON report.
struct Setup {
  std::string model;
  AttentionWindow window;  // the policy every token runs under
  std::size_t n_tokens = 0, ctx = 0, n_chunks = 0;
  bool add_bos = false;
  kernels::KvDtype kv_dtype = kernels::KvDtype::kF32;
  std::string precision;
  int activation_bits = 16, threads = 1;
};

void print_json(const PerplexityArgs& a, const Setup& s, const Result& r) {
  nlohmann::ordered_json out;
  out["model"] = s.model;
  out["file"] = a.file;
  out["n_tokens"] = s.n_tokens;
  out["add_bos"] = s.add_bos;
  out["ctx"] = s.ctx;
  out["batch_size"] = a.batch;
  out["chunks"] = s.n_chunks;
  out["scored_tokens"] = r.sums.count;
  out["ppl"] = r.sums.ppl();
  out["ppl_uncertainty"] = r.sums.uncertainty();
  out["nll_mean"] = r.sums.nll / static_cast<double>(r.sums.count);
  out["running_ppl"] = r.running;
  out["seconds"] = r.seconds;
  out["tokens_per_s"] = static_cast<double>(s.n_chunks * s.ctx) / std::max(r.seconds, 1e-9);
  out["attention_window"] = s.window.window;
  out["attention_sinks"] = s.window.sinks;
  out["kv_cache_dtype"] = kernels::kv_dtype_name(s.kv_dtype);
  out["precision"] = s.precision;
  out["activation_bits"] = s.activation_bits;
  out["threads"] = s.threads;
  std::printf("%s\n", out.dump(2).c_str());
}

int perplexity(const PerplexityArgs& a) {
  validate(a);
  Setup s;
  s.window = to_attention_window(a.window, a.sinks);
  s.kv_dtype = kernels::parse_kv_dtype(a.kv_cache_dtype);
  s.threads = a.threads > 0 ? a.threads : default_threads();
  const std::string text = read_text_file(a.file);  // before the model: a bad path fails fast

  Stopwatch load_time;
  const auto file = gguf::GgufFile::open(resolve_model_path(a.model));
  const auto tok = tokenizer::Tokenizer::from_gguf(file);
  const model::Model m = model::Model::load(
      file,
      {model::parse_precision(a.precision), kernels::parse_activation_bits(a.activation_bits)});
  s.model = file.source();
  s.precision = model::precision_name(m.precision());
  s.activation_bits = static_cast<int>(m.activation_bits());
  std::fprintf(stderr, "folio: loaded %s (%s, %u layers, %s precision) in %.2f s\n",
               s.model.c_str(), m.config().arch.c_str(), m.config().n_layer, s.precision.c_str(),
               load_time.seconds());

  const std::vector<TokenId> tokens = tokenize_text(tok, text);
  s.n_tokens = tokens.size();
  s.ctx = static_cast<std::size_t>(a.ctx);
  if (s.n_tokens < s.ctx) {
    throw Error(a.file + " has " + std::to_string(s.n_tokens) + " tokens; --ctx-size " +
                std::to_string(s.ctx) + " needs at least " + std::to_string(s.ctx) +
                " (one chunk): use a longer text or a smaller --ctx-size");
  }
  s.n_chunks =
      std::min(s.n_tokens / s.ctx, a.chunks ? static_cast<std::size_t>(*a.chunks) : SIZE_MAX);
  // -1: the vocabulary adds no BOS (a TokenId marks "none" so; base/token_id.h).
  const TokenId bos = tok.vocab().add_bos() ? tok.vocab().special().bos.value_or(-1) : -1;
  s.add_bos = bos >= 0;
  if (m.config().n_ctx_train > 0 && s.ctx > m.config().n_ctx_train) {
    std::fprintf(stderr,
                 "folio: warning: --ctx-size %zu exceeds the model's trained context (%llu)\n",
                 s.ctx, static_cast<unsigned long long>(m.config().n_ctx_train));
  }
  std::fprintf(stderr,
               "folio: perplexity: %zu tokens, %zu chunks of %zu (scoring the last %zu of each), "
               "batch %d, KV %s, attention window %d (sinks %d), %d threads\n",
               s.n_tokens, s.n_chunks, s.ctx, s.ctx - s.ctx / 2 - 1, a.batch,
               kernels::kv_dtype_name(s.kv_dtype), s.window.window, s.window.sinks, s.threads);

  kernels::ThreadPool pool(s.threads);
  model::ContiguousKvCache kv(m.config(), 1, s.ctx, s.kv_dtype);  // grows up to ctx positions
  model::Workspace ws;
  Evaluator e{m, kv, ws, pool, s.window, static_cast<std::size_t>(a.batch)};
  const Result r = evaluate(e, tokens, s.ctx, s.n_chunks, bos, a.json);
  std::fprintf(stderr, "folio: perplexity: %zu tokens (%zu scored) in %.2f s (%.1f t/s)\n",
               s.n_chunks * s.ctx, r.sums.count, r.seconds,
               static_cast<double>(s.n_chunks * s.ctx) / std::max(r.seconds, 1e-9));
  if (a.json) {
    print_json(a, s, r);
  } else {
    std::printf("\nFinal estimate: PPL = %.4f +/- %.5f\n", r.sums.ppl(), r.sums.uncertainty());
  }
  return 0;
}

}  // namespace

Command register_perplexity(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "perplexity", "Perplexity of a model on a text file (llama.cpp's llama-perplexity protocol)");
  auto a = std::make_shared<PerplexityArgs>();
  sub->add_option("-m,--model", a->model, "GGUF model (default: the default model)");
  sub->add_option("-f,--file", a->file, "Text file to evaluate (all of it is tokenized)")
      ->required();
  sub->add_option("-c,--ctx-size", a->ctx,
                  "Tokens per chunk (even, >= 16); the last half of each is scored")
      ->capture_default_str();
  sub->add_option("--chunks", a->chunks, "Chunks to evaluate (default: all whole chunks)");
  sub->add_option("-b,--batch-size", a->batch, "Tokens per forward step")->capture_default_str();
  sub->add_option("-t,--threads", a->threads, "Threads (default: all cores)");
  sub->add_option("--kv-cache-dtype", a->kv_cache_dtype, "KV cache elements: f32, f16, int8, int4")
      ->capture_default_str();
  sub->add_option("--precision", a->precision, "fast (quantized kernels) or ref (f32 reference)")
      ->capture_default_str();
  add_activation_bits_flag(sub, a->activation_bits);
  add_attention_window_flags(sub, a->window, a->sinks);
  sub->add_flag("--json", a->json, "Print the result as one JSON object");
  return {sub, [a]() { return perplexity(*a); }};
}

}  // namespace folio::cli
