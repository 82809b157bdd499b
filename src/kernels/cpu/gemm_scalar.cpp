// kernels/cpu/gemm_scalar.cpp: portable matmul kernels for every type, and
// the activation quantizers. This is the fallback on CPUs without AVX2 and
// the same integer arithmetic the SIMD kernels perform, so tests can compare
// both against the dequantizing reference (kernels/ref/matmul_ref.cpp).
//
// Every quantized weight block is unpacked to small integers q with
//   w = d * sc[g] * q - dmin * mn[g]     (g = group of 16 or 32 values)
// and dotted with the quantized activation in integers: 16- or 8-bit
// integers in 32-value blocks for the 32-value formats; for the k-quants
// 16-bit integers in 32-value blocks (ActivationBits::k16, the default; the
// scales apply in f32 once per 32 values) or 8-bit ones in 256-value blocks
// (k8, llama.cpp's Q8_K; scales apply once per super-block).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "base/fp16.h"
#include "kernels/cpu/gemm_kernel.h"
#include "kernels/cpu/kquant_unpack.h"
#include "quant/block_kquant.h"
#include "quant/block_legacy.h"

namespace folio::kernels::cpu {

namespace {

template <class T>
T load(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// ---- activation quantization ------------------------------------------------
// d = max|x| / 127, q = round-to-nearest-even(x / d) computed as x * (1/d):
// the AVX2 quantizer performs exactly these float operations.
void quantize_block(const float* x, std::size_t n, float& d_out, std::int8_t* q) {
  float amax = 0.0f;
  for (std::size_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (std::size_t i = 0; i < n; ++i) q[i] = static_cast<std::int8_t>(std::nearbyint(x[i] * id));
  d_out = d;
}

// ---- legacy 32-value blocks: w = d * q + m ------------------------------------
struct Unpacked32 {
  float d, m;
  int q[32];
};

int nib(const std::uint8_t* qs, int j) {
  return j < 16 ? qs[j] & 0x0F : qs[j - 16] >> 4;
}

Unpacked32 unpack(const quant::BlockQ4_0& b) {
  Unpacked32 u{fp16_to_f32(b.d), 0, {}};
  u.m = -8.0f * u.d;
  for (int j = 0; j < 32; ++j) u.q[j] = nib(b.qs, j);
  return u;
}
Unpacked32 unpack(const quant::BlockQ4_1& b) {
  Unpacked32 u{fp16_to_f32(b.d), fp16_to_f32(b.m), {}};
  for (int j = 0; j < 32; ++j) u.q[j] = nib(b.qs, j);
  return u;
}
Unpacked32 unpack(const quant::BlockQ5_0& b) {
  Unpacked32 u{fp16_to_f32(b.d), 0, {}};
  u.m = -16.0f * u.d;
  const std::uint32_t qh = load<std::uint32_t>(b.qh);
  for (int j = 0; j < 32; ++j) u.q[j] = nib(b.qs, j) | static_cast<int>((qh >> j) & 1u) << 4;
  return u;
}
Unpacked32 unpack(const quant::BlockQ5_1& b) {
  Unpacked32 u{fp16_to_f32(b.d), fp16_to_f32(b.m), {}};
  const std::uint32_t qh = load<std::uint32_t>(b.qh);
  for (int j = 0; j < 32; ++j) u.q[j] = nib(b.qs, j) | static_cast<int>((qh >> j) & 1u) << 4;
  return u;
}
Unpacked32 unpack(const quant::BlockQ8_0& b) {
  Unpacked32 u{fp16_to_f32(b.d), 0, {}};
  for (int j = 0; j < 32; ++j) u.q[j] = b.qs[j];
  return u;
}

// Activation element j of a block as an integer (x = d * act_q).
int act_q(const ActQ8Block& b, int j) {
  return b.qs[j];
}
int act_q(const ActQ16Block& b, int j) {
  return kActQ16Base * b.hi[j] + b.lo[j];
}

// Q4_0 / Q5_0: w = d * (q + offset). Against 16-bit activations the offset
// goes into the integer sum (s + offset * sum(x_q), exact), as every SIMD level does
// (panel_layout.h, kIntOffset); against 8-bit ones it stays an f32 term (m * s_x).
template <class Block>
inline constexpr int kIntOffsetOf = std::is_same_v<Block, quant::BlockQ4_0>   ? -8
                                    : std::is_same_v<Block, quant::BlockQ5_0> ? -16
                                                                              : 0;

template <class Block, class Act>
float row_dot_32(const std::uint8_t* w, const Act* x, std::size_t nb) {
  constexpr bool kOffsetInSums = std::is_same_v<Act, ActQ16Block> && kIntOffsetOf<Block> != 0;
  float acc = 0.0f, acc_m = 0.0f;
  for (std::size_t i = 0; i < nb; ++i) {
    const Unpacked32 u = unpack(load<Block>(w + i * sizeof(Block)));
    int s = 0;
    for (int j = 0; j < 32; ++j) s += u.q[j] * act_q(x[i], j);
    if constexpr (kOffsetInSums) {
      s += offset_sum<kIntOffsetOf<Block>>(x[i]);
    }
    acc += u.d * x[i].d * static_cast<float>(s);
    if constexpr (!kOffsetInSums) acc_m += u.m * x[i].s;
  }
  return acc + acc_m;
}

// ---- k-quants: w = d * sc[g] * q - dmin * mn[g], groups of 16 -------------------
template <class Block>
float row_dot_k(const std::uint8_t* w, const quant::BlockQ8_K* x, std::size_t nb) {
  float acc = 0.0f;
  for (std::size_t i = 0; i < nb; ++i) {
    KUnpacked u;
    unpack_k(load<Block>(w + i * sizeof(Block)), u);
    int sumi = 0, summ = 0;
    for (int g = 0; g < 16; ++g) {
      int s = 0;
      for (int l = 0; l < 16; ++l) s += u.q[16 * g + l] * x[i].qs[16 * g + l];
      sumi += u.sc[g] * s;
      summ += u.mn[g] * x[i].bsums[g];
    }
    acc += u.d * x[i].d * static_cast<float>(sumi) - u.dmin * x[i].d * static_cast<float>(summ);
  }
  return acc;
}

// The same against 16-bit activations in 32-value blocks (8 per super-block):
// per 32 values, integer sums of q * x_q and of x_q over the two 16-value
// groups, then d_x * (d * sum sc * S - dmin * sum mn * B) in f32. int64: a
// Q6_K group of 16 reaches 32 * 32258 * 16 * 127 ~ 2^31.
template <class Block>
float row_dot_k(const std::uint8_t* w, const ActQ16Block* x, std::size_t nb) {
  float acc = 0.0f;
  for (std::size_t i = 0; i < nb; ++i) {
    KUnpacked u;
    unpack_k(load<Block>(w + i * sizeof(Block)), u);
    for (int j = 0; j < 8; ++j) {
      const ActQ16Block& xb = x[8 * i + static_cast<std::size_t>(j)];
      std::int64_t sumi = 0, summ = 0;
      for (int h = 0; h < 2; ++h) {
        const int g = 2 * j + h;
        std::int64_t dot = 0, sum = 0;
        for (int l = 0; l < 16; ++l) {
          const int xq = kActQ16Base * xb.hi[16 * h + l] + xb.lo[16 * h + l];
          dot += static_cast<std::int64_t>(u.q[16 * g + l]) * xq;
          sum += xq;
        }
        sumi += u.sc[g] * dot;
        summ += u.mn[g] * sum;
      }
      acc += xb.d * (u.d * static_cast<float>(sumi) - u.dmin * static_cast<float>(summ));
    }
  }
  return acc;
}

// ---- plain types --------------------------------------------------------------
template <class E>
float elem(const std::uint8_t* w, std::size_t j);
template <>
float elem<float>(const std::uint8_t* w, std::size_t j) {
  return load<float>(w + 4 * j);
}
struct F16Tag {};
struct BF16Tag {};
template <>
float elem<F16Tag>(const std::uint8_t* w, std::size_t j) {
  return fp16_to_f32(load<std::uint16_t>(w + 2 * j));
}
template <>
float elem<BF16Tag>(const std::uint8_t* w, std::size_t j) {
  return bf16_to_f32(load<std::uint16_t>(w + 2 * j));
}

template <class E>
float row_dot_plain(const std::uint8_t* w, const float* x, std::size_t cols) {
  float acc = 0.0f;
  for (std::size_t j = 0; j < cols; ++j) acc += elem<E>(w, j) * x[j];
  return acc;
}

// ---- tiles ----------------------------------------------------------------------
template <class Block, class Act>
void tile_32(const std::uint8_t* w, std::size_t w_stride, std::size_t nr, std::size_t cols,
             const std::uint8_t* x, std::size_t x_stride, std::size_t nc, float* y,
             std::size_t ldy) {
  for (std::size_t r = 0; r < nr; ++r) {
    for (std::size_t c = 0; c < nc; ++c) {
      y[c * ldy + r] = row_dot_32<Block, Act>(
          w + r * w_stride, reinterpret_cast<const Act*>(x + c * x_stride), cols / 32);
    }
  }
}

// Act: quant::BlockQ8_K (8-bit) or ActQ16Block (16-bit) activations; row_dot_k
// has an overload for each.
template <class Block, class Act>
void tile_k(const std::uint8_t* w, std::size_t w_stride, std::size_t nr, std::size_t cols,
            const std::uint8_t* x, std::size_t x_stride, std::size_t nc, float* y,
            std::size_t ldy) {
  for (std::size_t r = 0; r < nr; ++r) {
    for (std::size_t c = 0; c < nc; ++c) {
      y[c * ldy + r] = row_dot_k<Block>(
          w + r * w_stride, reinterpret_cast<const Act*>(x + c * x_stride), cols / quant::kQK_K);
    }
  }
}

template <class E>
void tile_plain(const std::uint8_t* w, std::size_t w_stride, std::size_t nr, std::size_t cols,
                const std::uint8_t* x, std::size_t x_stride, std::size_t nc, float* y,
                std::size_t ldy) {
  for (std::size_t r = 0; r < nr; ++r) {
    for (std::size_t c = 0; c < nc; ++c) {
      y[c * ldy + r] = row_dot_plain<E>(w + r * w_stride,
                                        reinterpret_cast<const float*>(x + c * x_stride), cols);
    }
  }
}

using gguf::TensorType;
template <class Block>
constexpr GemmKernel k8_32{ActFormat::kQ8_32, quantize_row_q8_32, tile_32<Block, ActQ8Block>};
template <class Block>
constexpr GemmKernel k16_32{ActFormat::kQ16_32, quantize_row_q16_32, tile_32<Block, ActQ16Block>};

// The kernel of a 32-value block type for the chosen activation width.
template <class Block>
const GemmKernel* kernel_32(ActivationBits bits) {
  return bits == ActivationBits::k8 ? &k8_32<Block> : &k16_32<Block>;
}
template <class Block>
constexpr GemmKernel k8_k{ActFormat::kQ8_K, quantize_row_q8_k, tile_k<Block, quant::BlockQ8_K>};
template <class Block>
constexpr GemmKernel k16_k{ActFormat::kQ16_32, quantize_row_q16_32, tile_k<Block, ActQ16Block>};

// The kernel of a k-quant for the chosen activation width.
template <class Block>
const GemmKernel* kernel_k(ActivationBits bits) {
  return bits == ActivationBits::k8 ? &k8_k<Block> : &k16_k<Block>;
}
constexpr GemmKernel kF32{ActFormat::kF32, nullptr, tile_plain<float>};
constexpr GemmKernel kF16{ActFormat::kF32, nullptr, tile_plain<F16Tag>};
constexpr GemmKernel kBF16{ActFormat::kF32, nullptr, tile_plain<BF16Tag>};

}  // namespace

void quantize_row_q8_32(const float* x, std::size_t cols, void* out) {
  auto* blocks = static_cast<ActQ8Block*>(out);
  for (std::size_t i = 0; i < cols / 32; ++i) {
    ActQ8Block& b = blocks[i];
    quantize_block(x + 32 * i, 32, b.d, b.qs);
    int sum = 0;
    for (int j = 0; j < 32; ++j) sum += b.qs[j];
    b.s = b.d * static_cast<float>(sum);
  }
}

namespace {

// One block's 16-bit values: d = max|x| / kActQ16Max, q[j] =
// round-to-nearest-even(x[j] * (1/d)); returns sum(q).
int quantize_block_16(const float* xb, float& d, int* q) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(xb[j]));
  d = amax / static_cast<float>(kActQ16Max);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  int sum = 0;
  for (int j = 0; j < 32; ++j) sum += (q[j] = static_cast<int>(std::nearbyint(xb[j] * id)));
  return sum;
}

}  // namespace

// d = max|x| / kActQ16Max, q = round-to-nearest-even(x * (1/d)), then
// hi = round-to-nearest-even(float(q) * (1/kActQ16Base)), lo = q - kActQ16Base * hi:
// the AVX2 quantizer performs exactly these float operations.
void quantize_row_q16_32(const float* x, std::size_t cols, void* out) {
  auto* blocks = static_cast<ActQ16Block*>(out);
  constexpr float kInvBase = 1.0f / kActQ16Base;
  for (std::size_t i = 0; i < cols / 32; ++i) {
    ActQ16Block& b = blocks[i];
    int q[32];
    const int sum = quantize_block_16(x + 32 * i, b.d, q);
    for (int j = 0; j < 32; ++j) {
      const int hi = static_cast<int>(std::nearbyint(static_cast<float>(q[j]) * kInvBase));
      b.hi[j] = static_cast<std::int8_t>(hi);
      b.lo[j] = static_cast<std::int8_t>(q[j] - kActQ16Base * hi);
    }
    b.s = b.d * static_cast<float>(sum);
    b.neg8_qsum = -8 * sum;
  }
}

void quantize_row_i16_32(const float* x, std::size_t cols, void* out) {
  auto* blocks = static_cast<ActI16Block*>(out);
  for (std::size_t i = 0; i < cols / 32; ++i) {
    ActI16Block& b = blocks[i];
    int q[32];
    const int sum = quantize_block_16(x + 32 * i, b.d, q);
    for (int j = 0; j < 32; ++j) b.q[i16_slot(j)] = static_cast<std::int16_t>(q[j]);
    b.s = b.d * static_cast<float>(sum);
    b.neg8_qsum = -8 * sum;
  }
}

void quantize_row_q8_k(const float* x, std::size_t cols, void* out) {
  auto* blocks = static_cast<quant::BlockQ8_K*>(out);
  for (std::size_t i = 0; i < cols / quant::kQK_K; ++i) {
    quant::BlockQ8_K& b = blocks[i];
    quantize_block(x + quant::kQK_K * i, quant::kQK_K, b.d, b.qs);
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int l = 0; l < 16; ++l) sum += b.qs[16 * g + l];
      b.bsums[g] = static_cast<std::int16_t>(sum);
    }
  }
}

std::size_t act_row_bytes(ActFormat act, std::size_t cols) {
  switch (act) {
    case ActFormat::kF32:
      return cols * sizeof(float);
    case ActFormat::kQ8_32:
      return cols / 32 * sizeof(ActQ8Block);
    case ActFormat::kQ16_32:
      return cols / 32 * sizeof(ActQ16Block);
    case ActFormat::kI16_32:
      return cols / 32 * sizeof(ActI16Block);
    case ActFormat::kQ8_K:
      return cols / quant::kQK_K * sizeof(quant::BlockQ8_K);
  }
  return 0;
}

const GemmKernel* scalar_gemm_kernel(gguf::TensorType type, ActivationBits bits) {
  switch (type) {
    case TensorType::Q4_0:
      return kernel_32<quant::BlockQ4_0>(bits);
    case TensorType::Q4_1:
      return kernel_32<quant::BlockQ4_1>(bits);
    case TensorType::Q5_0:
      return kernel_32<quant::BlockQ5_0>(bits);
    case TensorType::Q5_1:
      return kernel_32<quant::BlockQ5_1>(bits);
    case TensorType::Q8_0:
      return kernel_32<quant::BlockQ8_0>(bits);
    case TensorType::Q2_K:
      return kernel_k<quant::BlockQ2_K>(bits);
    case TensorType::Q3_K:
      return kernel_k<quant::BlockQ3_K>(bits);
    case TensorType::Q4_K:
      return kernel_k<quant::BlockQ4_K>(bits);
    case TensorType::Q5_K:
      return kernel_k<quant::BlockQ5_K>(bits);
    case TensorType::Q6_K:
      return kernel_k<quant::BlockQ6_K>(bits);
    case TensorType::F32:
      return &kF32;
    case TensorType::F16:
      return &kF16;
    case TensorType::BF16:
      return &kBF16;
    default:
      return nullptr;
  }
}

}  // namespace folio::kernels::cpu
