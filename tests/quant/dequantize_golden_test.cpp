// Reference dequantizers vs golden files from gguf-py (tools/gen_quant_goldens.py):
// every supported type, compared bit for bit (so NaN == NaN, -0 != +0).
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "quant/dequantize.h"
#include "quant/traits.h"

namespace folio::quant {
namespace {

std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ADD_FAILURE() << "cannot open " << path << " (run tools/gen_quant_goldens.py)";
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Golden {
  std::vector<std::uint8_t> blocks;
  std::vector<std::uint32_t> expected_bits;  // float32 bit patterns
};

Golden load_golden(std::string_view name) {
  const std::string base = std::string(FOLIO_SOURCE_DIR) + "/tests/data/quant/" + std::string(name);
  Golden g;
  g.blocks = read_file(base + ".bin");
  const std::vector<std::uint8_t> f = read_file(base + ".f32");
  g.expected_bits.resize(f.size() / 4);
  for (std::size_t i = 0; i < g.expected_bits.size(); ++i) {  // little-endian on disk
    g.expected_bits[i] = static_cast<std::uint32_t>(f[4 * i]) |
                         static_cast<std::uint32_t>(f[4 * i + 1]) << 8 |
                         static_cast<std::uint32_t>(f[4 * i + 2]) << 16 |
                         static_cast<std::uint32_t>(f[4 * i + 3]) << 24;
  }
  return g;
}

// Asserts bit equality, reporting the first few mismatches with their block.
void expect_bits_equal(const std::vector<std::uint32_t>& want, const std::vector<float>& got,
                       std::size_t block_elems) {
  ASSERT_EQ(want.size(), got.size());
  int reported = 0;
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto bits = std::bit_cast<std::uint32_t>(got[i]);
    if (bits == want[i]) continue;
    ++mismatches;
    if (reported++ < 5) {
      char msg[160];
      std::snprintf(msg, sizeof msg, "element %zu (block %zu): want 0x%08x (%g) got 0x%08x (%g)", i,
                    i / block_elems, want[i], std::bit_cast<float>(want[i]), bits, got[i]);
      ADD_FAILURE() << msg;
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

class GoldenTest : public ::testing::TestWithParam<TypeTraits> {};

TEST_P(GoldenTest, BitExactWithGgufPy) {
  const TypeTraits& t = GetParam();
  const Golden g = load_golden(t.name);
  ASSERT_FALSE(g.expected_bits.empty());
  ASSERT_EQ(g.blocks.size(), g.expected_bits.size() / t.block_elems * t.block_bytes);
  std::vector<float> out(g.expected_bits.size());
  dequantize_row(t.type, g.blocks, out);
  expect_bits_equal(g.expected_bits, out, t.block_elems);
}

// Tensor data is only byte-aligned in general: results must not depend on it.
TEST_P(GoldenTest, MisalignedSourceGivesSameBits) {
  const TypeTraits& t = GetParam();
  const Golden g = load_golden(t.name);
  for (std::size_t shift = 1; shift < 4; ++shift) {
    std::vector<std::uint8_t> buf(g.blocks.size() + shift);
    std::memcpy(buf.data() + shift, g.blocks.data(), g.blocks.size());
    std::vector<float> out(g.expected_bits.size());
    dequantize_row(t.type, std::span(buf).subspan(shift), out);
    expect_bits_equal(g.expected_bits, out, t.block_elems);
  }
}

// Dequantizing block by block (as a row-split kernel would) changes nothing.
TEST_P(GoldenTest, BlockByBlockMatchesWholeRow) {
  const TypeTraits& t = GetParam();
  const Golden g = load_golden(t.name);
  std::vector<float> out(g.expected_bits.size());
  const std::size_t n_blocks = out.size() / t.block_elems;
  for (std::size_t b = 0; b < n_blocks; ++b) {
    dequantize_row(t.type, std::span(g.blocks).subspan(b * t.block_bytes, t.block_bytes),
                   std::span(out).subspan(b * t.block_elems, t.block_elems));
  }
  expect_bits_equal(g.expected_bits, out, t.block_elems);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, GoldenTest, ::testing::ValuesIn(all_traits()),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace folio::quant
