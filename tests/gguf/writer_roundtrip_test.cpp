// GgufWriter -> GgufFile round trips: every metadata type (nested arrays too),
// versions 2 and 3, custom alignments, tensor data placement. The writer's byte
// encoding is also pinned against a file spelled out field by field.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
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

// Checks that `got` (read back) equals `want` (written), recursively.
void expect_same(const Value& got, const MetaValue& want, const std::string& where) {
  SCOPED_TRACE(where);
  ASSERT_EQ(got.type(), want.type());
  const auto& w = want.storage();
  switch (want.type()) {
    case VT::UINT64:
      if (const auto* u = std::get_if<std::uint64_t>(&w)) {
        EXPECT_EQ(got.as_uint(where), *u);
      } else {
        EXPECT_EQ(got.as_int(where), std::get<std::int64_t>(w));
      }
      return;
    case VT::FLOAT32:
    case VT::FLOAT64: {
      const double x = std::get<double>(w);
      if (std::isnan(x)) {
        EXPECT_TRUE(std::isnan(got.as_float(where)));
      } else {
        EXPECT_EQ(got.as_float(where), x);
        EXPECT_EQ(std::signbit(got.as_float(where)), std::signbit(x));
      }
      return;
    }
    case VT::BOOL:
      EXPECT_EQ(got.as_bool(where), std::get<bool>(w));
      return;
    case VT::STRING:
      EXPECT_EQ(got.as_string(where), std::get<std::string>(w));
      return;
    case VT::ARRAY: {
      EXPECT_EQ(got.elem_type(), want.elem_type());
      const auto& items = std::get<MetaValue::Array>(w);
      ASSERT_EQ(got.as_array(where).size(), items.size());
      for (std::size_t i = 0; i < items.size(); ++i) {
        expect_same(got.as_array(where)[i], items[i], where + "[" + std::to_string(i) + "]");
      }
      return;
    }
    default:
      EXPECT_EQ(got.as_int(where), std::get<std::int64_t>(w));
      return;
  }
}

using KV = std::vector<std::pair<std::string, MetaValue>>;

// One entry per scalar type at its extremes, plus strings and nested arrays.
KV every_type() {
  using L64 = std::numeric_limits<std::int64_t>;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  KV kv;
  kv.emplace_back("u8.max", MetaValue::integer(VT::UINT8, 255));
  kv.emplace_back("i8.min", MetaValue::integer(VT::INT8, -128));
  kv.emplace_back("u16.max", MetaValue::integer(VT::UINT16, 65535));
  kv.emplace_back("i16.min", MetaValue::integer(VT::INT16, -32768));
  kv.emplace_back("u32.max", MetaValue::integer(VT::UINT32, 4294967295LL));
  kv.emplace_back("i32.min", MetaValue::integer(VT::INT32, -2147483648LL));
  kv.emplace_back("u64.max", MetaValue::u64(std::numeric_limits<std::uint64_t>::max()));
  kv.emplace_back("u64.small", MetaValue::integer(VT::UINT64, 7));
  kv.emplace_back("i64.min", MetaValue::integer(VT::INT64, L64::min()));
  kv.emplace_back("i64.max", MetaValue::integer(VT::INT64, L64::max()));
  kv.emplace_back("f32", MetaValue::f32(1.5e-5f));
  kv.emplace_back("f32.negzero", MetaValue::f32(-0.0f));
  kv.emplace_back("f32.inf", MetaValue::f32(static_cast<float>(-inf)));
  kv.emplace_back("f32.nan", MetaValue::f32(static_cast<float>(nan)));
  kv.emplace_back("f64", MetaValue::f64(0.1));
  kv.emplace_back("f64.max", MetaValue::f64(std::numeric_limits<double>::max()));
  kv.emplace_back("bool.t", MetaValue::boolean(true));
  kv.emplace_back("bool.f", MetaValue::boolean(false));
  kv.emplace_back("str", MetaValue::string("héllo ✓ wörld"));
  kv.emplace_back("str.empty", MetaValue::string(""));
  kv.emplace_back("str.nul", MetaValue::string(std::string("a\0b\n", 4)));
  kv.emplace_back("arr.empty", MetaValue::array(VT::INT32, {}));
  kv.emplace_back("arr.f32",
                  MetaValue::array(VT::FLOAT32, {MetaValue::f32(1), MetaValue::f32(-2.25f)}));
  kv.emplace_back("arr.bool", MetaValue::array(
                                  VT::BOOL, {MetaValue::boolean(true), MetaValue::boolean(false)}));
  kv.emplace_back("arr.str",
                  MetaValue::array(VT::STRING, {MetaValue::string("a"), MetaValue::string(""),
                                                MetaValue::string("Ġ t")}));
  kv.emplace_back("arr.u64",
                  MetaValue::array(VT::UINT64, {MetaValue::u64(~0ull), MetaValue::u64(0)}));
  // Arrays of arrays: inner arrays of different element types and lengths, 3 levels deep.
  MetaValue inner_i16 = MetaValue::array(
      VT::INT16, {MetaValue::integer(VT::INT16, -1), MetaValue::integer(VT::INT16, 300)});
  MetaValue inner_str = MetaValue::array(VT::STRING, {MetaValue::string("x")});
  MetaValue inner_empty = MetaValue::array(VT::FLOAT64, {});
  kv.emplace_back("arr.nested", MetaValue::array(VT::ARRAY, {inner_i16, inner_str, inner_empty}));
  kv.emplace_back("arr.deep",
                  MetaValue::array(VT::ARRAY, {MetaValue::array(VT::ARRAY, {inner_i16, inner_str}),
                                               MetaValue::array(VT::ARRAY, {})}));
  return kv;
}

std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed + i * 7);
  return v;
}

struct Case {
  std::uint32_t version;
  std::uint32_t alignment;  // 0 = default (no general.alignment key)
};

class RoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(RoundTrip, EveryTypeAndTensorsSurvive) {
  const Case c = GetParam();
  GgufWriter w(c.version);
  for (auto& [k, v] : every_type()) w.add(k, v);
  if (c.alignment != 0) w.set_alignment(c.alignment);
  // Sizes chosen so that most tensors end off the alignment grid.
  w.add_tensor("f32", {3, 2}, TensorType::F32, pattern(24, 1));
  w.add_tensor("f16", {5}, TensorType::F16, pattern(10, 2));
  w.add_tensor("q4_0", {64, 3}, TensorType::Q4_0, pattern(6 * 18, 3));
  w.add_tensor("q4_k.4d", {256, 1, 2, 1}, TensorType::Q4_K, pattern(2 * 144, 4));
  w.add_tensor("empty", {0}, TensorType::F32, {});
  w.add_tensor("i8", {1}, TensorType::I8, pattern(1, 5));
  const std::vector<std::uint8_t> bytes = w.to_bytes();

  const GgufFile f = GgufFile::parse(bytes, "roundtrip");
  EXPECT_EQ(f.version(), c.version);
  const std::uint64_t align = c.alignment == 0 ? 32 : c.alignment;
  EXPECT_EQ(f.alignment(), align);

  const KV want = every_type();
  const std::size_t extra = c.alignment == 0 ? 0 : 1;
  ASSERT_EQ(f.metadata().size(), want.size() + extra);
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(f.metadata()[i].key, want[i].first);
    expect_same(f.metadata()[i].value, want[i].second, want[i].first);
    EXPECT_EQ(f.find(want[i].first), &f.metadata()[i].value);
  }
  if (extra) {
    EXPECT_EQ(f.get_uint("general.alignment"), c.alignment);
  }

  EXPECT_EQ(f.data_offset() % align, 0u);
  const std::vector<std::pair<std::string, std::vector<std::uint8_t>>> data = {
      {"f32", pattern(24, 1)},      {"f16", pattern(10, 2)}, {"q4_0", pattern(108, 3)},
      {"q4_k.4d", pattern(288, 4)}, {"empty", {}},           {"i8", pattern(1, 5)}};
  ASSERT_EQ(f.tensors().size(), data.size());
  for (std::size_t i = 0; i < data.size(); ++i) {
    const TensorInfo& t = f.tensors()[i];
    SCOPED_TRACE(data[i].first);
    EXPECT_EQ(t.name, data[i].first);
    EXPECT_EQ(t.offset % align, 0u);
    EXPECT_EQ(t.n_bytes, data[i].second.size());
    EXPECT_EQ(t.data.data(), bytes.data() + f.data_offset() + t.offset);
    EXPECT_TRUE(
        std::equal(t.data.begin(), t.data.end(), data[i].second.begin(), data[i].second.end()));
    EXPECT_EQ(f.find_tensor(data[i].first), &t);
  }
  EXPECT_EQ(f.tensors()[2].type, TensorType::Q4_0);
  EXPECT_EQ(f.tensors()[2].n_elements, 192u);
  EXPECT_EQ(f.tensors()[3].dims, (std::vector<std::uint64_t>{256, 1, 2, 1}));

  // A copy through MetaValue::from writes the identical image.
  GgufWriter copy(c.version);
  for (const MetadataEntry& e : f.metadata())
    copy.add(std::string(e.key), MetaValue::from(e.value));
  for (const TensorInfo& t : f.tensors()) {
    copy.add_tensor(std::string(t.name), t.dims, t.type, {t.data.begin(), t.data.end()});
  }
  EXPECT_EQ(copy.to_bytes(), bytes);
}

INSTANTIATE_TEST_SUITE_P(Versions, RoundTrip,
                         ::testing::Values(Case{3, 0}, Case{2, 0}, Case{3, 1}, Case{2, 8},
                                           Case{3, 64}, Case{3, 4096}),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           return "v" + std::to_string(p.param.version) + "_align" +
                                  std::to_string(p.param.alignment);
                         });

// The writer's encoding, pinned against the format spelled out by hand.
TEST(GgufWriter, BytesMatchHandSpelledLayout) {
  GgufWriter w(3);
  w.add("a", MetaValue::integer(VT::UINT32, 7));
  w.add("n", MetaValue::array(VT::ARRAY,
                              {MetaValue::array(VT::INT8, {MetaValue::integer(VT::INT8, -1)})}));
  w.add_tensor("t", {2}, TensorType::F16, {0x11, 0x22, 0x33, 0x44});
  w.add_tensor("u", {1}, TensorType::F32, {1, 2, 3, 4});

  RawGguf r;
  r.header(2, 2).kv_u32("a", 7);
  r.str("n").type(VT::ARRAY).type(VT::ARRAY).u64(1).type(VT::INT8).u64(1).u8(0xff);
  r.tensor("t", {2}, 1, 0).tensor("u", {1}, 0, 32).pad_to(32);
  r.u8(0x11).u8(0x22).u8(0x33).u8(0x44).pad_to(32).u8(1).u8(2).u8(3).u8(4);
  EXPECT_EQ(w.to_bytes(), r.bytes());
}

TEST(GgufWriter, RejectsWhatTheReaderWouldReject) {
  GgufWriter w;
  w.add("k", MetaValue::boolean(true));
  EXPECT_THROW(w.add("k", MetaValue::boolean(false)), Error);
  EXPECT_THROW((void)MetaValue::integer(VT::UINT8, 256), Error);
  EXPECT_THROW((void)MetaValue::integer(VT::INT32, -2147483649LL), Error);
  EXPECT_THROW((void)MetaValue::integer(VT::FLOAT32, 1), Error);
  EXPECT_THROW((void)MetaValue::array(VT::INT32, {MetaValue::integer(VT::INT64, 1)}), Error);
  EXPECT_THROW(w.set_alignment(0), Error);
  EXPECT_THROW(w.set_alignment(48), Error);
  EXPECT_THROW(w.add_tensor("q", {31}, TensorType::Q8_0, {}), Error);  // not a whole block
  EXPECT_THROW(w.add_tensor("f", {4}, TensorType::F32, pattern(15, 0)), Error);  // wrong size
  EXPECT_THROW(w.add_tensor("d", {1, 1, 1, 1, 1}, TensorType::F32, pattern(4, 0)), Error);
  w.add_tensor("x", {1}, TensorType::F32, pattern(4, 0));
  EXPECT_THROW(w.add_tensor("x", {1}, TensorType::F32, pattern(4, 0)), Error);
  EXPECT_THROW(GgufWriter(1), Error);
  EXPECT_THROW(GgufWriter(4), Error);
}

TEST(GgufWriter, WritesFiles) {
  GgufWriter w(2);
  w.add("general.architecture", MetaValue::string("test"));
  w.add_tensor("x", {4}, TensorType::F32, pattern(16, 9));
  const std::string path =
      ::testing::TempDir() + "/folio_writer_test_" + std::to_string(::getpid()) + ".gguf";
  w.write_file(path);
  const GgufFile f = GgufFile::open(path);
  EXPECT_EQ(f.version(), 2u);
  EXPECT_EQ(f.require_string("general.architecture"), "test");
  EXPECT_EQ(f.file_size(), w.to_bytes().size());
  EXPECT_THROW(w.write_file("/nonexistent-dir/x.gguf"), Error);
  std::remove(path.c_str());
}

// Value::to_string is what `folio info --metadata` prints.
TEST(GgufValue, ToStringIsShortAndExact) {
  GgufWriter w;
  w.add("f32", MetaValue::f32(1e-5f));
  w.add("f64", MetaValue::f64(0.1));
  w.add("tiny", MetaValue::f32(1e-7f));
  w.add("big", MetaValue::f32(1e6f));
  w.add("i8", MetaValue::integer(VT::INT8, -5));
  w.add("b", MetaValue::boolean(false));
  w.add("s", MetaValue::string("a\nb"));
  w.add("a", MetaValue::array(VT::INT32,
                              {MetaValue::integer(VT::INT32, 1), MetaValue::integer(VT::INT32, 2),
                               MetaValue::integer(VT::INT32, 3)}));
  const auto bytes = w.to_bytes();
  const GgufFile f = GgufFile::parse(bytes);
  EXPECT_EQ(f.find("f32")->to_string(), "1e-05");
  EXPECT_EQ(f.find("f64")->to_string(), "0.1");
  EXPECT_EQ(f.find("tiny")->to_string(), "1e-07");
  EXPECT_EQ(f.find("big")->to_string(), "1e+06");
  EXPECT_EQ(f.find("i8")->to_string(), "-5");
  EXPECT_EQ(f.find("b")->to_string(), "false");
  EXPECT_EQ(f.find("s")->to_string(), "\"a\\nb\"");
  EXPECT_EQ(f.find("a")->to_string(2), "[int32 x 3] {1, 2, ...}");
  EXPECT_EQ(f.find("a")->to_string(0), "[int32 x 3]");
}

TEST(GgufWriter, MetadataOnlyFileParses) {
  GgufWriter w;
  w.add("k", MetaValue::string("v"));
  const auto bytes = w.to_bytes();
  const GgufFile f = GgufFile::parse(bytes);
  EXPECT_TRUE(f.tensors().empty());
  EXPECT_EQ(f.get_string("k"), "v");
}

}  // namespace
}  // namespace folio::gguf
