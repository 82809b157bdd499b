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
//
// KL divergence against a base model, as llama-perplexity does it:
//
//   folio perplexity -m BASE -f TEXT --kl-divergence-base FILE
//       PPL as above, and FILE gets the tokens and every scored row's
//       log-probabilities in llama.cpp's format (eval/logprob_file.h)
//   folio perplexity -m CANDIDATE --kl-divergence-base FILE --kl-divergence
//       runs the candidate on FILE's tokens and chunks (no -f; its ctx) and
//       compares each scored row with the base's (eval/kl_divergence.h)
//   folio perplexity -m CANDIDATE -f TEXT --kl-divergence-base-model BASE
//       folio's lockstep mode: both models run each step side by side and
//       are compared at full precision, with no file (two models in memory)
//
// A KLD run prints llama.cpp's per-chunk table and its statistics blocks
// (cli/kl_divergence_report.h) or, with --json, one object holding them.
// Either file direction interoperates with llama-perplexity
// (bench/kl_divergence.sh checks it).
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
#include "cli/kl_divergence_report.h"
#include "cli/model_file.h"
#include "cli/text_file.h"
#include "eval/kl_divergence.h"
#include "eval/logprob_file.h"
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
  std::optional<int> ctx;     // unset: 512, or the base file's n_ctx
  std::optional<int> chunks;  // unset: every whole chunk of the text
  int batch = 512;
  int threads = 0;  // 0: all cores
  std::string kv_cache_dtype = "f32";
  std::string precision = "fast";
  int activation_bits = 16;
  int window = 0;              // --attention-window; 0: full attention
  int sinks = -1;              // --attention-sinks; -1: the default (to_attention_window)
  std::string kld_base;        // --kl-divergence-base FILE
  bool kld = false;            // --kl-divergence: read kld_base instead of writing it
  std::string kld_base_model;  // --kl-divergence-base-model GGUF: lockstep
  bool json = false;
};

constexpr int kDefaultCtx = 512;

enum class Mode {
  kPerplexity,  // PPL only
  kWriteBase,   // PPL, and the rows go to the --kl-divergence-base file
  kReadBase,    // KLD against the --kl-divergence-base file
  kLockstep,    // KLD against --kl-divergence-base-model, run side by side
};

Mode mode_of(const PerplexityArgs& a) {
  if (!a.kld_base_model.empty()) return Mode::kLockstep;
  if (a.kld) return Mode::kReadBase;
  return a.kld_base.empty() ? Mode::kPerplexity : Mode::kWriteBase;
}

bool compares(Mode m) {
  return m == Mode::kReadBase || m == Mode::kLockstep;
}

void validate(const PerplexityArgs& a, Mode mode) {
  if (a.kld && a.kld_base.empty()) {
    throw Error(
        "--kl-divergence needs --kl-divergence-base FILE: the base run's "
        "log-probabilities (written by folio or llama-perplexity given "
        "--kl-divergence-base FILE without --kl-divergence)");
  }
  if (!a.kld_base_model.empty() && !a.kld_base.empty()) {
    throw Error(
        "--kl-divergence-base-model (lockstep, no file) and --kl-divergence-base FILE "
        "are two ways to compare with a base: give one");
  }
  if (mode != Mode::kReadBase && a.file.empty())
    throw Error("perplexity: -f/--file TEXT_FILE is required");
  if (a.ctx && (*a.ctx < 16 || *a.ctx % 2 != 0))
    throw Error("--ctx-size must be even and >= 16 (got " + std::to_string(*a.ctx) + ")");
  if (a.chunks && *a.chunks < 1)
    throw Error("--chunks must be >= 1 (got " + std::to_string(*a.chunks) + ")");
  if (a.batch < 1) throw Error("--batch-size must be >= 1 (got " + std::to_string(a.batch) + ")");
  if (a.threads < 0) throw Error("-t/--threads must be >= 0");
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

// What one model's run needs besides the arguments: the model, its scratch,
// its cache and the step's batch.
struct Evaluator {
  const model::Model& m;
  model::ContiguousKvCache& kv;
  model::Workspace& ws;
  kernels::ThreadPool& pool;
  AttentionWindow window;
  std::size_t batch;
  model::Batch b;
};

// Forwards positions [start, end) of `chunk` on top of the cache; the logits
// are the scored rows among them ([b.logit_rows.size() x n_vocab], in `ws`).
std::span<const float> forward_step(Evaluator& e, std::span<const TokenId> chunk, std::size_t start,
                                    std::size_t end) {
  const std::size_t ctx = chunk.size(), first = ctx / 2;  // rows first .. ctx-2 are scored
  e.b.clear();
  for (std::size_t p = start; p < end; ++p) {
    const bool scored = p >= first && p + 1 < ctx;
    e.b.add(chunk[p], static_cast<std::int32_t>(p), 0, scored, e.window);
  }
  return e.m.forward(e.b, e.kv, e.ws, e.pool);
}

// What a run does with each step's scored rows, by mode: NLLs always; the
// compressed rows written (kWriteBase); compared with the stored rows
// (kReadBase) or with the base model's logits (kLockstep). Rows are worked on
// in parallel and summed in order, so results do not depend on threads.
class RowScorer {
 public:
  RowScorer(Mode mode, std::size_t n_vocab, kernels::ThreadPool& pool,
            eval::LogprobFileWriter* writer, eval::LogprobFileReader* reader)
      : mode_(mode), n_vocab_(n_vocab), pool_(pool), writer_(writer), reader_(reader) {}

  // logits and base_logits (lockstep only, else empty): [targets.size() x n_vocab].
  void score(std::span<const float> logits, std::span<const float> base_logits,
             std::span<const TokenId> targets) {
    const std::size_t rows = targets.size();
    const std::size_t width = eval::logprob_row_width(n_vocab_);
    auto row = [&](std::span<const float> m, std::size_t r) {
      return m.subspan(r * n_vocab_, n_vocab_);
    };
    if (mode_ == Mode::kWriteBase || mode_ == Mode::kReadBase) stored_.resize(rows * width);
    if (mode_ == Mode::kReadBase) reader_->read_rows(stored_);
    std::span<std::uint16_t> stored(stored_);
    if (!compares(mode_)) {
      nll_.assign(rows, 0.0);
      pool_.parallel_for(rows, [&](std::size_t r0, std::size_t r1, int) {
        for (std::size_t r = r0; r < r1; ++r) {
          nll_[r] = row_nll(row(logits, r), targets[r]);
          if (mode_ == Mode::kWriteBase)
            eval::compress_logprobs(row(logits, r), stored.subspan(r * width, width));
        }
      });
      for (const double v : nll_) sums_.add(v);
      if (mode_ == Mode::kWriteBase) writer_->write_rows(stored);
      return;
    }
    cmp_.assign(rows, {});
    pool_.parallel_for(rows, [&](std::size_t r0, std::size_t r1, int) {
      for (std::size_t r = r0; r < r1; ++r) {
        cmp_[r] =
            mode_ == Mode::kReadBase
                ? eval::compare_row(row(logits, r),
                                    eval::CompressedRow(stored.subspan(r * width, width), n_vocab_),
                                    targets[r])
                : eval::compare_row(row(logits, r), row(base_logits, r), targets[r]);
      }
    });
    for (const eval::RowComparison& c : cmp_) {
      sums_.add(c.nll);
      kld_.add(c);
    }
  }

  const NllSums& sums() const { return sums_; }
  const eval::KldAccumulator& kld() const { return kld_; }

 private:
  Mode mode_;
  std::size_t n_vocab_;
  kernels::ThreadPool& pool_;
  eval::LogprobFileWriter* writer_;
  eval::LogprobFileReader* reader_;
  NllSums sums_;
  eval::KldAccumulator kld_;
  std::vector<double> nll_;
  std::vector<eval::RowComparison> cmp_;
  std::vector<std::uint16_t> stored_;  // one step's compressed rows
};

// Runs one chunk (its first token already BOS when the vocabulary adds one)
// on emptied caches, the base model's too in lockstep, step by step.
void score_chunk(Evaluator& e, Evaluator* base, std::span<const TokenId> chunk, RowScorer& scorer,
                 Progress& progress) {
  const std::size_t ctx = chunk.size(), first = ctx / 2;
  e.kv.truncate(0, 0);  // an empty cache: the chunk sees nothing before it
  if (base) base->kv.truncate(0, 0);
  for (std::size_t start = 0; start < ctx; start += e.batch) {
    const std::size_t end = std::min(ctx, start + e.batch);
    const std::span<const float> logits = forward_step(e, chunk, start, end);
    const std::span<const float> base_logits =
        base ? forward_step(*base, chunk, start, end) : std::span<const float>();
    // Logits rows are the consecutive positions row0, row0 + 1, ...
    const std::size_t rows = e.b.logit_rows.size(), row0 = std::max(start, first);
    if (rows > 0) scorer.score(logits, base_logits, chunk.subspan(row0 + 1, rows));
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
  std::vector<double> running;                // PPL after each chunk
  std::vector<eval::KldSummary> running_kld;  // KLD modes: the table's rows
  eval::KldSummary kld;                       // KLD modes: the final statistics
  double seconds = 0;
};

// Scores chunks 0 .. n_chunks-1 of `tokens` (with the base model too in
// lockstep); `bos` replaces each chunk's first token unless it is -1. Prints
// the running values to stdout unless `quiet`: "[i]PPL," or, when comparing,
// llama.cpp's per-chunk KLD table.
Result evaluate(Evaluator& e, Evaluator* base, RowScorer& scorer, Mode mode,
                std::span<const TokenId> tokens, std::size_t ctx, std::size_t n_chunks, TokenId bos,
                bool quiet) {
  Result r;
  Progress progress(n_chunks * ctx);
  std::vector<TokenId> chunk(ctx);
  for (std::size_t i = 0; i < n_chunks; ++i) {
    const auto chunk_tokens = tokens.subspan(i * ctx, ctx);
    std::copy(chunk_tokens.begin(), chunk_tokens.end(), chunk.begin());
    if (bos >= 0) chunk[0] = bos;
    score_chunk(e, base, chunk, scorer, progress);
    r.running.push_back(scorer.sums().ppl());
    if (compares(mode)) {
      const eval::KldSummary s = scorer.kld().summary(false);
      r.running_kld.push_back(s);
      if (!quiet) {
        if (i == 0) print_kld_chunk_header();
        print_kld_chunk(i + 1, s);
      }
    } else if (!quiet) {
      std::printf("[%zu]%.4f,", i + 1, r.running.back());
      std::fflush(stdout);
    }
  }
  r.sums = scorer.sums();
  if (compares(mode)) r.kld = scorer.kld().summary(true);
  r.seconds = progress.seconds();
  return r;
}

// What a run evaluates, for the start-up line and the JSON report.
struct Setup {
  Mode mode = Mode::kPerplexity;
  std::string model, base_model;  // base_model: lockstep only
  AttentionWindow window;         // the policy every token runs under
  std::size_t n_tokens = 0, ctx = 0, n_chunks = 0;
  bool add_bos = false;
  kernels::KvDtype kv_dtype = kernels::KvDtype::kF32;
  std::string precision;
  int activation_bits = 16, threads = 1;
};

void print_json(const PerplexityArgs& a, const Setup& s, const Result& r) {
  nlohmann::ordered_json out;
  out["model"] = s.model;
  out["file"] = s.mode == Mode::kReadBase ? a.kld_base : a.file;
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
  if (s.mode == Mode::kWriteBase) out["kl_divergence_base"] = a.kld_base;
  if (compares(s.mode)) {
    nlohmann::ordered_json k;
    k["base"] = s.mode == Mode::kReadBase ? a.kld_base : s.base_model;
    k["lockstep"] = s.mode == Mode::kLockstep;
    k.update(kld_summary_json(r.kld));
    k["running"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < r.running_kld.size(); ++i)
      k["running"].push_back(kld_chunk_json(i + 1, r.running_kld[i]));
    out["kl_divergence"] = std::move(k);
  }
  std::printf("%s\n", out.dump(2).c_str());
}

// Refuses a lockstep pair whose logits would not mean the same tokens:
// different vocabulary sizes or any token text that differs (the first named).
void check_same_vocabulary(const model::Model& m, const tokenizer::Vocab& v,
                           const std::string& name, const model::Model& base_m,
                           const tokenizer::Vocab& base_v, const std::string& base_name) {
  if (m.n_vocab() != base_m.n_vocab() || v.size() != base_v.size()) {
    throw Error("--kl-divergence-base-model: the vocabularies differ in size: " + name + " has " +
                std::to_string(v.size()) + " tokens (" + std::to_string(m.n_vocab()) +
                " logits), " + base_name + " has " + std::to_string(base_v.size()) + " (" +
                std::to_string(base_m.n_vocab()) + " logits)");
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto id = static_cast<TokenId>(i);
    if (v.text(id) != base_v.text(id)) {
      throw Error("--kl-divergence-base-model: the vocabularies differ at token " +
                  std::to_string(i) + ": \"" + v.text(id) + "\" in " + name + ", \"" +
                  base_v.text(id) + "\" in " + base_name);
    }
  }
}

// A model with its tokenizer, loaded under the run's flags. Built in place
// and never moved: the model's weights view the file.
struct Loaded {
  Loaded(const std::string& path, const model::LoadOptions& options)
      : file(open_model_file(path)),
        tok(tokenizer::Tokenizer::from_gguf(file)),
        m(model::Model::load(file, options)) {}
  gguf::GgufFile file;
  tokenizer::Tokenizer tok;
  model::Model m;
};

std::unique_ptr<Loaded> load(const std::string& path, const PerplexityArgs& a) {
  Stopwatch load_time;
  auto l = std::make_unique<Loaded>(
      path, model::LoadOptions{model::parse_precision(a.precision),
                               kernels::parse_activation_bits(a.activation_bits)});
  const model::Model& m = l->m;
  std::fprintf(stderr, "folio: loaded %s (%s, %u layers, %s precision) in %.2f s\n",
               l->file.source().c_str(), m.config().arch.c_str(), m.config().n_layer,
               std::string(model::precision_name(m.precision())).c_str(), load_time.seconds());
  return l;
}

// --kl-divergence: the base file, opened (and validated) before any model
// loads; its n_ctx is the run's.
std::unique_ptr<eval::LogprobFileReader> open_base_file(const PerplexityArgs& a, Setup& s) {
  auto reader = std::make_unique<eval::LogprobFileReader>(a.kld_base);
  s.ctx = reader->header().n_ctx;
  if (a.ctx && static_cast<std::size_t>(*a.ctx) != s.ctx) {
    throw Error("--ctx-size " + std::to_string(*a.ctx) + " differs from " + a.kld_base + "'s " +
                std::to_string(s.ctx) +
                " (the base run's chunk size, which a comparison must use): leave -c out");
  }
  if (!a.file.empty()) {
    std::fprintf(stderr,
                 "folio: note: -f %s is not read: with --kl-divergence the tokens come from %s\n",
                 a.file.c_str(), a.kld_base.c_str());
  }
  return reader;
}

// The run's tokens and chunk count: the base file's (checked against the
// model's vocabulary), or the text's.
std::vector<TokenId> run_tokens(const PerplexityArgs& a, Setup& s, const Loaded& cand,
                                const eval::LogprobFileReader* reader, const std::string& text) {
  const std::size_t max_chunks = a.chunks ? static_cast<std::size_t>(*a.chunks) : SIZE_MAX;
  if (reader) {
    const auto& h = reader->header();
    if (static_cast<std::size_t>(h.n_vocab) != cand.m.n_vocab()) {
      throw Error(a.kld_base + " holds log-probabilities over " + std::to_string(h.n_vocab) +
                  " tokens, but " + s.model + " has " + std::to_string(cand.m.n_vocab()) +
                  ": a base file compares only models with the same vocabulary");
    }
    s.n_tokens = reader->tokens().size();
    s.n_chunks = std::min(static_cast<std::size_t>(h.n_chunk), max_chunks);
    return reader->tokens();
  }
  std::vector<TokenId> tokens = tokenize_text(cand.tok, text);
  s.n_tokens = tokens.size();
  if (s.n_tokens < s.ctx) {
    throw Error(a.file + " has " + std::to_string(s.n_tokens) + " tokens; --ctx-size " +
                std::to_string(s.ctx) + " needs at least " + std::to_string(s.ctx) +
                " (one chunk): use a longer text or a smaller --ctx-size");
  }
  s.n_chunks = std::min(s.n_tokens / s.ctx, max_chunks);
  return tokens;
}

// The start-up lines on stderr.
void print_setup(const PerplexityArgs& a, const Setup& s, const model::Model& m) {
  if (m.config().n_ctx_train > 0 && s.ctx > m.config().n_ctx_train) {
    std::fprintf(stderr,
                 "folio: warning: --ctx-size %zu exceeds the model's trained context (%llu)\n",
                 s.ctx, static_cast<unsigned long long>(m.config().n_ctx_train));
  }
  std::fprintf(stderr,
               "folio: perplexity: %zu tokens, %zu chunks of %zu (scoring the last %zu of each), "
               "batch %d, KV %s, attention window %d (sinks %d), %d threads\n",
               s.n_tokens, s.n_chunks, s.ctx, eval::scored_rows(s.ctx), a.batch,
               kernels::kv_dtype_name(s.kv_dtype), s.window.window, s.window.sinks, s.threads);
  if (s.mode == Mode::kWriteBase) {
    std::fprintf(stderr, "folio: perplexity: writing the base log-probabilities to %s\n",
                 a.kld_base.c_str());
  }
  if (s.mode == Mode::kLockstep) {
    std::fprintf(stderr, "folio: perplexity: comparing with %s in lockstep (KV f32 for it)\n",
                 s.base_model.c_str());
  }
}

int perplexity(const PerplexityArgs& a) {
  Setup s;
  s.mode = mode_of(a);
  validate(a, s.mode);
  s.window = to_attention_window(a.window, a.sinks);
  s.kv_dtype = kernels::parse_kv_dtype(a.kv_cache_dtype);
  s.threads = a.threads > 0 ? a.threads : default_threads();

  // The base file or the text, read before the model loads: a bad path fails fast.
  std::unique_ptr<eval::LogprobFileReader> reader;
  std::string text;
  if (s.mode == Mode::kReadBase) {
    reader = open_base_file(a, s);
  } else {
    text = read_text_file(a.file);
    s.ctx = static_cast<std::size_t>(a.ctx.value_or(kDefaultCtx));
  }

  const std::unique_ptr<Loaded> cand = load(resolve_model_path(a.model), a);
  const model::Model& m = cand->m;
  s.model = cand->file.source();
  s.precision = model::precision_name(m.precision());
  s.activation_bits = static_cast<int>(m.activation_bits());
  std::unique_ptr<Loaded> base;
  if (s.mode == Mode::kLockstep) {
    base = load(a.kld_base_model, a);
    s.base_model = base->file.source();
    check_same_vocabulary(m, cand->tok.vocab(), s.model, base->m, base->tok.vocab(), s.base_model);
  }
  const std::vector<TokenId> tokens = run_tokens(a, s, *cand, reader.get(), text);
  // -1: the vocabulary adds no BOS (a TokenId marks "none" so; base/token_id.h).
  const tokenizer::Vocab& vocab = cand->tok.vocab();
  const TokenId bos = vocab.add_bos() ? vocab.special().bos.value_or(-1) : -1;
  s.add_bos = bos >= 0;
  print_setup(a, s, m);

  std::unique_ptr<eval::LogprobFileWriter> writer;
  if (s.mode == Mode::kWriteBase) {
    // The tokens as tokenized (each chunk's first too, not the BOS it runs
    // with), as llama.cpp writes them.
    writer = std::make_unique<eval::LogprobFileWriter>(
        a.kld_base,
        eval::LogprobFileHeader{static_cast<std::uint32_t>(s.ctx),
                                static_cast<std::int32_t>(m.n_vocab()),
                                static_cast<std::int32_t>(s.n_chunks)},
        std::span<const TokenId>(tokens).first(s.n_chunks * s.ctx));
  }

  kernels::ThreadPool pool(s.threads);
  model::ContiguousKvCache kv(m.config(), 1, s.ctx, s.kv_dtype);  // grows up to ctx positions
  model::Workspace ws;
  Evaluator e{m, kv, ws, pool, s.window, static_cast<std::size_t>(a.batch), {}};
  std::optional<model::ContiguousKvCache> base_kv;
  model::Workspace base_ws;
  std::optional<Evaluator> base_e;
  if (base) {
    // The base is the reference: full-precision f32 KV, whatever the candidate's.
    base_kv.emplace(base->m.config(), 1, s.ctx, kernels::KvDtype::kF32);
    base_e.emplace(Evaluator{base->m, *base_kv, base_ws, pool, s.window, e.batch, {}});
  }
  RowScorer scorer(s.mode, m.n_vocab(), pool, writer.get(), reader.get());
  const Result r = evaluate(e, base_e ? &*base_e : nullptr, scorer, s.mode, tokens, s.ctx,
                            s.n_chunks, bos, a.json);
  if (writer) writer->close();
  std::fprintf(stderr, "folio: perplexity: %zu tokens (%zu scored) in %.2f s (%.1f t/s)\n",
               s.n_chunks * s.ctx, r.sums.count, r.seconds,
               static_cast<double>(s.n_chunks * s.ctx) / std::max(r.seconds, 1e-9));
  if (a.json) {
    print_json(a, s, r);
  } else if (compares(s.mode)) {
    std::printf("\n");
    print_kld_summary(r.kld);
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
  sub->add_option("-m,--model", a->model,
                  "GGUF file or HF checkpoint directory (default: the default model)");
  sub->add_option("-f,--file", a->file,
                  "Text file to evaluate (all of it is tokenized); not with --kl-divergence");
  sub->add_option("-c,--ctx-size", a->ctx,
                  "Tokens per chunk (even, >= 16; default 512); the last half of each is "
                  "scored. With --kl-divergence: the base file's");
  sub->add_option("--chunks", a->chunks, "Chunks to evaluate (default: all whole chunks)");
  sub->add_option("-b,--batch-size", a->batch, "Tokens per forward step")->capture_default_str();
  sub->add_option("-t,--threads", a->threads, "Threads (default: all cores)");
  sub->add_option("--kv-cache-dtype", a->kv_cache_dtype, "KV cache elements: f32, f16, int8, int4")
      ->capture_default_str();
  sub->add_option("--precision", a->precision, "fast (quantized kernels) or ref (f32 reference)")
      ->capture_default_str();
  add_activation_bits_flag(sub, a->activation_bits);
  add_attention_window_flags(sub, a->window, a->sinks);
  sub->add_option("--kl-divergence-base", a->kld_base,
                  "llama.cpp's base log-probability file: written (the tokens and every scored "
                  "row) unless --kl-divergence, then read to compare against");
  sub->add_flag("--kl-divergence", a->kld,
                "Compare the model with the --kl-divergence-base file's base run (its tokens, "
                "ctx and chunks): KL divergence, same top token, delta p, both PPLs");
  sub->add_option("--kl-divergence-base-model", a->kld_base_model,
                  "Base GGUF to compare with in lockstep: both models run each chunk side by "
                  "side, compared at full precision, no file (the base with f32 KV)");
  sub->add_flag("--json", a->json, "Print the result as one JSON object");
  return {sub, [a]() { return perplexity(*a); }};
}

}  // namespace folio::cli
