// eval/logprob_file.h: llama.cpp's base log-probability file, the one that
// `llama-perplexity --kl-divergence-base FILE` writes and `--kl-divergence`
// reads (tools/perplexity/perplexity.cpp), byte for byte, so folio and
// llama.cpp can each compare a model against the other's base run.
//
// Layout (little-endian, no padding between fields):
//
//   "_logits_"                   8 bytes, the magic
//   n_ctx                        u32   tokens per chunk
//   n_vocab                      i32
//   n_chunk                      i32
//   tokens[n_chunk * n_ctx]      i32   the text's tokens, as tokenized (a
//                                      chunk's first token is NOT the BOS
//                                      that replaces it when it is run)
//   per chunk, n_ctx - 1 - n_ctx/2 rows (the scored rows first .. n_ctx-2,
//   first = n_ctx/2), each row_width(n_vocab) u16:
//     [scale: f32][min_log_prob: f32][q_0 .. q_{n_vocab-1}: u16][pad to even]
//     log p_i ~= scale * q_i + min_log_prob
//
// Compression keeps the top 16 nats of a row: logits below max - 16 store 0,
// i.e. they read back as the row's floor min_log_prob. The step is
// (max - floor) / 65535, at most 16 / 65535 ~ 2.4e-4 nats.
//
// The reader validates the header against the file size before it allocates
// anything, so a corrupt or truncated file is a clear Error, never a huge
// allocation or a short read in the middle of a run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/token_id.h"

namespace folio::eval {

// u16 per stored row: two f32 (scale, floor) and one u16 per vocabulary
// entry, rounded up to an even count (llama.cpp's nv = 2*((n_vocab+1)/2) + 4).
std::size_t logprob_row_width(std::size_t n_vocab);

// Scored rows per chunk of n_ctx tokens: n_ctx - 1 - n_ctx/2.
std::size_t scored_rows(std::size_t n_ctx);

// Writes llama.cpp's compressed log_softmax(logits) into `row`
// (logprob_row_width(logits.size()) u16), with llama.cpp's f32 arithmetic.
void compress_logprobs(std::span<const float> logits, std::span<std::uint16_t> row);

// A view of one stored row (as compress_logprobs writes it).
class CompressedRow {
 public:
  CompressedRow(std::span<const std::uint16_t> row, std::size_t n_vocab);
  float scale() const { return scale_; }
  float min_log_prob() const { return min_log_prob_; }
  std::uint16_t q(std::size_t i) const { return q_[i]; }
  float log_prob(std::size_t i) const { return scale_ * static_cast<float>(q_[i]) + min_log_prob_; }
  std::size_t n_vocab() const { return q_.size(); }

 private:
  float scale_, min_log_prob_;
  std::span<const std::uint16_t> q_;
};

struct LogprobFileHeader {
  std::uint32_t n_ctx = 0;
  std::int32_t n_vocab = 0;
  std::int32_t n_chunk = 0;
};

// Writes one file: the header and tokens at open, then the rows chunk by
// chunk in order. close() reports a short write (disk full) as an Error.
class LogprobFileWriter {
 public:
  // `tokens` holds n_chunk * n_ctx ids.
  LogprobFileWriter(const std::string& path, const LogprobFileHeader& h,
                    std::span<const TokenId> tokens);
  // Appends rows (a multiple of the row width).
  void write_rows(std::span<const std::uint16_t> rows);
  // Checks that every row was written and flushes; the destructor closes
  // silently on an error path.
  void close();

 private:
  std::string path_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f_;
  std::size_t rows_left_;
  std::size_t row_width_;
};

// Reads one file, validated at open: magic, positive sizes, every token in
// [0, n_vocab), and a file size exactly that of the header's contents.
class LogprobFileReader {
 public:
  explicit LogprobFileReader(const std::string& path);
  const LogprobFileHeader& header() const { return h_; }
  const std::vector<TokenId>& tokens() const { return tokens_; }
  std::size_t row_width() const { return row_width_; }
  // Reads the next rows in file order into `rows` (a multiple of the row width).
  void read_rows(std::span<std::uint16_t> rows);

 private:
  std::string path_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f_;
  LogprobFileHeader h_;
  std::vector<TokenId> tokens_;
  std::size_t row_width_ = 0;
  std::size_t rows_left_ = 0;
};

}  // namespace folio::eval
