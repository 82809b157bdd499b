// quant/traits.cpp: the traits table, built once from the block types.
#include "quant/traits.h"

#include <array>
#include <cstring>
#include <string>
#include <type_traits>

#include "base/error.h"
#include "quant/block_kquant.h"
#include "quant/block_legacy.h"
#include "quant/block_plain.h"

namespace folio::quant {

namespace {

// Runs the per-block reference dequantizer over a row of blocks. Blocks are
// copied out with memcpy: tensor data is only byte-aligned in general (and a
// uint8_t buffer holds no Block objects), so no reinterpret_cast.
template <class Block>
void dequantize_blocks(std::span<const std::uint8_t> src, std::span<float> dst) {
  static_assert(std::is_trivially_copyable_v<Block>);
  const std::size_t n = src.size() / sizeof(Block);
  FOLIO_CHECK(src.size() == n * sizeof(Block) && dst.size() == n * Block::kElems,
              "dequantize_blocks: caller must pass whole blocks");
  for (std::size_t i = 0; i < n; ++i) {
    Block b;
    std::memcpy(&b, src.data() + i * sizeof(Block), sizeof(Block));
    dequantize(b, dst.subspan(i * Block::kElems).template first<Block::kElems>());
  }
}

// The row's mean square, which the importance-weighted legacy rules use.
float mean_square(std::span<const float> src) {
  float sum_x2 = 0.0f;
  for (float v : src) sum_x2 += v * v;
  return sum_x2 / static_cast<float>(src.size());
}

template <class Block>
void quantize_blocks(std::span<const float> src, std::span<const float> importance,
                     std::span<std::uint8_t> dst) {
  static_assert(std::is_trivially_copyable_v<Block>);
  const std::size_t n = dst.size() / sizeof(Block);
  FOLIO_CHECK(dst.size() == n * sizeof(Block) && src.size() == n * Block::kElems &&
                  (importance.empty() || importance.size() == src.size()),
              "quantize_blocks: caller must pass whole blocks");
  const float sigma2 = importance.empty() || src.empty() ? 0.0f : mean_square(src);
  for (std::size_t i = 0; i < n; ++i) {
    Block b{};
    const auto imp =
        importance.empty() ? importance : importance.subspan(i * Block::kElems, Block::kElems);
    quantize(src.subspan(i * Block::kElems).template first<Block::kElems>(), imp, sigma2, b);
    std::memcpy(dst.data() + i * sizeof(Block), &b, sizeof(Block));
  }
}

// Blocks with a quantize() overload get a quantizer in their row.
template <class Block>
constexpr QuantizeRowFn quantizer() {
  if constexpr (requires(std::span<const float, Block::kElems> x, Block & b) {
                  quantize(x, std::span<const float>{}, 0.0f, b);
                }) {
    return &quantize_blocks<Block>;
  } else {
    return nullptr;
  }
}

template <class Block>
TypeTraits row() {
  const auto layout = gguf::tensor_type_layout(static_cast<std::uint32_t>(Block::kType));
  FOLIO_CHECK(layout.has_value(), "quant row for a type gguf does not know");
  FOLIO_CHECK(
      layout->block_elems == Block::kElems && layout->block_bytes == sizeof(Block),
      std::string("block struct disagrees with the GGUF layout of ") + std::string(layout->name));
  return {Block::kType,      layout->name, Block::kElems, sizeof(Block), &dequantize_blocks<Block>,
          quantizer<Block>()};
}

const std::array<TypeTraits, 14>& table() {
  static const std::array<TypeTraits, 14> rows = {
      row<BlockF32>(),  row<BlockF16>(),  row<BlockQ4_0>(), row<BlockQ4_1>(), row<BlockQ5_0>(),
      row<BlockQ5_1>(), row<BlockQ8_0>(), row<BlockQ2_K>(), row<BlockQ3_K>(), row<BlockQ4_K>(),
      row<BlockQ5_K>(), row<BlockQ6_K>(), row<BlockQ8_K>(), row<BlockBF16>(),
  };
  return rows;
}

}  // namespace

std::span<const TypeTraits> all_traits() {
  return table();
}

const TypeTraits* find_traits(gguf::TensorType type) {
  for (const TypeTraits& t : table()) {
    if (t.type == type) return &t;
  }
  return nullptr;
}

const TypeTraits& traits(gguf::TensorType type) {
  if (const TypeTraits* t = find_traits(type)) return *t;
  const auto id = static_cast<std::uint32_t>(type);
  const auto layout = gguf::tensor_type_layout(id);
  std::string name = layout ? std::string(layout->name) : "unknown type id " + std::to_string(id);
  std::string supported;
  for (const TypeTraits& t : table()) {
    supported += supported.empty() ? "" : ", ";
    supported += t.name;
  }
  throw Error("tensor type " + name +
              " is not supported by folio's quant module (supported: " + supported + ")");
}

}  // namespace folio::quant
