// hf/packed_int.cpp: GPTQ / AWQ unpacking and the mapping onto GGUF blocks
// (see packed_int.h).
#include "hf/packed_int.h"

#include <cmath>
#include <cstring>

#include "base/error.h"
#include "base/fp16.h"
#include "quant/block_legacy.h"

namespace folio::hf {

namespace {

constexpr std::uint64_t kBlock = 32;

std::uint32_t load_u32(std::span<const std::uint8_t> d, std::uint64_t i) {
  std::uint32_t v = 0;
  std::memcpy(&v, d.data() + i * 4, 4);
  return v;
}

std::uint16_t load_u16(std::span<const std::uint8_t> d, std::uint64_t i) {
  std::uint16_t v = 0;
  std::memcpy(&v, d.data() + i * 2, 2);
  return v;
}

void expect_shape(const std::string& name, const char* what, std::uint64_t rows, std::uint64_t cols,
                  std::uint64_t want_rows, std::uint64_t want_cols) {
  if (rows != want_rows || cols != want_cols) {
    throw Error(name + "." + what + " has shape [" + std::to_string(rows) + ", " +
                std::to_string(cols) + "] but the layer needs [" + std::to_string(want_rows) +
                ", " + std::to_string(want_cols) + "]");
  }
}

std::uint32_t group_count(const std::string& name, std::uint64_t in, std::int64_t group_size) {
  if (group_size == -1) return 1;
  if (group_size <= 0 || static_cast<std::uint64_t>(group_size) > in ||
      in % static_cast<std::uint64_t>(group_size) != 0) {
    throw Error(name + ": group_size " + std::to_string(group_size) +
                " does not divide the input features " + std::to_string(in));
  }
  return static_cast<std::uint32_t>(in / static_cast<std::uint64_t>(group_size));
}

GroupQuant make(int bits, std::uint64_t in, std::uint64_t out, std::uint32_t groups) {
  GroupQuant g;
  g.bits = bits;
  g.rows = out;
  g.cols = in;
  g.n_groups = groups;
  g.q.resize(out * in);
  g.scale.resize(out * groups);
  g.zero.resize(out * groups);
  g.group_of.resize(in);
  return g;
}

}  // namespace

float GroupQuant::dequant(std::uint64_t r, std::uint64_t c) const {
  const std::uint64_t k = r * n_groups + group_of[c];
  return fp16_to_f32(scale[k]) *
         static_cast<float>(static_cast<int>(q[r * cols + c]) - static_cast<int>(zero[k]));
}

GroupQuant unpack_gptq(const std::string& name, int bits, bool v1, std::uint64_t in,
                       std::uint64_t out, I32Matrix qweight, I32Matrix qzeros, F16Matrix scales,
                       std::span<const std::uint8_t> g_idx, std::int64_t group_size) {
  if (bits != 4 && bits != 8) {
    throw Error(name + ": " + std::to_string(bits) + "-bit GPTQ is not supported (4 and 8 are)");
  }
  const std::uint64_t per = 32 / static_cast<std::uint64_t>(bits);
  if (in % per != 0 || out % per != 0) {
    throw Error(name + ": features " + std::to_string(in) + " x " + std::to_string(out) +
                " are not multiples of " + std::to_string(per) + " (the int32 packing)");
  }
  const std::uint32_t groups = group_count(name, in, group_size);
  expect_shape(name, "qweight", qweight.rows, qweight.cols, in / per, out);
  expect_shape(name, "qzeros", qzeros.rows, qzeros.cols, groups, out / per);
  expect_shape(name, "scales", scales.rows, scales.cols, groups, out);
  const std::uint32_t mask = (1u << bits) - 1;

  GroupQuant g = make(bits, in, out, groups);
  if (!g_idx.empty()) {
    if (g_idx.size() != in * 4) {
      throw Error(name + ".g_idx holds " + std::to_string(g_idx.size() / 4) + " entries, not " +
                  std::to_string(in));
    }
    for (std::uint64_t i = 0; i < in; ++i) {
      const std::uint32_t v = load_u32(g_idx, i);
      if (v >= groups) {
        throw Error(name + ".g_idx[" + std::to_string(i) +
                    "] = " + std::to_string(static_cast<std::int32_t>(v)) +
                    " is not a group (there are " + std::to_string(groups) + ")");
      }
      g.group_of[i] = v;
    }
  } else {
    const std::uint64_t gs = in / groups;
    for (std::uint64_t i = 0; i < in; ++i) g.group_of[i] = static_cast<std::uint32_t>(i / gs);
  }
  for (std::uint64_t r = 0; r < in / per; ++r) {
    for (std::uint64_t o = 0; o < out; ++o) {
      const std::uint32_t word = load_u32(qweight.data, r * out + o);
      for (std::uint64_t p = 0; p < per; ++p) {
        g.q[o * in + r * per + p] = static_cast<std::uint8_t>((word >> (p * bits)) & mask);
      }
    }
  }
  for (std::uint32_t k = 0; k < groups; ++k) {
    for (std::uint64_t c = 0; c < out / per; ++c) {
      const std::uint32_t word = load_u32(qzeros.data, k * (out / per) + c);
      for (std::uint64_t p = 0; p < per; ++p) {
        const std::uint32_t z = ((word >> (p * bits)) & mask) + (v1 ? 1u : 0u);
        g.zero[(c * per + p) * groups + k] = static_cast<std::uint16_t>(z);
      }
    }
    for (std::uint64_t o = 0; o < out; ++o)
      g.scale[o * groups + k] = load_u16(scales.data, k * out + o);
  }
  return g;
}

GroupQuant unpack_awq(const std::string& name, std::uint64_t in, std::uint64_t out,
                      I32Matrix qweight, I32Matrix qzeros, F16Matrix scales,
                      std::int64_t group_size) {
  static constexpr std::uint32_t kOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  if (out % 8 != 0) {
    throw Error(name + ": output features " + std::to_string(out) +
                " are not a multiple of 8 (AWQ's int32 packing)");
  }
  const std::uint32_t groups = group_count(name, in, group_size);
  expect_shape(name, "qweight", qweight.rows, qweight.cols, in, out / 8);
  expect_shape(name, "qzeros", qzeros.rows, qzeros.cols, groups, out / 8);
  expect_shape(name, "scales", scales.rows, scales.cols, groups, out);
  GroupQuant g = make(4, in, out, groups);
  const std::uint64_t gs = in / groups;
  for (std::uint64_t i = 0; i < in; ++i) g.group_of[i] = static_cast<std::uint32_t>(i / gs);
  for (std::uint64_t i = 0; i < in; ++i) {
    for (std::uint64_t c = 0; c < out / 8; ++c) {
      const std::uint32_t word = load_u32(qweight.data, i * (out / 8) + c);
      for (std::uint32_t p = 0; p < 8; ++p) {
        g.q[(c * 8 + kOrder[p]) * in + i] = static_cast<std::uint8_t>((word >> (4 * p)) & 15u);
      }
    }
  }
  for (std::uint32_t k = 0; k < groups; ++k) {
    for (std::uint64_t c = 0; c < out / 8; ++c) {
      const std::uint32_t word = load_u32(qzeros.data, k * (out / 8) + c);
      for (std::uint32_t p = 0; p < 8; ++p) {
        g.zero[(c * 8 + kOrder[p]) * groups + k] =
            static_cast<std::uint16_t>((word >> (4 * p)) & 15u);
      }
    }
    for (std::uint64_t o = 0; o < out; ++o)
      g.scale[o * groups + k] = load_u16(scales.data, k * out + o);
  }
  return g;
}

MappedWeight map_to_blocks(const GroupQuant& g) {
  MappedWeight m;
  bool aligned = g.cols % kBlock == 0;
  for (std::uint64_t b = 0; aligned && b < g.cols; b += kBlock) {
    for (std::uint64_t c = b + 1; c < b + kBlock; ++c) {
      if (g.group_of[c] != g.group_of[b]) {
        aligned = false;
        break;
      }
    }
  }
  const std::uint16_t mid = static_cast<std::uint16_t>(1u << (g.bits - 1));
  bool sym = true;
  bool fits_i8 = true;
  for (std::uint64_t k = 0; k < g.zero.size(); ++k) sym = sym && g.zero[k] == mid;
  if (g.bits == 8 && !sym) {
    for (std::uint64_t r = 0; r < g.rows && fits_i8; ++r) {
      for (std::uint64_t c = 0; c < g.cols; ++c) {
        const int v = static_cast<int>(g.q[r * g.cols + c]) -
                      static_cast<int>(g.zero[r * g.n_groups + g.group_of[c]]);
        if (v < -128 || v > 127) {
          fits_i8 = false;
          break;
        }
      }
    }
  }
  const std::uint64_t nb = g.cols / kBlock;
  if (aligned && g.bits == 4) {
    m.type = sym ? gguf::TensorType::Q4_0 : gguf::TensorType::Q4_1;
    m.exact = sym;
    if (!sym) m.why = "asymmetric zero points: the min -zero*scale is rounded to fp16";
    const std::size_t bb = sym ? sizeof(quant::BlockQ4_0) : sizeof(quant::BlockQ4_1);
    m.data.resize(g.rows * nb * bb);
    for (std::uint64_t r = 0; r < g.rows; ++r) {
      for (std::uint64_t b = 0; b < nb; ++b) {
        const std::uint64_t k = r * g.n_groups + g.group_of[b * kBlock];
        const std::uint8_t* q = &g.q[r * g.cols + b * kBlock];
        std::uint8_t qs[16];
        for (int j = 0; j < 16; ++j) qs[j] = static_cast<std::uint8_t>(q[j] | (q[j + 16] << 4));
        std::uint8_t* dst = m.data.data() + (r * nb + b) * bb;
        if (sym) {
          quant::BlockQ4_0 blk{};
          blk.d = g.scale[k];
          std::memcpy(blk.qs, qs, 16);
          std::memcpy(dst, &blk, bb);
        } else {
          quant::BlockQ4_1 blk{};
          blk.d = g.scale[k];
          blk.m = f32_to_fp16(-static_cast<float>(g.zero[k]) * fp16_to_f32(g.scale[k]));
          std::memcpy(blk.qs, qs, 16);
          std::memcpy(dst, &blk, bb);
        }
      }
    }
    return m;
  }
  if (aligned && g.bits == 8 && fits_i8) {
    m.type = gguf::TensorType::Q8_0;
    const std::size_t bb = sizeof(quant::BlockQ8_0);
    m.data.resize(g.rows * nb * bb);
    for (std::uint64_t r = 0; r < g.rows; ++r) {
      for (std::uint64_t b = 0; b < nb; ++b) {
        const std::uint64_t k = r * g.n_groups + g.group_of[b * kBlock];
        quant::BlockQ8_0 blk{};
        blk.d = g.scale[k];
        for (std::uint64_t j = 0; j < kBlock; ++j) {
          blk.qs[j] = static_cast<std::int8_t>(static_cast<int>(g.q[r * g.cols + b * kBlock + j]) -
                                               static_cast<int>(g.zero[k]));
        }
        std::memcpy(m.data.data() + (r * nb + b) * bb, &blk, bb);
      }
    }
    return m;
  }
  m.type = gguf::TensorType::F16;
  m.exact = false;
  m.why = !aligned ? (g.cols % kBlock != 0
                          ? "input features " + std::to_string(g.cols) + " are not a multiple of 32"
                          : std::string("act-order groups (g_idx) cross 32-value blocks"))
                   : std::string("8-bit zero points put q - zero outside int8");
  m.why += ": dequantized to F16";
  m.data.resize(g.rows * g.cols * 2);
  for (std::uint64_t r = 0; r < g.rows; ++r) {
    for (std::uint64_t c = 0; c < g.cols; ++c) {
      const std::uint16_t h = f32_to_fp16(g.dequant(r, c));
      std::memcpy(m.data.data() + (r * g.cols + c) * 2, &h, 2);
    }
  }
  return m;
}

std::vector<std::uint8_t> permute_rows(std::span<const std::uint8_t> in, std::size_t row_bytes,
                                       std::span<const std::uint32_t> perm) {
  if (row_bytes == 0 || in.size() != perm.size() * row_bytes) {
    throw Error("permute_rows: " + std::to_string(in.size()) + " bytes are not " +
                std::to_string(perm.size()) + " rows of " + std::to_string(row_bytes));
  }
  std::vector<std::uint8_t> out(in.size());
  for (std::size_t r = 0; r < perm.size(); ++r) {
    if (perm[r] >= perm.size()) throw Error("permute_rows: row index out of range");
    std::memcpy(out.data() + r * row_bytes, in.data() + perm[r] * row_bytes, row_bytes);
  }
  return out;
}

std::vector<std::uint32_t> llama_rope_permutation(std::uint64_t rows, std::uint32_t n_head) {
  if (n_head == 0 || rows % (2ull * n_head) != 0) {
    throw Error("cannot permute " + std::to_string(rows) + " rows for RoPE over " +
                std::to_string(n_head) + " heads (rows must be a multiple of 2 x heads)");
  }
  const std::uint64_t d = rows / n_head;
  std::vector<std::uint32_t> perm(rows);
  for (std::uint64_t h = 0; h < n_head; ++h) {
    for (std::uint64_t i = 0; i < d / 2; ++i) {
      for (std::uint64_t j = 0; j < 2; ++j) {
        perm[h * d + 2 * i + j] = static_cast<std::uint32_t>(h * d + j * (d / 2) + i);
      }
    }
  }
  return perm;
}

}  // namespace folio::hf
