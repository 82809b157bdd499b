// `folio imatrix [-m MODEL] -f TEXT [-o imatrix.gguf]`: an importance matrix
// (calib/imatrix.h) from calibration text, in llama.cpp's imatrix GGUF
// format, for `folio quantize --imatrix` (or llama-quantize --imatrix).
//
// The text is read as llama-imatrix reads it: tokenized whole (BOS first
// when the vocabulary adds one), cut into chunks of --ctx-size tokens, each
// chunk's first token replaced by BOS, each chunk run from an empty cache.
// Every row of every chunk feeds the sums of squares of each block linear's
// input (the output head is left out, as llama-imatrix does by default).
// Progress (tokens/s, ETA) goes to stderr.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "base/error.h"
#include "base/timer.h"
#include "calib/imatrix.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "gguf/gguf_file.h"
#include "kernels/thread_pool.h"
#include "model/contiguous_kv_cache.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace folio::cli {

namespace {

struct ImatrixArgs {
  std::string model;
  std::string file;
  std::string out = "imatrix.gguf";
  int ctx = 512;
  int chunks = 0;  // 0: every whole chunk
  int batch = 512;
  int threads = 0;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int run_imatrix(const ImatrixArgs& a) {
  if (a.file.empty()) throw Error("imatrix: -f/--file TEXT_FILE is required");
  if (a.ctx < 16) throw Error("--ctx-size must be >= 16 (got " + std::to_string(a.ctx) + ")");
  if (a.chunks < 0) throw Error("--chunks must be >= 0 (got " + std::to_string(a.chunks) + ")");
  if (a.batch < 1) throw Error("--batch-size must be >= 1 (got " + std::to_string(a.batch) + ")");
  if (a.threads < 0) throw Error("--threads must be >= 0 (got " + std::to_string(a.threads) + ")");
  const std::string text = read_text(a.file);
  const std::string path = resolve_model_path(a.model);
  const Stopwatch load_time;
  const auto file = gguf::GgufFile::open(path);
  const auto tok = tokenizer::Tokenizer::from_gguf(file);
  const auto m = model::Model::load(file);
  std::fprintf(stderr, "folio: loaded %s (%s, %u layers) in %.2f s\n", path.c_str(),
               m.config().arch.c_str(), static_cast<unsigned>(m.config().n_layer),
               load_time.seconds());

  const std::vector<TokenId> tokens =
      tok.encode(text, {.add_special = true, .parse_special = false});
  const auto ctx = static_cast<std::size_t>(a.ctx);
  std::size_t n_chunks = tokens.size() / ctx;
  if (a.chunks > 0) n_chunks = std::min(n_chunks, static_cast<std::size_t>(a.chunks));
  if (n_chunks == 0) {
    throw Error(a.file + " has " + std::to_string(tokens.size()) +
                " tokens, fewer than one chunk of " + std::to_string(ctx) + " (lower --ctx-size)");
  }
  const tokenizer::Vocab& vocab = tok.vocab();
  const TokenId bos = vocab.add_bos() ? vocab.special().bos.value_or(-1) : -1;

  calib::Imatrix im;
  im.datasets = {std::filesystem::path(a.file).filename().string()};
  im.chunk_size = static_cast<std::uint32_t>(ctx);
  const int threads = a.threads > 0
                          ? a.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  kernels::ThreadPool pool(threads);
  model::ContiguousKvCache kv(m.config(), 1, ctx, kernels::KvDtype::kF32);
  model::Workspace ws;
  ws.observer = &im;
  model::Batch b;
  std::fprintf(stderr, "imatrix: %zu chunks of %zu tokens from %s (%zu tokens), %d threads\n",
               n_chunks, ctx, a.file.c_str(), tokens.size(), threads);
  const Stopwatch run;
  for (std::size_t c = 0; c < n_chunks; ++c) {
    kv.truncate(0, 0);
    for (std::size_t start = 0; start < ctx; start += static_cast<std::size_t>(a.batch)) {
      const std::size_t end = std::min(ctx, start + static_cast<std::size_t>(a.batch));
      b.clear();
      for (std::size_t p = start; p < end; ++p) {
        const TokenId t = p == 0 && bos >= 0 ? bos : tokens[c * ctx + p];
        b.add(t, static_cast<std::int32_t>(p), 0, false);
      }
      m.forward(b, kv, ws, pool);
    }
    im.chunk_count = static_cast<std::uint32_t>(c + 1);
    const double done = static_cast<double>((c + 1) * ctx);
    const double rate = done / std::max(run.seconds(), 1e-9);
    std::fprintf(stderr, "\rimatrix: chunk %zu/%zu, %.0f tokens/s, ETA %.0f s   ", c + 1, n_chunks,
                 rate, static_cast<double>((n_chunks - c - 1) * ctx) / rate);
  }
  std::fprintf(stderr, "\n");
  im.write(a.out);
  std::fprintf(stderr, "wrote %s: %zu entries from %u chunks of %u tokens in %.1f s\n",
               a.out.c_str(), im.entries().size(), im.chunk_count, im.chunk_size, run.seconds());
  return 0;
}

}  // namespace

Command register_imatrix(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "imatrix", "Compute an importance matrix from calibration text (llama.cpp's imatrix GGUF)");
  auto args = std::make_shared<ImatrixArgs>();
  sub->add_option("-m,--model", args->model, "GGUF model (default: the default model)");
  sub->add_option("-f,--file", args->file, "calibration text file (all of it is tokenized)");
  sub->add_option("-o,--output", args->out, "where to write the imatrix (default: imatrix.gguf)");
  sub->add_option("-c,--ctx-size", args->ctx, "tokens per chunk (default: 512)");
  sub->add_option("--chunks", args->chunks, "at most this many chunks (default: all)");
  sub->add_option("-b,--batch-size", args->batch, "tokens per forward step (default: 512)");
  sub->add_option("-t,--threads", args->threads, "worker threads (default: all cores)");
  return {sub, [args]() { return run_imatrix(*args); }};
}

}  // namespace folio::cli
