// The safetensors reader on images built here: tensors found with the right
// dtype, shape and bytes; every kind of corruption refused with a message
// naming it; a checkpoint's shards indexed and duplicates refused.
#include "hf/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"

namespace folio::hf {
namespace {

std::vector<std::uint8_t> image(const std::string& header, std::size_t data_bytes,
                                std::uint64_t claimed_size = 0) {
  const std::uint64_t n = claimed_size != 0 ? claimed_size : header.size();
  std::vector<std::uint8_t> out(8 + header.size() + data_bytes);
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, header.data(), header.size());
  for (std::size_t i = 0; i < data_bytes; ++i)
    out[8 + header.size() + i] = static_cast<std::uint8_t>(i);
  return out;
}

void expect_error(const std::vector<std::uint8_t>& bytes, const std::string& needle) {
  try {
    SafetensorsFile::parse(bytes, "t.safetensors");
    FAIL() << "accepted; expected an error containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("t.safetensors"), std::string::npos) << e.what();
  }
}

TEST(Safetensors, ReadsTensorsAndMetadata) {
  const auto bytes = image(
      R"({"__metadata__": {"format": "pt"},
          "a": {"dtype": "F16", "shape": [2, 3], "data_offsets": [0, 12]},
          "b": {"dtype": "I32", "shape": [4], "data_offsets": [12, 28]},
          "e": {"dtype": "F32", "shape": [0], "data_offsets": [28, 28]}})",
      28);
  const auto f = SafetensorsFile::parse(bytes, "t.safetensors");
  ASSERT_EQ(f.tensors().size(), 3u);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  const auto c = Checkpoint::from_files({});
  EXPECT_EQ(c.find("a"), nullptr);
  const SafeTensor* a = nullptr;
  const SafeTensor* b = nullptr;
  for (const auto& t : f.tensors()) {
    if (t.name == "a") a = &t;
    if (t.name == "b") b = &t;
  }
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->dtype, Dtype::F16);
  EXPECT_EQ(a->shape, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(a->n_elements, 6u);
  EXPECT_EQ(a->data.size(), 12u);
  EXPECT_EQ(a->data[0], 0);
  EXPECT_EQ(b->data.size(), 16u);
  EXPECT_EQ(b->data[0], 12);  // data bytes are their own offsets
}

TEST(Safetensors, RefusesCorruptFiles) {
  expect_error({1, 2, 3}, "too short");
  expect_error(image("{}", 0, 1ull << 40), "100 MB");
  expect_error(image("{}", 0, 64), "past the end");
  expect_error(image("{\"a\": ", 0), "not valid JSON");
  expect_error(image("[1, 2]", 0), "not a JSON object");
  expect_error(image(R"({"a": {"dtype": "F16", "shape": [2], "data_offsets": [0, 8]}})", 4),
               "outside the data section");
  expect_error(image(R"({"a": {"dtype": "F16", "shape": [3], "data_offsets": [0, 4]}})", 4),
               "needs 6");
  expect_error(image(R"({"a": {"dtype": "F8_E4M3", "shape": [4], "data_offsets": [0, 4]}})", 4),
               "not supported");
  expect_error(image(R"({"a": {"dtype": "F16", "shape": [2], "data_offsets": [4, 0]}})", 4),
               "outside");
  expect_error(image(R"({"a": {"dtype": "F16", "shape": [-2], "data_offsets": [0, 4]}})", 4),
               "not an unsigned");
  expect_error(
      image(
          R"({"a": {"dtype": "U8", "shape": [4294967296, 4294967296, 2], "data_offsets": [0, 4]}})",
          4),
      "overflows");
  expect_error(image(R"({"a": {"dtype": "F16", "shape": [2], "data_offsets": [0]}})", 4),
               "data_offsets");
  expect_error(image(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
                         "b": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}})",
                     6),
               "overlap");
  expect_error(image(R"({"__metadata__": {"x": 1}})", 0), "not a string");
}

TEST(Checkpoint, IndexesShardsAndRefusesDuplicates) {
  const auto one = image(R"({"x": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}})", 1);
  const auto two = image(R"({"y": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}})", 1);
  std::vector<SafetensorsFile> files;
  files.push_back(SafetensorsFile::parse(one, "1.safetensors"));
  files.push_back(SafetensorsFile::parse(two, "2.safetensors"));
  const auto c = Checkpoint::from_files(std::move(files));
  EXPECT_EQ(c.names(), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(c.require("y").file, "2.safetensors");
  EXPECT_THROW(c.require("z"), Error);

  std::vector<SafetensorsFile> dup;
  dup.push_back(SafetensorsFile::parse(one, "1.safetensors"));
  dup.push_back(SafetensorsFile::parse(one, "3.safetensors"));
  try {
    Checkpoint::from_files(std::move(dup));
    FAIL() << "a duplicate tensor was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("3.safetensors"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace folio::hf
