// llama.cpp's base log-probability file: the compressed rows read back within
// their quantization step, and the reader refuses what it cannot trust
// before allocating for it.
#include "eval/logprob_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"

namespace folio::eval {
namespace {

std::vector<double> log_softmax(const std::vector<float>& x) {
  double max = x[0];
  for (const float v : x) max = std::max(max, static_cast<double>(v));
  double sum = 0;
  for (const float v : x) sum += std::exp(v - max);
  std::vector<double> out;
  for (const float v : x) out.push_back(v - max - std::log(sum));
  return out;
}

TEST(LogprobRow, WidthIsLlamaCppsNv) {
  EXPECT_EQ(logprob_row_width(4), 8u);
  EXPECT_EQ(logprob_row_width(5), 10u);
  EXPECT_EQ(logprob_row_width(49152), 49156u);
  EXPECT_EQ(scored_rows(512), 255u);
  EXPECT_EQ(scored_rows(7), 3u);
}

TEST(LogprobRow, RoundTripWithinHalfAStep) {
  std::mt19937 rng(7);
  for (const std::size_t n : {1u, 2u, 3u, 17u, 1000u, 32001u}) {
    std::normal_distribution<float> d(0, 4);
    std::vector<float> logits(n);
    for (float& x : logits) x = d(rng);
    std::vector<std::uint16_t> row(logprob_row_width(n), 0xffff);
    compress_logprobs(logits, row);
    const CompressedRow r(row, n);
    const std::vector<double> want = log_softmax(logits);
    const double top = *std::max_element(want.begin(), want.end());
    // The step is <= 16 / 65535 nats; f32 arithmetic adds a little.
    const double tol = r.scale() / 2 + 1e-5;
    EXPECT_LE(r.scale(), 16.f / 65535.f * 1.0001f) << n;
    for (std::size_t i = 0; i < n; ++i) {
      if (want[i] > top - 16) {
        EXPECT_NEAR(r.log_prob(i), want[i], tol) << "n " << n << " i " << i;
      } else {  // at or below the floor: reads back as the floor, >= the truth
        EXPECT_NEAR(r.log_prob(i), top - 16, tol) << "n " << n << " i " << i;
      }
    }
    if (n % 2 == 1) {
      EXPECT_EQ(row.back(), 0) << "padding";
    }
  }
}

TEST(LogprobRow, FlatRowIsUniform) {
  const std::vector<float> logits(10, 3.5f);
  std::vector<std::uint16_t> row(logprob_row_width(10));
  compress_logprobs(logits, row);
  const CompressedRow r(row, 10);
  EXPECT_EQ(r.scale(), 0.f);
  for (std::size_t i = 0; i < 10; ++i) EXPECT_NEAR(r.log_prob(i), -std::log(10.0), 1e-6);
}

TEST(LogprobRow, MatchesLlamaCppBytes) {
  // logits {0, 1, 2, -20}: max 2, floor max(-20, 2 - 16) = -14, scale 16 / 65535,
  // q = round((x + 14) / scale): 57343, 61439, 65535, 0 (below the floor).
  const std::vector<float> logits = {0, 1, 2, -20};
  std::vector<std::uint16_t> row(logprob_row_width(4));
  compress_logprobs(logits, row);
  const CompressedRow r(row, 4);
  EXPECT_FLOAT_EQ(r.scale(), 16.f / 65535.f);
  const double lse = std::log(1 + std::exp(1.0) + std::exp(2.0) + std::exp(-20.0));
  EXPECT_NEAR(r.min_log_prob(), -14 - lse, 1e-5);
  EXPECT_EQ(r.q(0), 57343);
  EXPECT_EQ(r.q(1), 61439);
  EXPECT_EQ(r.q(2), 65535);
  EXPECT_EQ(r.q(3), 0);
}

class LogprobFileTest : public ::testing::Test {
 protected:
  std::string path_ =
      ::testing::TempDir() + "/folio_logprob_file_test_" + std::to_string(::getpid()) + ".bin";
  void TearDown() override { std::remove(path_.c_str()); }

  // A valid file: n_ctx 8 (3 scored rows), n_vocab 5, 2 chunks.
  std::vector<std::uint16_t> write_valid() {
    const LogprobFileHeader h{8, 5, 2};
    std::vector<TokenId> tokens(16);
    for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<TokenId>(i % 5);
    LogprobFileWriter w(path_, h, tokens);
    std::vector<std::uint16_t> rows;
    for (int r = 0; r < 6; ++r) {
      std::vector<std::uint16_t> row(logprob_row_width(5));
      compress_logprobs(std::vector<float>{1.f * r, 0, -1, 2, 0.5f}, row);
      rows.insert(rows.end(), row.begin(), row.end());
    }
    w.write_rows(std::span(rows).first(rows.size() / 2));
    w.write_rows(std::span(rows).subspan(rows.size() / 2));
    w.close();
    return rows;
  }

  std::vector<char> bytes() {
    std::vector<char> b(std::filesystem::file_size(path_));
    std::FILE* f = std::fopen(path_.c_str(), "rb");
    EXPECT_EQ(std::fread(b.data(), 1, b.size(), f), b.size());
    std::fclose(f);
    return b;
  }
  void put(const std::vector<char>& b) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    std::fwrite(b.data(), 1, b.size(), f);
    std::fclose(f);
  }
  // The reader's error message (and that it is an Error, not a crash).
  std::string open_error() {
    try {
      LogprobFileReader r(path_);
    } catch (const Error& e) {
      return e.what();
    }
    return "(opened)";
  }
};

TEST_F(LogprobFileTest, RoundTrip) {
  const std::vector<std::uint16_t> rows = write_valid();
  EXPECT_EQ(std::filesystem::file_size(path_), 20u + 16 * 4 + 6 * 10 * 2);
  const std::vector<char> b = bytes();
  EXPECT_EQ(std::memcmp(b.data(), "_logits_", 8), 0);
  LogprobFileReader r(path_);
  EXPECT_EQ(r.header().n_ctx, 8u);
  EXPECT_EQ(r.header().n_vocab, 5);
  EXPECT_EQ(r.header().n_chunk, 2);
  ASSERT_EQ(r.tokens().size(), 16u);
  EXPECT_EQ(r.tokens()[7], 2);
  std::vector<std::uint16_t> got(rows.size());
  r.read_rows(got);
  EXPECT_EQ(got, rows);
}

TEST_F(LogprobFileTest, RefusesWrongMagic) {
  write_valid();
  std::vector<char> b = bytes();
  b[1] = 'L';
  put(b);
  EXPECT_NE(open_error().find("does not start with \"_logits_\""), std::string::npos);
  put({'_', 'l', 'o'});
  EXPECT_NE(open_error().find("not a log-probability file"), std::string::npos);
}

TEST_F(LogprobFileTest, RefusesTruncatedAndTrailing) {
  write_valid();
  std::vector<char> b = bytes();
  b.pop_back();
  put(b);
  const std::string e = open_error();
  EXPECT_NE(e.find("truncated (1 whole chunks of 2"), std::string::npos) << e;
  b.push_back(0);
  b.push_back(0);
  put(b);
  EXPECT_NE(open_error().find("trailing bytes"), std::string::npos);
}

TEST_F(LogprobFileTest, RefusesHugeHeadersWithoutAllocating) {
  write_valid();
  std::vector<char> b = bytes();
  const std::int32_t huge = INT32_MAX;
  std::memcpy(b.data() + 16, &huge, 4);  // n_chunk
  put(b);
  EXPECT_NE(open_error().find("needs "), std::string::npos);
  std::memcpy(b.data() + 12, &huge, 4);  // n_vocab too
  const std::uint32_t ctx = UINT32_MAX / 2;
  std::memcpy(b.data() + 8, &ctx, 4);
  put(b);
  EXPECT_NE(open_error().find("bytes, but its header"), std::string::npos);
  const std::int32_t zero = 0;
  std::memcpy(b.data() + 12, &zero, 4);
  put(b);
  EXPECT_NE(open_error().find("corrupt header"), std::string::npos);
}

TEST_F(LogprobFileTest, RefusesTokensOutsideTheVocabulary) {
  write_valid();
  std::vector<char> b = bytes();
  const std::int32_t bad = 5;
  std::memcpy(b.data() + 20 + 4 * 3, &bad, 4);
  put(b);
  const std::string e = open_error();
  EXPECT_NE(e.find("token 3 is id 5, outside its vocabulary of 5"), std::string::npos) << e;
}

TEST_F(LogprobFileTest, MissingFileNamesThePath) {
  const std::string e = open_error();
  EXPECT_NE(e.find(path_), std::string::npos) << e;
}

}  // namespace
}  // namespace folio::eval
