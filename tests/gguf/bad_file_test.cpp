// Hand-made broken GGUF files: each must fail with folio::Error whose message
// names what is wrong; none may crash, hang or allocate without bound.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"
#include "gguf/gguf_file.h"
#include "gguf/writer.h"
#include "raw_gguf.h"

namespace folio::gguf {
namespace {

using testing::RawGguf;
using VT = ValueType;

// Parses `bytes`, expecting folio::Error with `needle` in its message.
void expect_error(const std::vector<std::uint8_t>& bytes, const std::string& needle) {
  try {
    (void)GgufFile::parse(bytes, "bad.gguf");
    ADD_FAILURE() << "parsed without error; expected: " << needle;
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(needle), std::string::npos)
        << "message: " << msg << "\nexpected: " << needle;
    EXPECT_NE(msg.find("bad.gguf"), std::string::npos) << "message does not name the file: " << msg;
  }
}
void expect_error(const RawGguf& raw, const std::string& needle) {
  expect_error(raw.bytes(), needle);
}

// One metadata entry, a 4-element F32 tensor at offset 0, and its data.
RawGguf with_tensor(std::uint32_t type, std::initializer_list<std::uint64_t> dims,
                    std::uint64_t offset, std::size_t data_bytes) {
  RawGguf r;
  r.header(1, 0).tensor("w", dims, type, offset).pad_to(32).fill(data_bytes, 0x5a);
  return r;
}

TEST(BadGguf, Header) {
  RawGguf magic;
  magic.u32(0x4c4d4747).u32(3).u64(0).u64(0);  // "GGML"
  expect_error(magic, "not a GGUF file: the first 4 bytes are 0x47474d4c");
  expect_error(RawGguf().header(0, 0, 1),
               "GGUF version 1 (from before August 2023) is not supported");
  expect_error(RawGguf().header(0, 0, 7), "unsupported GGUF version 7 (supported: 2, 3)");
  expect_error(RawGguf().header(0, 0, 0x03000000), "big-endian GGUF files are not supported");
  expect_error(RawGguf().header(0, 0, 0x02000000), "big-endian");
  expect_error(std::vector<std::uint8_t>{}, "truncated while reading magic");
}

TEST(BadGguf, EmptyFileWithHeaderOnlyIsValid) {
  // No tensors and no metadata: valid (nothing to pad).
  EXPECT_NO_THROW((void)GgufFile::parse(RawGguf().header(0, 0).bytes()));
}

TEST(BadGguf, HugeCounts) {
  expect_error(RawGguf().header(1ull << 40, 0),
               "tensor count 1099511627776 cannot fit in a file of 24 bytes");
  expect_error(RawGguf().header(0, ~0ull), "metadata count 18446744073709551615 cannot fit");
  RawGguf arr;
  arr.header(0, 1).str("a").type(VT::ARRAY).type(VT::UINT32).u64(1ull << 60).u32(1);
  expect_error(
      arr, "metadata 'a': array of 1152921504606846976 uint32 elements cannot fit in the 4 bytes");
  RawGguf arr_s;
  arr_s.header(0, 1).str("s").type(VT::ARRAY).type(VT::STRING).u64(3).u64(0).u64(0);
  expect_error(arr_s, "metadata 's': array of 3 string elements cannot fit in the 16 bytes");
}

TEST(BadGguf, ArrayElementsAreCappedInTotal) {
  // 2^23 + 1 one-byte elements fit in the file but exceed the total cap; the
  // reader must refuse before allocating a Value per element.
  const std::uint64_t n = (1ull << 23) + 1;
  RawGguf r;
  r.header(0, 1).str("big").type(VT::ARRAY).type(VT::UINT8).u64(n).fill(n);
  expect_error(r, "metadata arrays hold more than 8388608 elements in total");
}

TEST(BadGguf, HugeStrings) {
  expect_error(RawGguf().header(0, 1).u64(1ull << 63).fill(8),
               "metadata entry 0 key: string length 9223372036854775808 exceeds the 8 bytes left");
  RawGguf val;
  val.header(0, 1).str("k").type(VT::STRING).u64(~0ull).fill(8);
  expect_error(val, "metadata 'k': string length 18446744073709551615 exceeds the 8 bytes left");
  RawGguf key;
  key.header(0, 1).str(std::string(70000, 'k')).type(VT::UINT8).u8(0);
  expect_error(key, "string length 70000 exceeds the limit of 65536");
  RawGguf name;
  name.header(1, 0).u64(1ull << 40).fill(32);
  expect_error(name, "tensor 0 name: string length 1099511627776 exceeds");
}

TEST(BadGguf, NestedDepth) {
  // Arrays nested `levels` deep around one uint8.
  auto nested = [](int levels) {
    RawGguf r;
    r.header(0, 1).str("deep").type(VT::ARRAY);
    for (int i = 1; i < levels; ++i) r.type(VT::ARRAY).u64(1);
    r.type(VT::UINT8).u64(1).u8(42);
    return r;
  };
  EXPECT_NO_THROW((void)GgufFile::parse(nested(8).bytes()));
  expect_error(nested(9), "metadata 'deep': arrays nested deeper than 8");
  expect_error(nested(100000), "arrays nested deeper than 8");  // depth bomb: no stack overflow
}

TEST(BadGguf, UnknownValueTypes) {
  expect_error(RawGguf().header(0, 1).str("k").u32(13).u32(0),
               "metadata 'k': unknown value type 13");
  expect_error(RawGguf().header(0, 1).str("k").u32(0xffffffff), "unknown value type 4294967295");
  expect_error(RawGguf().header(0, 1).str("k").type(VT::ARRAY).u32(99).u64(0),
               "metadata 'k': unknown array element type 99");
}

TEST(BadGguf, BadBool) {
  expect_error(RawGguf().header(0, 1).str("b").type(VT::BOOL).u8(2),
               "metadata 'b': bool value 2 is neither 0 nor 1");
  expect_error(RawGguf().header(0, 1).str("b").type(VT::ARRAY).type(VT::BOOL).u64(2).u8(1).u8(255),
               "bool value 255");
}

TEST(BadGguf, DuplicateKey) {
  expect_error(RawGguf().header(0, 2).kv_u32("k", 1).kv_u32("k", 2), "duplicate metadata key 'k'");
}

TEST(BadGguf, BadAlignment) {
  expect_error(RawGguf().header(0, 1).kv_u32("general.alignment", 0),
               "'general.alignment' = 0 is not a power of two");
  expect_error(RawGguf().header(0, 1).kv_u32("general.alignment", 3),
               "'general.alignment' = 3 is not");
  expect_error(RawGguf().header(0, 1).kv_u32("general.alignment", 1u << 31), "= 2147483648 is not");
  expect_error(RawGguf()
                   .header(0, 1)
                   .str("general.alignment")
                   .type(VT::INT32)
                   .u32(static_cast<std::uint32_t>(-32)),
               "= -32 is not");
  expect_error(RawGguf().header(0, 1).str("general.alignment").type(VT::FLOAT32).put(32.0f),
               "'general.alignment' must be an integer");
  expect_error(RawGguf().header(0, 1).str("general.alignment").type(VT::STRING).str("32"),
               "'general.alignment' must be an integer");
}

TEST(BadGguf, TensorShapeAndType) {
  expect_error(with_tensor(0, {}, 0, 32), "tensor 'w': 0 dimensions (supported: 1 to 4)");
  expect_error(with_tensor(0, {1, 1, 1, 1, 1}, 0, 32), "tensor 'w': 5 dimensions");
  expect_error(with_tensor(4, {4}, 0, 32),
               "tensor 'w': unknown tensor type 4");  // Q4_2, removed from ggml
  expect_error(with_tensor(40, {4}, 0, 32), "unknown tensor type 40");
  expect_error(with_tensor(0, {1ull << 32, 1ull << 32}, 0, 32),
               "tensor 'w': element count overflows (dimension 1");
  expect_error(with_tensor(0, {1ull << 63}, 0, 32), "element count overflows (dimension 0");
  expect_error(with_tensor(28, {1ull << 62}, 0, 32), "tensor 'w': byte size overflows");  // F64
  expect_error(with_tensor(2, {33}, 0, 32),
               "tensor 'w': row length 33 is not a multiple of Q4_0's block size 32");
  expect_error(with_tensor(12, {128, 2}, 0, 144),
               "row length 128 is not a multiple of Q4_K's block size 256");
  RawGguf empty_name;
  empty_name.header(1, 0).tensor("", {1}, 0, 0).pad_to(32).fill(4);
  expect_error(empty_name, "tensor 0 has an empty name");
}

TEST(BadGguf, TensorPlacement) {
  expect_error(with_tensor(0, {4}, 16, 64),
               "tensor 'w': data offset 16 is not a multiple of the alignment 32");
  RawGguf al64;
  al64.header(1, 1).kv_u32("general.alignment", 64).tensor("w", {4}, 0, 32).pad_to(64).fill(128);
  expect_error(al64, "data offset 32 is not a multiple of the alignment 64");
  expect_error(with_tensor(0, {16}, 0, 63),
               "tensor 'w' data [64, 128) lies beyond the end of the file (127 bytes)");
  expect_error(with_tensor(0, {1}, 1ull << 62, 32), "lies beyond the end of the file");
  expect_error(with_tensor(0, {1}, ~0ull - 31, 32), "lies beyond the end of the file");
  RawGguf overlap;
  overlap.header(2, 0).tensor("a", {16}, 0, 0).tensor("b", {16}, 0, 32).pad_to(32).fill(96);
  expect_error(overlap, "tensors 'a' and 'b' overlap in the data section");
  RawGguf same;
  same.header(2, 0).tensor("a", {8}, 0, 0).tensor("b", {1}, 0, 0).pad_to(32).fill(32);
  expect_error(same, "overlap");
  RawGguf dup;
  dup.header(2, 0).tensor("w", {1}, 0, 0).tensor("w", {1}, 0, 32).pad_to(32).fill(64);
  expect_error(dup, "duplicate tensor name 'w'");
  // A zero-byte tensor in a file that stops before its (padded) data section.
  RawGguf no_data;
  no_data.header(1, 0).tensor("z", {0}, 0, 0);
  expect_error(no_data,
               "the data section starts at byte 64, beyond the end of the file (57 bytes)");
}

// A small valid file with a bit of everything; every proper prefix must fail cleanly.
TEST(BadGguf, TruncatedAtEveryByte) {
  GgufWriter w;
  w.add("general.architecture", MetaValue::string("llama"));
  w.add("n", MetaValue::array(VT::ARRAY,
                              {MetaValue::array(VT::INT16, {MetaValue::integer(VT::INT16, 5)}),
                               MetaValue::array(VT::STRING, {MetaValue::string("xy")})}));
  w.add("b", MetaValue::boolean(true));
  w.add("f", MetaValue::f64(2.5));
  w.add_tensor("a", {2}, TensorType::F32, std::vector<std::uint8_t>(8, 1));
  w.add_tensor("b", {32}, TensorType::Q8_0, std::vector<std::uint8_t>(34, 2));
  const std::vector<std::uint8_t> full = w.to_bytes();
  ASSERT_NO_THROW((void)GgufFile::parse(full));
  for (std::size_t n = 0; n < full.size(); ++n) {
    const std::vector<std::uint8_t> prefix(full.begin(),
                                           full.begin() + static_cast<std::ptrdiff_t>(n));
    try {
      (void)GgufFile::parse(prefix, "cut.gguf");
      ADD_FAILURE() << "a " << n << "-byte prefix of a " << full.size() << "-byte file parsed";
    } catch (const Error& e) {
      const std::string msg = e.what();
      const bool named = msg.find("truncated") != std::string::npos ||
                         msg.find("bytes left") != std::string::npos ||
                         msg.find("cannot fit") != std::string::npos ||
                         msg.find("beyond the end of the file") != std::string::npos;
      EXPECT_TRUE(named) << "prefix " << n << ": " << msg;
    }
  }
}

}  // namespace
}  // namespace folio::gguf
