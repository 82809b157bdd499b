// The importance matrix without a model: sums of squares per column over
// the rows it is shown, importances, the llama.cpp imatrix GGUF round trip
// (the layout llama-imatrix writes, checked tensor by tensor), bad files.
#include "calib/imatrix.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "base/error.h"
#include "gguf/gguf_file.h"
#include "gguf/writer.h"

namespace folio::calib {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed())))
      .string();
}

std::vector<std::uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<std::uint8_t> b(v.size() * sizeof(float));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST(Imatrix, SumsSquaresPerColumnOverEveryRow) {
  Imatrix m;
  const std::vector<float> a = {1, 2, 3, -1, 0, 2};  // 2 rows of 3
  m.observe("blk.0.attn_q.weight", a.data(), 2, 3);
  const std::vector<float> b = {0.5f, -2, 1};
  m.observe("blk.0.attn_q.weight", b.data(), 1, 3);
  const ImatrixEntry& e = m.entries().at("blk.0.attn_q.weight");
  EXPECT_EQ(e.count, 3u);
  EXPECT_DOUBLE_EQ(e.sums[0], 1 + 1 + 0.25);
  EXPECT_DOUBLE_EQ(e.sums[1], 4 + 0 + 4);
  EXPECT_DOUBLE_EQ(e.sums[2], 9 + 4 + 1);
  const std::vector<float> imp = m.importance("blk.0.attn_q.weight");
  ASSERT_EQ(imp.size(), 3u);
  EXPECT_FLOAT_EQ(imp[0], 2.25f / 3);
  EXPECT_FLOAT_EQ(imp[1], 8.0f / 3);
  EXPECT_TRUE(m.importance("blk.1.attn_q.weight").empty());
  EXPECT_THROW(m.observe("blk.0.attn_q.weight", a.data(), 1, 2), Error);  // width changed
}

TEST(Imatrix, RoundTripsThroughLlamaCppsLayout) {
  Imatrix m;
  m.datasets = {"calibration.txt"};
  m.chunk_count = 7;
  m.chunk_size = 512;
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  m.observe("blk.0.ffn_down.weight", x.data(), 2, 4);
  m.observe("blk.1.attn_v.weight", x.data(), 4, 2);
  const std::string path = temp_path("imatrix-rt.gguf");
  m.write(path);

  const auto f = gguf::GgufFile::open(path);  // llama-imatrix's layout
  EXPECT_EQ(f.get_string("general.type"), "imatrix");
  EXPECT_EQ(f.get_uint("imatrix.chunk_count"), 7u);
  EXPECT_EQ(f.get_uint("imatrix.chunk_size"), 512u);
  const gguf::TensorInfo* sums = f.find_tensor("blk.0.ffn_down.weight.in_sum2");
  const gguf::TensorInfo* counts = f.find_tensor("blk.0.ffn_down.weight.counts");
  ASSERT_NE(sums, nullptr);
  ASSERT_NE(counts, nullptr);
  EXPECT_EQ(sums->dims, (std::vector<std::uint64_t>{4, 1}));
  EXPECT_EQ(counts->dims, (std::vector<std::uint64_t>{1, 1}));
  float c = 0;
  std::memcpy(&c, counts->data.data(), sizeof c);
  EXPECT_EQ(c, 2.0f);

  const Imatrix r = Imatrix::read(path);
  EXPECT_EQ(r.datasets, m.datasets);
  EXPECT_EQ(r.chunk_count, 7u);
  EXPECT_EQ(r.entries().size(), 2u);
  EXPECT_EQ(r.importance("blk.1.attn_v.weight"), m.importance("blk.1.attn_v.weight"));
  EXPECT_EQ(r.importance("blk.0.ffn_down.weight"), m.importance("blk.0.ffn_down.weight"));
  std::filesystem::remove(path);
}

std::string read_error(const gguf::GgufWriter& w, const std::string& name) {
  const std::string path = temp_path(name);
  w.write_file(path);
  try {
    Imatrix::read(path);
  } catch (const Error& e) {
    std::filesystem::remove(path);
    return e.what();
  }
  std::filesystem::remove(path);
  return "<no error>";
}

TEST(Imatrix, BadFilesAreErrorsThatSayWhy) {
  {
    gguf::GgufWriter w;  // a model, not an imatrix
    w.add_tensor("blk.0.attn_q.weight", {4, 1}, gguf::TensorType::F32, f32_bytes({1, 2, 3, 4}));
    EXPECT_NE(read_error(w, "im-model.gguf").find("not an imatrix"), std::string::npos);
  }
  {
    gguf::GgufWriter w;
    w.add_tensor("a.in_sum2", {2, 1}, gguf::TensorType::F32, f32_bytes({1, 2}));
    EXPECT_NE(read_error(w, "im-nocounts.gguf").find("sums but no counts"), std::string::npos);
  }
  {
    gguf::GgufWriter w;
    w.add_tensor("a.in_sum2", {2, 2}, gguf::TensorType::F32, f32_bytes({1, 2, 3, 4}));
    w.add_tensor("a.counts", {1, 2}, gguf::TensorType::F32, f32_bytes({1, 1}));
    EXPECT_NE(read_error(w, "im-experts.gguf").find("per-expert"), std::string::npos);
  }
  {
    gguf::GgufWriter w;
    w.add_tensor("a.in_sum2", {2, 1}, gguf::TensorType::F32, f32_bytes({1, -2}));
    w.add_tensor("a.counts", {1, 1}, gguf::TensorType::F32, f32_bytes({1}));
    EXPECT_NE(read_error(w, "im-neg.gguf").find("negative"), std::string::npos);
  }
  {
    gguf::GgufWriter w;
    EXPECT_NE(read_error(w, "im-empty.gguf").find("no imatrix entries"), std::string::npos);
  }
}

}  // namespace
}  // namespace folio::calib
