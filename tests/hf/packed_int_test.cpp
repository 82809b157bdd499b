// GPTQ / AWQ packing written out here from the formats' definitions (not from
// packed_int.cpp), unpacked by folio, and mapped onto GGUF blocks: exact
// where the block type allows (dequantized weights equal the definition
// w = scale * (q - zero) bit for bit), within the stated fp16 rounding
// otherwise, and the llama RoPE row permutation on a written-out case.
#include "hf/packed_int.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "base/error.h"
#include "base/fp16.h"
#include "quant/dequantize.h"

namespace folio::hf {
namespace {

// The reference weight, integers and per-(group, row) parameters.
struct Ref {
  int bits;
  std::uint64_t in, out;
  std::uint32_t groups;
  std::vector<int> q;                // [in][out]
  std::vector<int> zero;             // [groups][out]
  std::vector<std::uint16_t> scale;  // [groups][out] fp16
  std::vector<std::uint32_t> g_idx;  // [in]

  float w(std::uint64_t o, std::uint64_t i) const {
    const std::uint32_t g = g_idx[i];
    return fp16_to_f32(scale[g * out + o]) * static_cast<float>(q[i * out + o] - zero[g * out + o]);
  }
};

Ref make_ref(int bits, std::uint64_t in, std::uint64_t out, std::uint32_t group, bool sym,
             bool shuffle_groups, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Ref r{bits, in, out, static_cast<std::uint32_t>(in / group), {}, {}, {}, {}};
  const int top = (1 << bits) - 1;
  std::uniform_int_distribution<int> qd(0, top);
  std::uniform_real_distribution<float> sd(0.001f, 0.05f);
  r.q.resize(in * out);
  for (auto& x : r.q) x = qd(rng);
  r.zero.resize(r.groups * out);
  for (auto& z : r.zero) z = sym ? (1 << (bits - 1)) : qd(rng);
  r.scale.resize(r.groups * out);
  for (auto& s : r.scale) s = f32_to_fp16(sd(rng));
  r.g_idx.resize(in);
  for (std::uint64_t i = 0; i < in; ++i) r.g_idx[i] = static_cast<std::uint32_t>(i / group);
  if (shuffle_groups) std::shuffle(r.g_idx.begin(), r.g_idx.end(), rng);
  return r;
}

std::vector<std::uint8_t> bytes_of(const std::vector<std::uint32_t>& v) {
  std::vector<std::uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

struct Packed {
  std::vector<std::uint8_t> qweight, qzeros, scales, g_idx;
  I32Matrix qw() const { return {qweight, rows_w, cols_w}; }
  I32Matrix qz() const { return {qzeros, rows_z, cols_z}; }
  F16Matrix sc() const { return {scales, rows_s, cols_s}; }
  std::uint64_t rows_w, cols_w, rows_z, cols_z, rows_s, cols_s;
};

// GPTQ: qweight [in*bits/32, out] packed along in; qzeros [groups, out*bits/32]
// packed along out; v1 stores zero - 1 (two's complement wrap within the field).
Packed pack_gptq(const Ref& r, bool v1) {
  const std::uint64_t per = 32 / r.bits;
  const std::uint32_t mask = (1u << r.bits) - 1;
  std::vector<std::uint32_t> qw(r.in / per * r.out, 0), qz(r.groups * (r.out / per), 0);
  for (std::uint64_t i = 0; i < r.in; ++i)
    for (std::uint64_t o = 0; o < r.out; ++o)
      qw[(i / per) * r.out + o] |= static_cast<std::uint32_t>(r.q[i * r.out + o])
                                   << ((i % per) * r.bits);
  for (std::uint32_t g = 0; g < r.groups; ++g)
    for (std::uint64_t o = 0; o < r.out; ++o) {
      const std::uint32_t z =
          static_cast<std::uint32_t>(r.zero[g * r.out + o] - (v1 ? 1 : 0)) & mask;
      qz[g * (r.out / per) + o / per] |= z << ((o % per) * r.bits);
    }
  Packed p;
  p.qweight = bytes_of(qw);
  p.qzeros = bytes_of(qz);
  p.scales.resize(r.scale.size() * 2);
  std::memcpy(p.scales.data(), r.scale.data(), p.scales.size());
  p.g_idx = bytes_of(r.g_idx);
  p.rows_w = r.in / per, p.cols_w = r.out, p.rows_z = r.groups, p.cols_z = r.out / per;
  p.rows_s = r.groups, p.cols_s = r.out;
  return p;
}

// AWQ GEMM: qweight [in, out/8], nibble p of word c holds column 8c + {0,2,4,6,1,3,5,7}[p].
Packed pack_awq(const Ref& r) {
  const int order[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  std::vector<std::uint32_t> qw(r.in * (r.out / 8), 0), qz(r.groups * (r.out / 8), 0);
  for (std::uint64_t i = 0; i < r.in; ++i)
    for (std::uint64_t c = 0; c < r.out / 8; ++c)
      for (int p = 0; p < 8; ++p)
        qw[i * (r.out / 8) + c] |= static_cast<std::uint32_t>(r.q[i * r.out + c * 8 + order[p]])
                                   << (4 * p);
  for (std::uint32_t g = 0; g < r.groups; ++g)
    for (std::uint64_t c = 0; c < r.out / 8; ++c)
      for (int p = 0; p < 8; ++p)
        qz[g * (r.out / 8) + c] |= static_cast<std::uint32_t>(r.zero[g * r.out + c * 8 + order[p]])
                                   << (4 * p);
  Packed p;
  p.qweight = bytes_of(qw);
  p.qzeros = bytes_of(qz);
  p.scales.resize(r.scale.size() * 2);
  std::memcpy(p.scales.data(), r.scale.data(), p.scales.size());
  p.rows_w = r.in, p.cols_w = r.out / 8, p.rows_z = r.groups, p.cols_z = r.out / 8;
  p.rows_s = r.groups, p.cols_s = r.out;
  return p;
}

void expect_unpacked(const Ref& r, const GroupQuant& g) {
  ASSERT_EQ(g.rows, r.out);
  ASSERT_EQ(g.cols, r.in);
  for (std::uint64_t o = 0; o < r.out; ++o)
    for (std::uint64_t i = 0; i < r.in; ++i) ASSERT_EQ(g.dequant(o, i), r.w(o, i)) << o << "," << i;
}

// Dequantizes the mapped rows with folio's reference dequantizers and compares
// with the definition: exactly, or within `rel` of |zero * scale| + |w|.
void expect_mapped(const Ref& r, const MappedWeight& m, gguf::TensorType type, double rel) {
  ASSERT_EQ(m.type, type);
  const std::size_t row_bytes = m.data.size() / r.out;
  std::vector<float> row(r.in);
  for (std::uint64_t o = 0; o < r.out; ++o) {
    quant::dequantize_row(m.type, std::span(m.data).subspan(o * row_bytes, row_bytes), row);
    for (std::uint64_t i = 0; i < r.in; ++i) {
      const float want = r.w(o, i);
      if (rel == 0.0) {
        ASSERT_EQ(row[i], want) << o << "," << i;
      } else {
        const std::uint32_t g = r.g_idx[i];
        const double bound =
            rel * (std::fabs(r.zero[g * r.out + o] * fp16_to_f32(r.scale[g * r.out + o])) +
                   std::fabs(want)) +
            1e-12;
        ASSERT_LE(std::fabs(row[i] - want), bound) << o << "," << i;
      }
    }
  }
}

TEST(PackedInt, GptqSymmetricMapsExactlyOntoQ4_0) {
  for (const bool v1 : {true, false}) {
    for (const std::uint32_t group : {32u, 64u, 128u}) {
      const Ref r = make_ref(4, 256, 48, group, true, false, group);
      const Packed p = pack_gptq(r, v1);
      const GroupQuant g =
          unpack_gptq("l", 4, v1, r.in, r.out, p.qw(), p.qz(), p.sc(), p.g_idx, group);
      expect_unpacked(r, g);
      const MappedWeight m = map_to_blocks(g);
      EXPECT_TRUE(m.exact);
      expect_mapped(r, m, gguf::TensorType::Q4_0, 0.0);
    }
  }
}

TEST(PackedInt, GptqAsymmetricMapsOntoQ4_1WithinFp16OfTheMin) {
  for (const bool v1 : {true, false}) {
    Ref r = make_ref(4, 128, 40, 64, false, false, 7);
    // v1 cannot store a zero point of 0 (0 - 1 wraps to 15, read back as 16).
    if (v1)
      for (auto& z : r.zero) z = std::max(z, 1);
    const Packed p = pack_gptq(r, v1);
    const GroupQuant g = unpack_gptq("l", 4, v1, r.in, r.out, p.qw(), p.qz(), p.sc(), {}, 64);
    expect_unpacked(r, g);
    const MappedWeight m = map_to_blocks(g);
    EXPECT_FALSE(m.exact);
    expect_mapped(r, m, gguf::TensorType::Q4_1, std::ldexp(1.0, -10));
  }
}

TEST(PackedInt, GptqV1ZeroOfSixteenWraps) {
  // A v1 zero point of 0 is stored as -1 & 15 = 15 and read back as 16.
  Ref r = make_ref(4, 32, 8, 32, false, false, 3);
  for (auto& z : r.zero) z = 16;
  const Packed p = pack_gptq(r, true);
  const GroupQuant g = unpack_gptq("l", 4, true, r.in, r.out, p.qw(), p.qz(), p.sc(), {}, 32);
  expect_unpacked(r, g);
}

TEST(PackedInt, ActOrderAcrossBlocksFallsBackToF16) {
  const Ref r = make_ref(4, 128, 16, 32, true, true, 11);
  const Packed p = pack_gptq(r, true);
  const GroupQuant g = unpack_gptq("l", 4, true, r.in, r.out, p.qw(), p.qz(), p.sc(), p.g_idx, 32);
  expect_unpacked(r, g);
  const MappedWeight m = map_to_blocks(g);
  EXPECT_FALSE(m.exact);
  EXPECT_NE(m.why.find("act-order"), std::string::npos) << m.why;
  expect_mapped(r, m, gguf::TensorType::F16, std::ldexp(1.0, -11));
}

TEST(PackedInt, EightBitGptqMapsExactlyOntoQ8_0) {
  for (const bool sym : {true, false}) {
    Ref r = make_ref(8, 64, 12, 32, sym, false, 5);
    if (!sym) {  // keep q - zero inside int8
      for (std::uint64_t i = 0; i < r.in; ++i)
        for (std::uint64_t o = 0; o < r.out; ++o) {
          const int z = r.zero[r.g_idx[i] * r.out + o];
          r.q[i * r.out + o] =
              std::clamp(r.q[i * r.out + o], std::max(0, z - 128), std::min(255, z + 127));
        }
    }
    const Packed p = pack_gptq(r, false);
    const GroupQuant g = unpack_gptq("l", 8, false, r.in, r.out, p.qw(), p.qz(), p.sc(), {}, 32);
    expect_unpacked(r, g);
    const MappedWeight m = map_to_blocks(g);
    EXPECT_TRUE(m.exact);
    expect_mapped(r, m, gguf::TensorType::Q8_0, 0.0);
  }
}

TEST(PackedInt, AwqGemmUnpacksInItsOrderAndMapsOntoQ4_1) {
  for (const std::uint32_t group : {32u, 64u, 128u}) {
    const Ref r = make_ref(4, 128, 24, group, false, false, 100 + group);
    const Packed p = pack_awq(r);
    const GroupQuant g = unpack_awq("l", r.in, r.out, p.qw(), p.qz(), p.sc(), group);
    expect_unpacked(r, g);
    expect_mapped(r, map_to_blocks(g), gguf::TensorType::Q4_1, std::ldexp(1.0, -10));
  }
}

TEST(PackedInt, RefusesShapesGroupsAndIndicesThatDoNotFit) {
  const Ref r = make_ref(4, 64, 16, 32, true, false, 1);
  Packed p = pack_gptq(r, true);
  EXPECT_THROW(unpack_gptq("l", 4, true, 64, 24, p.qw(), p.qz(), p.sc(), {}, 32), Error);
  EXPECT_THROW(unpack_gptq("l", 4, true, 64, 16, p.qw(), p.qz(), p.sc(), {}, 48), Error);
  EXPECT_THROW(unpack_gptq("l", 3, true, 64, 16, p.qw(), p.qz(), p.sc(), {}, 32), Error);
  std::vector<std::uint32_t> bad(64, 0);
  bad[5] = 2;  // only groups 0 and 1 exist
  const auto bad_bytes = bytes_of(bad);
  try {
    unpack_gptq("model.layers.0.mlp.up_proj", 4, true, 64, 16, p.qw(), p.qz(), p.sc(), bad_bytes,
                32);
    FAIL() << "a g_idx out of range was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("g_idx[5]"), std::string::npos) << e.what();
  }
  const Packed a = pack_awq(r);
  EXPECT_THROW(unpack_awq("l", 64, 16, a.qw(), a.qz(), a.sc(), 64), Error);  // qzeros rows
}

TEST(PackedInt, LlamaRopePermutationMatchesConvertHfToGguf) {
  // 2 heads of size 4: within a head, rows (0 1 | 2 3) become (0 2 1 3).
  EXPECT_EQ(llama_rope_permutation(8, 2), (std::vector<std::uint32_t>{0, 2, 1, 3, 4, 6, 5, 7}));
  // Head size 6: h*6 + 2i + j <- h*6 + 3j + i.
  EXPECT_EQ(llama_rope_permutation(6, 1), (std::vector<std::uint32_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_THROW(llama_rope_permutation(6, 2), Error);
  const std::vector<std::uint8_t> rows = {10, 11, 20, 21, 30, 31, 40, 41};
  const std::vector<std::uint32_t> perm = {0, 2, 1, 3};
  EXPECT_EQ(permute_rows(rows, 2, perm),
            (std::vector<std::uint8_t>{10, 11, 30, 31, 20, 21, 40, 41}));
}

}  // namespace
}  // namespace folio::hf
