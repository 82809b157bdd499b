// quant/block_codes.cpp: per-element grids and codes of the block formats
// folio writes (see block_codes.h). Blocks are copied in and out with memcpy
// (tensor bytes are only byte-aligned).
#include "quant/block_codes.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "base/fp16.h"
#include "quant/block_kquant.h"
#include "quant/block_legacy.h"
#include "quant/scale_search.h"

namespace folio::quant {

namespace {

using gguf::TensorType;

template <class Block>
Block load(std::span<const std::uint8_t> bytes) {
  FOLIO_CHECK(bytes.size() == sizeof(Block), "block_codes: wrong block size");
  Block b;
  std::memcpy(&b, bytes.data(), sizeof b);
  return b;
}

template <class Block>
void store(const Block& b, std::span<std::uint8_t> bytes) {
  FOLIO_CHECK(bytes.size() == sizeof(Block), "block_codes: wrong block size");
  std::memcpy(bytes.data(), &b, sizeof b);
}

// 32-element legacy blocks: element j's nibble is byte j % 16, low half for j < 16.
int get_nibble(const std::uint8_t (&qs)[16], std::size_t j) {
  return j < 16 ? qs[j] & 0x0F : qs[j - 16] >> 4;
}
void set_nibble(std::uint8_t (&qs)[16], std::size_t j, int v) {
  if (j < 16) {
    qs[j] = static_cast<std::uint8_t>((qs[j] & 0xF0) | (v & 0x0F));
  } else {
    qs[j - 16] = static_cast<std::uint8_t>((qs[j - 16] & 0x0F) | (v & 0x0F) << 4);
  }
}
int get_bit(const std::uint8_t (&qh)[4], std::size_t j) {
  return (qh[j / 8] >> (j % 8)) & 1;
}
void set_bit(std::uint8_t (&qh)[4], std::size_t j, int v) {
  const auto mask = static_cast<std::uint8_t>(1u << (j % 8));
  qh[j / 8] = static_cast<std::uint8_t>(v ? (qh[j / 8] | mask) : (qh[j / 8] & ~mask));
}

// Q4_K / Q5_K: element i's nibble sits in qs[32*(i/64) + i%32], high half
// when (i%64) >= 32; Q5_K's fifth bit is bit 2*(i/64) + ((i%64) >= 32) of qh[i%32].
std::size_t k_byte(std::size_t i) {
  return 32 * (i / 64) + i % 32;
}
bool k_high(std::size_t i) {
  return i % 64 >= 32;
}
unsigned k_qh_bit(std::size_t i) {
  return static_cast<unsigned>(2 * (i / 64) + (k_high(i) ? 1 : 0));
}
int k_nibble(const std::uint8_t* qs, std::size_t i) {
  return k_high(i) ? qs[k_byte(i)] >> 4 : qs[k_byte(i)] & 0x0F;
}
void set_k_nibble(std::uint8_t* qs, std::size_t i, int v) {
  std::uint8_t& byte = qs[k_byte(i)];
  byte = k_high(i) ? static_cast<std::uint8_t>((byte & 0x0F) | (v & 0x0F) << 4)
                   : static_cast<std::uint8_t>((byte & 0xF0) | (v & 0x0F));
}
template <class Block>
ElementGrid k_grid(const Block& b, std::size_t i, int hi) {
  const ScaleMin sm = scale_min_k4(b.scales, i / 32);
  const float dl = fp16_to_f32(b.d) * static_cast<float>(sm.scale);
  const float ml = fp16_to_f32(b.dmin) * static_cast<float>(sm.min);
  return {dl, 0, -ml, 0, hi};
}

// Q6_K: element i = 128h + 32k + l: low nibble in ql[64h + 32*(k%2) + l]
// (high half for k >= 2), top 2 bits at shift 2k of qh[32h + l].
std::size_t q6_ql(std::size_t i) {
  return 64 * (i / 128) + 32 * ((i % 128) / 32 % 2) + i % 32;
}
bool q6_high(std::size_t i) {
  return (i % 128) / 32 >= 2;
}
std::size_t q6_qh(std::size_t i) {
  return 32 * (i / 128) + i % 32;
}
unsigned q6_shift(std::size_t i) {
  return static_cast<unsigned>(2 * ((i % 128) / 32));
}

}  // namespace

int ElementGrid::nearest(float x) const {
  if (a == 0.0f) return std::clamp(offset, lo, hi);
  return std::clamp(nearest_int((x - b) / a) + offset, lo, hi);
}

bool has_element_codes(gguf::TensorType type) {
  switch (type) {
    case TensorType::Q4_0:
    case TensorType::Q4_1:
    case TensorType::Q5_0:
    case TensorType::Q5_1:
    case TensorType::Q8_0:
    case TensorType::Q4_K:
    case TensorType::Q5_K:
    case TensorType::Q6_K:
      return true;
    default:
      return false;
  }
}

namespace {

// Per-type element access on a loaded block.
ElementGrid grid_of(const BlockQ4_0& b, std::size_t) {
  return {fp16_to_f32(b.d), 8, 0.0f, 0, 15};
}
ElementGrid grid_of(const BlockQ4_1& b, std::size_t) {
  return {fp16_to_f32(b.d), 0, fp16_to_f32(b.m), 0, 15};
}
ElementGrid grid_of(const BlockQ5_0& b, std::size_t) {
  return {fp16_to_f32(b.d), 16, 0.0f, 0, 31};
}
ElementGrid grid_of(const BlockQ5_1& b, std::size_t) {
  return {fp16_to_f32(b.d), 0, fp16_to_f32(b.m), 0, 31};
}
ElementGrid grid_of(const BlockQ8_0& b, std::size_t) {
  return {fp16_to_f32(b.d), 0, 0.0f, -127, 127};
}
ElementGrid grid_of(const BlockQ4_K& b, std::size_t i) {
  return k_grid(b, i, 15);
}
ElementGrid grid_of(const BlockQ5_K& b, std::size_t i) {
  return k_grid(b, i, 31);
}
ElementGrid grid_of(const BlockQ6_K& b, std::size_t i) {
  const std::int8_t scale = b.scales[i / 16];
  return {fp16_to_f32(b.d) * static_cast<float>(scale), 32, 0.0f, 0, 63};
}

int code_of(const BlockQ4_0& b, std::size_t i) {
  return get_nibble(b.qs, i);
}
int code_of(const BlockQ4_1& b, std::size_t i) {
  return get_nibble(b.qs, i);
}
int code_of(const BlockQ5_0& b, std::size_t i) {
  return get_nibble(b.qs, i) | get_bit(b.qh, i) << 4;
}
int code_of(const BlockQ5_1& b, std::size_t i) {
  return get_nibble(b.qs, i) | get_bit(b.qh, i) << 4;
}
int code_of(const BlockQ8_0& b, std::size_t i) {
  return b.qs[i];
}
int code_of(const BlockQ4_K& b, std::size_t i) {
  return k_nibble(b.qs, i);
}
int code_of(const BlockQ5_K& b, std::size_t i) {
  return k_nibble(b.qs, i) | ((b.qh[i % 32] >> k_qh_bit(i)) & 1) << 4;
}
int code_of(const BlockQ6_K& b, std::size_t i) {
  const int low = q6_high(i) ? b.ql[q6_ql(i)] >> 4 : b.ql[q6_ql(i)] & 0x0F;
  return low | ((b.qh[q6_qh(i)] >> q6_shift(i)) & 3) << 4;
}

void set_code(BlockQ4_0& b, std::size_t i, int c) {
  set_nibble(b.qs, i, c);
}
void set_code(BlockQ4_1& b, std::size_t i, int c) {
  set_nibble(b.qs, i, c);
}
void set_code(BlockQ5_0& b, std::size_t i, int c) {
  set_nibble(b.qs, i, c);
  set_bit(b.qh, i, c >> 4);
}
void set_code(BlockQ5_1& b, std::size_t i, int c) {
  set_nibble(b.qs, i, c);
  set_bit(b.qh, i, c >> 4);
}
void set_code(BlockQ8_0& b, std::size_t i, int c) {
  b.qs[i] = static_cast<std::int8_t>(c);
}
void set_code(BlockQ4_K& b, std::size_t i, int c) {
  set_k_nibble(b.qs, i, c);
}
void set_code(BlockQ5_K& b, std::size_t i, int c) {
  set_k_nibble(b.qs, i, c);
  const auto mask = static_cast<std::uint8_t>(1u << k_qh_bit(i));
  std::uint8_t& h = b.qh[i % 32];
  h = static_cast<std::uint8_t>((c >> 4) & 1 ? (h | mask) : (h & ~mask));
}
void set_code(BlockQ6_K& b, std::size_t i, int c) {
  std::uint8_t& l = b.ql[q6_ql(i)];
  l = q6_high(i) ? static_cast<std::uint8_t>((l & 0x0F) | (c & 0x0F) << 4)
                 : static_cast<std::uint8_t>((l & 0xF0) | (c & 0x0F));
  std::uint8_t& h = b.qh[q6_qh(i)];
  const unsigned s = q6_shift(i);
  h = static_cast<std::uint8_t>((h & ~(3u << s)) | static_cast<unsigned>((c >> 4) & 3) << s);
}

// Calls f(loaded block) for `type`'s block struct.
template <class F>
void with_block(gguf::TensorType type, F&& f) {
  switch (type) {
    case TensorType::Q4_0:
      return f(BlockQ4_0{});
    case TensorType::Q4_1:
      return f(BlockQ4_1{});
    case TensorType::Q5_0:
      return f(BlockQ5_0{});
    case TensorType::Q5_1:
      return f(BlockQ5_1{});
    case TensorType::Q8_0:
      return f(BlockQ8_0{});
    case TensorType::Q4_K:
      return f(BlockQ4_K{});
    case TensorType::Q5_K:
      return f(BlockQ5_K{});
    case TensorType::Q6_K:
      return f(BlockQ6_K{});
    default:
      break;
  }
  throw Error("block_codes: no element codes for " + std::string(gguf::tensor_type_name(type)));
}

}  // namespace

void block_grids(gguf::TensorType type, std::span<const std::uint8_t> block,
                 std::span<ElementGrid> out) {
  with_block(type, [&](auto tag) {
    using Block = decltype(tag);
    FOLIO_CHECK(out.size() == Block::kElems, "block_grids: one grid per element");
    const auto b = load<Block>(block);
    for (std::size_t i = 0; i < Block::kElems; ++i) out[i] = grid_of(b, i);
  });
}

void block_codes(gguf::TensorType type, std::span<const std::uint8_t> block, std::span<int> out) {
  with_block(type, [&](auto tag) {
    using Block = decltype(tag);
    FOLIO_CHECK(out.size() == Block::kElems, "block_codes: one code per element");
    const auto b = load<Block>(block);
    for (std::size_t i = 0; i < Block::kElems; ++i) out[i] = code_of(b, i);
  });
}

void set_block_codes(gguf::TensorType type, std::span<std::uint8_t> block,
                     std::span<const int> codes) {
  with_block(type, [&](auto tag) {
    using Block = decltype(tag);
    FOLIO_CHECK(codes.size() == Block::kElems, "set_block_codes: one code per element");
    auto b = load<Block>(block);
    for (std::size_t i = 0; i < Block::kElems; ++i) set_code(b, i, codes[i]);
    store(b, block);
  });
}

}  // namespace folio::quant
