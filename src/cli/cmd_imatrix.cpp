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
#include <memory>
#include <string>
#include <thread>

#include "base/error.h"
#include "base/timer.h"
#include "calib/calibration.h"
#include "calib/imatrix.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "cli/model_file.h"
#include "cli/text_file.h"
#include "gguf/gguf_file.h"
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

int run_imatrix(const ImatrixArgs& a) {
  if (a.file.empty()) throw Error("imatrix: -f/--file TEXT_FILE is required");
  if (a.ctx < 16) throw Error("--ctx-size must be >= 16 (got " + std::to_string(a.ctx) + ")");
  if (a.chunks < 0) throw Error("--chunks must be >= 0 (got " + std::to_string(a.chunks) + ")");
  if (a.batch < 1) throw Error("--batch-size must be >= 1 (got " + std::to_string(a.batch) + ")");
  if (a.threads < 0) throw Error("--threads must be >= 0 (got " + std::to_string(a.threads) + ")");
  const std::string text = read_text_file(a.file);
  const std::string path = resolve_model_path(a.model);
  const Stopwatch load_time;
  const auto file = open_model_file(path);
  const auto tok = tokenizer::Tokenizer::from_gguf(file);
  const auto m = model::Model::load(file);
  std::fprintf(stderr, "folio: loaded %s (%s, %u layers) in %.2f s\n", path.c_str(),
               m.config().arch.c_str(), static_cast<unsigned>(m.config().n_layer),
               load_time.seconds());

  const std::vector<TokenId> tokens =
      tok.encode(text, {.add_special = true, .parse_special = false});
  const auto ctx = static_cast<std::size_t>(a.ctx);
  calib::CalibrationOptions o;
  o.ctx = ctx;
  o.chunks = static_cast<std::size_t>(a.chunks);
  const std::size_t n_chunks = calib::calibration_chunks(tokens.size(), o, a.file);
  const tokenizer::Vocab& vocab = tok.vocab();
  const TokenId bos = vocab.add_bos() ? vocab.special().bos.value_or(-1) : -1;
  o.batch = static_cast<std::size_t>(a.batch);
  o.threads = a.threads > 0 ? a.threads
                            : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  calib::Imatrix im;
  im.datasets = {std::filesystem::path(a.file).filename().string()};
  im.chunk_size = static_cast<std::uint32_t>(ctx);
  im.chunk_count = static_cast<std::uint32_t>(n_chunks);
  std::fprintf(stderr, "imatrix: %zu chunks of %zu tokens from %s (%zu tokens), %d threads\n",
               n_chunks, ctx, a.file.c_str(), tokens.size(), o.threads);
  const Stopwatch run;
  calib::run_calibration(m, tokens, bos, o, im, "imatrix");
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
  sub->add_option("-m,--model", args->model,
                  "GGUF file or HF checkpoint directory (default: the default model)");
  sub->add_option("-f,--file", args->file, "calibration text file (all of it is tokenized)");
  sub->add_option("-o,--output", args->out, "where to write the imatrix (default: imatrix.gguf)");
  sub->add_option("-c,--ctx-size", args->ctx, "tokens per chunk (default: 512)");
  sub->add_option("--chunks", args->chunks, "at most this many chunks (default: all)");
  sub->add_option("-b,--batch-size", args->batch, "tokens per forward step (default: 512)");
  sub->add_option("-t,--threads", args->threads, "worker threads (default: all cores)");
  return {sub, [args]() { return run_imatrix(*args); }};
}

}  // namespace folio::cli
