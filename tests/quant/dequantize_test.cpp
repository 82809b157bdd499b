// Traits table consistency, size / type errors, and hand-computed values that
// do not depend on the golden files.
#include "quant/dequantize.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/fp16.h"
#include "gguf/tensor_type.h"
#include "quant/block_kquant.h"
#include "quant/block_legacy.h"
#include "quant/traits.h"

namespace folio::quant {
namespace {

using gguf::TensorType;

template <class Block>
std::vector<std::uint8_t> bytes_of(const Block& b) {
  std::vector<std::uint8_t> v(sizeof b);
  std::memcpy(v.data(), &b, sizeof b);
  return v;
}

std::string error_of(TensorType type, std::span<const std::uint8_t> src, std::span<float> dst) {
  try {
    dequantize_row(type, src, dst);
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(QuantTraits, RowsAgreeWithGgufLayouts) {
  ASSERT_GE(all_traits().size(), 14u);
  for (const TypeTraits& t : all_traits()) {
    const auto layout = gguf::tensor_type_layout(static_cast<std::uint32_t>(t.type));
    ASSERT_TRUE(layout.has_value()) << t.name;
    EXPECT_EQ(t.name, layout->name);
    EXPECT_EQ(t.block_elems, layout->block_elems) << t.name;
    EXPECT_EQ(t.block_bytes, layout->block_bytes) << t.name;
    EXPECT_NE(t.dequantize_row, nullptr) << t.name;
    EXPECT_EQ(&traits(t.type), &t);
  }
}

TEST(QuantTraits, CoversTheTypesIssue2Lists) {
  for (TensorType t :
       {TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q4_0, TensorType::Q4_1,
        TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q2_K, TensorType::Q3_K,
        TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K, TensorType::Q8_K}) {
    EXPECT_NE(find_traits(t), nullptr) << gguf::tensor_type_name(t);
  }
}

TEST(QuantErrors, UnsupportedTypesNameTheType) {
  std::vector<std::uint8_t> src(1024);
  std::vector<float> dst(256);
  for (TensorType t : {TensorType::IQ2_XXS, TensorType::IQ4_NL, TensorType::TQ1_0,
                       TensorType::TQ2_0, TensorType::MXFP4, TensorType::Q8_1, TensorType::I8}) {
    const std::string name(gguf::tensor_type_name(t));
    EXPECT_EQ(find_traits(t), nullptr) << name;
    const std::string msg = error_of(t, src, dst);
    EXPECT_NE(msg.find("tensor type " + name + " is not supported"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Q4_K"), std::string::npos) << "should list supported types: " << msg;
  }
  const std::string msg = error_of(static_cast<TensorType>(999), src, dst);
  EXPECT_NE(msg.find("unknown type id 999"), std::string::npos) << msg;
}

TEST(QuantErrors, SizeMismatchesThrow) {
  std::vector<std::uint8_t> src(2 * 18);  // two Q4_0 blocks
  std::vector<float> dst(64);
  EXPECT_NO_THROW(dequantize_row(TensorType::Q4_0, src, dst));
  // Element count not a whole number of blocks.
  std::string msg = error_of(TensorType::Q4_0, src, std::span(dst).first(48));
  EXPECT_NE(msg.find("48 elements is not a whole number of Q4_0 blocks"), std::string::npos) << msg;
  // Source too short / too long for the element count.
  msg = error_of(TensorType::Q4_0, std::span(src).first(35), dst);
  EXPECT_NE(msg.find("64 elements need 36 bytes, got 35"), std::string::npos) << msg;
  msg = error_of(TensorType::Q4_0, src, std::span(dst).first(32));
  EXPECT_NE(msg.find("32 elements need 18 bytes, got 36"), std::string::npos) << msg;
  EXPECT_THROW(dequantize_row(TensorType::Q6_K, src, std::span(dst).first(0)), Error);
  // Zero elements from zero bytes is fine.
  EXPECT_NO_THROW(dequantize_row(TensorType::Q6_K, {}, {}));
}

TEST(QuantErrors, QuantizedBytes) {
  EXPECT_EQ(quantized_bytes(TensorType::Q4_K, 512), 288u);
  EXPECT_EQ(quantized_bytes(TensorType::F16, 7), 14u);
  EXPECT_EQ(quantized_bytes(TensorType::Q8_0, 0), 0u);
  EXPECT_THROW((void)quantized_bytes(TensorType::Q4_K, 300), Error);
  EXPECT_THROW((void)quantized_bytes(TensorType::IQ1_S, 256), Error);
}

// Hand-built blocks: values computed from the format description, not gguf-py.
TEST(QuantByHand, Q4_0NibbleOrder) {
  BlockQ4_0 b{};
  b.d = f32_to_fp16(0.5f);
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<std::uint8_t>(j | (15 - j) << 4);
  std::vector<float> y(32);
  dequantize_row(TensorType::Q4_0, bytes_of(b), y);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 0.5f * static_cast<float>(j - 8)) << j;            // low nibbles first
    EXPECT_EQ(y[16 + j], 0.5f * static_cast<float>(15 - j - 8)) << j;  // then high nibbles
  }
}

TEST(QuantByHand, Q5_1HighBitsAndMin) {
  BlockQ5_1 b{};
  b.d = f32_to_fp16(2.0f);
  b.m = f32_to_fp16(-1.0f);
  b.qh[3] = 0x80;                 // bit 31: element 31 gets +16
  b.qh[0] = 0x01;                 // bit 0: element 0 gets +16
  for (auto& q : b.qs) q = 0x21;  // low nibble 1, high nibble 2
  std::vector<float> y(32);
  dequantize_row(TensorType::Q5_1, bytes_of(b), y);
  EXPECT_EQ(y[0], 2.0f * 17 - 1);
  EXPECT_EQ(y[1], 2.0f * 1 - 1);
  EXPECT_EQ(y[16], 2.0f * 2 - 1);
  EXPECT_EQ(y[31], 2.0f * 18 - 1);
}

TEST(QuantByHand, Q4_KUpperSubBlockScales) {
  BlockQ4_K b{};
  b.d = f32_to_fp16(1.0f);
  b.dmin = f32_to_fp16(0.25f);
  // Sub-block 5: scale = low nibble of byte 9 | (byte 1 >> 6) << 4,
  //              min   = high nibble of byte 9 | (byte 5 >> 6) << 4.
  b.scales[9] = 0x73;             // scale low 3, min low 7
  b.scales[1] = 0x40;             // scale bit 4 -> scale 19
  b.scales[5] = 0x80;             // min bit 5 -> min 39
  for (auto& q : b.qs) q = 0x5A;  // sub-block 5 = high nibbles of bytes 64..95 -> 5
  std::vector<float> y(256);
  dequantize_row(TensorType::Q4_K, bytes_of(b), y);
  for (int l = 0; l < 32; ++l) EXPECT_EQ(y[5 * 32 + l], 19.0f * 5 - 0.25f * 39) << l;
  EXPECT_EQ(y[0], 0.0f);  // sub-block 0: scale 0, min 0
}

TEST(QuantByHand, Q6_KElementOrder) {
  BlockQ6_K b{};
  b.d = f32_to_fp16(1.0f);
  for (auto& s : b.scales) s = 1;
  b.scales[15] = -2;
  // Element 255 = half 1, slot 3, lane 31: ql[64 + 32 + 31] high nibble, qh[32 + 31] bits 6..7.
  b.ql[127] = 0xF0;
  b.qh[63] = 0xC0;
  std::vector<float> y(256);
  dequantize_row(TensorType::Q6_K, bytes_of(b), y);
  EXPECT_EQ(y[255], -2.0f * (63 - 32));
  EXPECT_EQ(y[0], -32.0f);
}

}  // namespace
}  // namespace folio::quant
