#include "eval/logprob_file.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "base/error.h"

namespace folio::eval {

static_assert(std::endian::native == std::endian::little,
              "llama.cpp's log-probability file is little-endian and read in place");

namespace {

constexpr char kMagic[8] = {'_', 'l', 'o', 'g', 'i', 't', 's', '_'};
constexpr std::size_t kHeaderBytes = sizeof kMagic + 3 * sizeof(std::int32_t);

std::size_t row_count(const LogprobFileHeader& h) {
  return static_cast<std::size_t>(h.n_chunk) * scored_rows(h.n_ctx);
}

// a * b, or false when it does not fit in 64 bits.
bool mul(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

}  // namespace

std::size_t logprob_row_width(std::size_t n_vocab) {
  return 2 * ((n_vocab + 1) / 2) + 4;
}

std::size_t scored_rows(std::size_t n_ctx) {
  return n_ctx < 2 ? 0 : n_ctx - 1 - n_ctx / 2;
}

void compress_logprobs(std::span<const float> logits, std::span<std::uint16_t> row) {
  const std::size_t n = logits.size();
  FOLIO_CHECK(n > 0 && row.size() == logprob_row_width(n));
  // f32 max/min and an f64 sum of f32 exps, as llama.cpp computes them, so a
  // row folio writes reads back like one llama.cpp wrote from the same logits.
  float max = logits[0], min = logits[0];
  for (const float x : logits) {
    max = std::max(max, x);
    min = std::min(min, x);
  }
  min = std::max(min, max - 16);
  double sum_exp = 0;
  for (const float x : logits) sum_exp += std::exp(x - max);
  const auto log_sum_exp = static_cast<float>(std::log(sum_exp));
  const float min_log_prob = min - max - log_sum_exp;
  const float scale = (max - min) / 65535.f;
  std::memcpy(row.data(), &scale, sizeof scale);
  std::memcpy(row.data() + 2, &min_log_prob, sizeof min_log_prob);
  const std::span<std::uint16_t> q = row.subspan(4);
  std::fill(q.begin(), q.end(), std::uint16_t{0});  // also the padding entry
  if (scale == 0) return;                           // a flat row: every q is 0
  const float inv_scale = 1 / scale;
  for (std::size_t i = 0; i < n; ++i) {
    if (logits[i] <= min) continue;
    // Round to nearest, ties to even (llama.cpp's nearest_int); <= 65535 up to rounding.
    const float v = std::nearbyint(inv_scale * (logits[i] - min));
    q[i] = static_cast<std::uint16_t>(std::min(v, 65535.f));
  }
}

CompressedRow::CompressedRow(std::span<const std::uint16_t> row, std::size_t n_vocab) {
  FOLIO_CHECK(row.size() >= logprob_row_width(n_vocab));
  std::memcpy(&scale_, row.data(), sizeof scale_);
  std::memcpy(&min_log_prob_, row.data() + 2, sizeof min_log_prob_);
  q_ = row.subspan(4, n_vocab);
}

LogprobFileWriter::LogprobFileWriter(const std::string& path, const LogprobFileHeader& h,
                                     std::span<const TokenId> tokens)
    : path_(path),
      f_(std::fopen(path.c_str(), "wb"), &std::fclose),
      rows_left_(row_count(h)),
      row_width_(logprob_row_width(static_cast<std::size_t>(h.n_vocab))) {
  if (!f_) throw Error("cannot create " + path + ": " + std::strerror(errno));
  FOLIO_CHECK(h.n_ctx >= 3 && h.n_vocab > 0 && h.n_chunk > 0);
  FOLIO_CHECK(tokens.size() ==
              static_cast<std::size_t>(h.n_ctx) * static_cast<std::size_t>(h.n_chunk));
  const auto n_vocab = h.n_vocab;
  const auto n_chunk = h.n_chunk;
  bool ok = std::fwrite(kMagic, 1, sizeof kMagic, f_.get()) == sizeof kMagic;
  ok = ok && std::fwrite(&h.n_ctx, sizeof h.n_ctx, 1, f_.get()) == 1;
  ok = ok && std::fwrite(&n_vocab, sizeof n_vocab, 1, f_.get()) == 1;
  ok = ok && std::fwrite(&n_chunk, sizeof n_chunk, 1, f_.get()) == 1;
  ok = ok && std::fwrite(tokens.data(), sizeof(TokenId), tokens.size(), f_.get()) == tokens.size();
  if (!ok) throw Error("cannot write " + path + ": " + std::strerror(errno));
}

void LogprobFileWriter::write_rows(std::span<const std::uint16_t> rows) {
  FOLIO_CHECK(f_ && rows.size() % row_width_ == 0 && rows.size() / row_width_ <= rows_left_);
  if (std::fwrite(rows.data(), sizeof(std::uint16_t), rows.size(), f_.get()) != rows.size())
    throw Error("cannot write " + path_ + ": " + std::strerror(errno));
  rows_left_ -= rows.size() / row_width_;
}

void LogprobFileWriter::close() {
  FOLIO_CHECK(f_ && rows_left_ == 0, "the log-probability file is missing rows");
  std::FILE* f = f_.release();
  const bool flushed = std::fflush(f) == 0;
  const int err = errno;
  if (std::fclose(f) != 0 || !flushed)
    throw Error("cannot write " + path_ + ": " + std::strerror(flushed ? errno : err));
}

LogprobFileReader::LogprobFileReader(const std::string& path)
    : path_(path), f_(std::fopen(path.c_str(), "rb"), &std::fclose) {
  if (!f_) throw Error("cannot open " + path + ": " + std::strerror(errno));
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw Error("cannot read the size of " + path + ": " + ec.message());
  const std::string what = path + " (a --kl-divergence-base log-probability file)";
  char magic[sizeof kMagic];
  if (size < kHeaderBytes || std::fread(magic, 1, sizeof magic, f_.get()) != sizeof magic ||
      std::memcmp(magic, kMagic, sizeof kMagic) != 0) {
    throw Error(path +
                " is not a log-probability file: it does not start with \"_logits_\" and "
                "a 12-byte header (write one with --kl-divergence-base FILE without "
                "--kl-divergence)");
  }
  bool ok = std::fread(&h_.n_ctx, sizeof h_.n_ctx, 1, f_.get()) == 1;
  ok = ok && std::fread(&h_.n_vocab, sizeof h_.n_vocab, 1, f_.get()) == 1;
  ok = ok && std::fread(&h_.n_chunk, sizeof h_.n_chunk, 1, f_.get()) == 1;
  if (!ok) throw Error("cannot read the header of " + what);
  if (h_.n_ctx < 3 || h_.n_ctx > INT32_MAX || h_.n_vocab < 1 || h_.n_chunk < 1) {
    throw Error(what + " has a corrupt header: n_ctx " + std::to_string(h_.n_ctx) + ", n_vocab " +
                std::to_string(h_.n_vocab) + ", n_chunk " + std::to_string(h_.n_chunk) +
                " (need n_ctx >= 3, n_vocab >= 1, n_chunk >= 1)");
  }
  row_width_ = logprob_row_width(static_cast<std::size_t>(h_.n_vocab));
  // Expected size, every product checked: the header alone must not make us
  // allocate or read beyond what the file holds.
  std::uint64_t n_tokens = 0, token_bytes = 0, chunk_bytes = 0, row_bytes = 0;
  std::uint64_t all_rows = 0, expected = 0;
  ok = mul(h_.n_ctx, static_cast<std::uint64_t>(h_.n_chunk), n_tokens) &&
       mul(n_tokens, sizeof(TokenId), token_bytes) &&
       mul(row_width_, sizeof(std::uint16_t), row_bytes) &&
       mul(scored_rows(h_.n_ctx), row_bytes, chunk_bytes) &&
       mul(chunk_bytes, static_cast<std::uint64_t>(h_.n_chunk), all_rows) &&
       !__builtin_add_overflow(kHeaderBytes + token_bytes, all_rows, &expected);
  if (!ok || expected != size) {
    std::string msg = what + " has " + std::to_string(size) + " bytes, but its header (n_ctx " +
                      std::to_string(h_.n_ctx) + ", n_vocab " + std::to_string(h_.n_vocab) +
                      ", n_chunk " + std::to_string(h_.n_chunk) + ") needs ";
    msg += ok ? std::to_string(expected) + " bytes" : "more than 2^64 bytes";
    if (ok && size < expected) {
      const std::uint64_t whole =
          size < kHeaderBytes + token_bytes ? 0 : (size - kHeaderBytes - token_bytes) / chunk_bytes;
      msg += ": the file is truncated (" + std::to_string(whole) + " whole chunks of " +
             std::to_string(h_.n_chunk) + "; was the writing run stopped?)";
    } else if (ok) {
      msg += ": the file has trailing bytes";
    }
    throw Error(msg);
  }
  tokens_.resize(n_tokens);  // bounded by the file size, checked above
  if (std::fread(tokens_.data(), sizeof(TokenId), tokens_.size(), f_.get()) != tokens_.size())
    throw Error("cannot read the tokens of " + what);
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    if (tokens_[i] < 0 || tokens_[i] >= h_.n_vocab) {
      throw Error(what + ": token " + std::to_string(i) + " is id " + std::to_string(tokens_[i]) +
                  ", outside its vocabulary of " + std::to_string(h_.n_vocab));
    }
  }
  rows_left_ = row_count(h_);
}

void LogprobFileReader::read_rows(std::span<std::uint16_t> rows) {
  FOLIO_CHECK(rows.size() % row_width_ == 0 && rows.size() / row_width_ <= rows_left_);
  if (std::fread(rows.data(), sizeof(std::uint16_t), rows.size(), f_.get()) != rows.size())
    throw Error("cannot read " + path_ + " (did it change during the run?)");
  rows_left_ -= rows.size() / row_width_;
}

}  // namespace folio::eval
