// The downloaded models (scripts/setup) parse, with the expected shapes, and
// every tensor's data lies inside the file without overlapping another.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"

namespace folio::gguf {
namespace {

std::string model_path(const std::string& file) {
  std::string p = std::string(FOLIO_SOURCE_DIR) + "/models/" + file;
  if (!std::filesystem::exists(p)) {
    ADD_FAILURE() << p << " is missing: run scripts/setup to download the test models";
  }
  return p;
}

void expect_tensor_spans_valid(const GgufFile& f) {
  EXPECT_EQ(f.data_offset() % f.alignment(), 0u);
  const std::uint8_t* base =
      f.tensors().front().data.data() - f.tensors().front().offset - f.data_offset();
  std::vector<const TensorInfo*> sorted;
  for (const TensorInfo& t : f.tensors()) {
    SCOPED_TRACE(std::string(t.name));
    EXPECT_EQ(t.offset % f.alignment(), 0u);
    EXPECT_EQ(t.data.size(), t.n_bytes);
    EXPECT_GT(t.n_bytes, 0u);
    // The view starts where the header says and ends inside the file.
    EXPECT_EQ(t.data.data(), base + f.data_offset() + t.offset);
    EXPECT_LE(f.data_offset() + t.offset + t.n_bytes, f.file_size());
    sorted.push_back(&t);
  }
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    EXPECT_LE(sorted[i - 1]->offset + sorted[i - 1]->n_bytes, sorted[i]->offset);
  }
  // The data section is (almost) entirely tensor data: at most alignment-1 padding per tensor.
  const TensorInfo& last = *sorted.back();
  EXPECT_LE(f.file_size() - (f.data_offset() + last.offset + last.n_bytes), f.alignment());
}

TEST(RealModels, SmolLM2) {
  const GgufFile f = GgufFile::open(model_path("SmolLM2-135M-Instruct.Q4_1.gguf"));
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.tensors().size(), 272u);
  EXPECT_EQ(f.require_string("general.architecture"), "llama");
  EXPECT_EQ(f.require_uint("llama.block_count"), 30u);
  EXPECT_EQ(f.get_array("tokenizer.ggml.tokens")->size(), 49152u);
  const TensorInfo* emb = f.find_tensor("token_embd.weight");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->dims, (std::vector<std::uint64_t>{576, 49152}));
  expect_tensor_spans_valid(f);
}

TEST(RealModels, Gemma3) {
  const GgufFile f = GgufFile::open(model_path("gemma-3-270m-q4_k_m.gguf"));
  EXPECT_EQ(f.tensors().size(), 236u);
  EXPECT_EQ(f.require_string("general.architecture"), "gemma3");
  EXPECT_EQ(f.require_uint("gemma3.block_count"), 18u);
  EXPECT_EQ(f.get_array("tokenizer.ggml.tokens")->size(), 262144u);
  expect_tensor_spans_valid(f);
}

}  // namespace
}  // namespace folio::gguf
