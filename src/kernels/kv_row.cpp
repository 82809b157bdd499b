#include "kernels/kv_row.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/fp16.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/ops_avx2.h"
#include "kernels/cpu_features.h"

namespace folio::kernels {

namespace {

std::size_t groups(std::size_t d) {
  return (d + kKvI8Group - 1) / kKvI8Group;
}

void store_head_i8(const float* x, std::size_t d, std::uint8_t* dst) {
  auto* q = reinterpret_cast<std::int8_t*>(dst);
  for (std::size_t g = 0; g < groups(d); ++g) {
    const std::size_t b = g * kKvI8Group, e = std::min(d, b + kKvI8Group);
    float amax = 0.0f;
    for (std::size_t i = b; i < e; ++i) amax = std::max(amax, std::fabs(x[i]));
    // Quantize with the scale as stored (fp16), so that scale * q is what
    // the attention kernel reads back.
    const std::uint16_t h = f32_to_fp16(amax / 127.0f);
    const float scale = fp16_to_f32(h);
    const float inv = scale > 0.0f ? 1.0f / scale : 0.0f;
    for (std::size_t i = b; i < e; ++i) {
      const float r = std::nearbyint(x[i] * inv);
      q[i] = static_cast<std::int8_t>(std::clamp(r, -127.0f, 127.0f));
    }
    std::memcpy(dst + d + 2 * g, &h, 2);
  }
}

std::size_t groups4(std::size_t d) {
  return (d + kKvI4Group - 1) / kKvI4Group;
}

void store_head_i4(const float* in, std::size_t d, std::uint8_t* dst) {
  FOLIO_CHECK(d % 2 == 0, "int4 KV needs an even head size");
  thread_local std::vector<float> rotated;
  const float* x = in;
  if (kv_i4_rotated(d)) {
    rotated.assign(in, in + d);
    kv_hadamard(rotated.data(), d);
    x = rotated.data();
  }
  for (std::size_t g = 0; g < groups4(d); ++g) {
    const std::size_t b = g * kKvI4Group, n = std::min(d - b, kKvI4Group), half = n / 2;
    float m = 0.0f;
    for (std::size_t i = b; i < b + n; ++i)
      if (std::fabs(x[i]) > std::fabs(m)) m = x[i];
    // The scale as stored (fp16), so that scale * q is what is read back.
    // (A least-squares search over scales shrunk by up to 30 % lowered
    // SmolLM2's mean KL by 8 % only: not worth 13x the store cost.)
    const std::uint16_t h = f32_to_fp16(m / -8.0f);
    const float scale = fp16_to_f32(h);
    const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
    const auto q = [&](std::size_t i) {
      const float r = std::nearbyint(x[i] * inv);
      return static_cast<std::uint8_t>(std::clamp(r, -8.0f, 7.0f) + 8.0f);
    };
    std::uint8_t* bytes = dst + b / 2;
    for (std::size_t j = 0; j < half; ++j)
      bytes[j] = static_cast<std::uint8_t>(q(b + j) | (q(b + half + j) << 4));
    std::memcpy(dst + d / 2 + 2 * g, &h, 2);
  }
}

}  // namespace

void kv_load_i4_from(const void* src, std::size_t d, std::size_t first, float* dst) {
  FOLIO_CHECK(first % kKvI4Group == 0, "int4 rows decode from a group boundary");
  const auto* in = static_cast<const std::uint8_t*>(src);
  for (std::size_t g = first / kKvI4Group; g < groups4(d); ++g) {
    const std::size_t b = g * kKvI4Group, n = std::min(d - b, kKvI4Group), half = n / 2;
    std::uint16_t h;
    std::memcpy(&h, in + d / 2 + 2 * g, 2);
    const float scale = fp16_to_f32(h);
    const std::uint8_t* bytes = in + b / 2;
    for (std::size_t j = 0; j < half; ++j) {
      dst[b + j] = scale * static_cast<float>((bytes[j] & 0x0F) - 8);
      dst[b + half + j] = scale * static_cast<float>((bytes[j] >> 4) - 8);
    }
  }
}

bool kv_i4_rotated(std::size_t head_dim) {
  return head_dim >= 8 && (head_dim & (head_dim - 1)) == 0;
}

void kv_hadamard(float* x, std::size_t d) {
  for (std::size_t h = 1; h < d; h *= 2)
    for (std::size_t i = 0; i < d; i += 2 * h)
      for (std::size_t j = i; j < i + h; ++j) {
        const float a = x[j], b = x[j + h];
        x[j] = a + b;
        x[j + h] = a - b;
      }
  const float norm = 1.0f / std::sqrt(static_cast<float>(d));
  for (std::size_t i = 0; i < d; ++i) x[i] *= norm;
}

KvDtype parse_kv_dtype(std::string_view name) {
  if (name == "auto" || name == "f16" || name == "float16") return KvDtype::kF16;
  if (name == "f32" || name == "float32") return KvDtype::kF32;
  if (name == "int8") return KvDtype::kI8;
  if (name == "int4") return KvDtype::kI4;
  throw Error("--kv-cache-dtype " + std::string(name) +
              ": the attention kernels read f16, f32, int8 or int4 K/V (expected auto, f16, f32, "
              "int8 or int4)");
}

const char* kv_dtype_name(KvDtype dtype) {
  switch (dtype) {
    case KvDtype::kF32:
      return "f32";
    case KvDtype::kF16:
      return "f16";
    case KvDtype::kI8:
      return "int8";
    case KvDtype::kI4:
      return "int4";
  }
  return "?";
}

std::size_t kv_head_bytes(KvDtype dtype, std::size_t head_dim) {
  switch (dtype) {
    case KvDtype::kF32:
      return 4 * head_dim;
    case KvDtype::kF16:
      return 2 * head_dim;
    case KvDtype::kI8:
      return head_dim + 2 * groups(head_dim);
    case KvDtype::kI4:
      return (head_dim + 1) / 2 + 2 * groups4(head_dim);
  }
  return 0;
}

void kv_store_row(KvDtype dtype, const float* x, std::size_t n_heads, std::size_t head_dim,
                  void* dst) {
  auto* out = static_cast<std::uint8_t*>(dst);
  switch (dtype) {
    case KvDtype::kF32:
      std::memcpy(out, x, n_heads * head_dim * sizeof(float));
      return;
    case KvDtype::kF16:
      // Every new token's K and V of every layer, on the step's thread: the
      // scalar conversion was 3.5 % of batched decode (32 sequences).
      if (cpu::simd_ops(active_isa())) return cpu::avx2::f32_to_f16(x, n_heads * head_dim, out);
      return f32_to_fp16_bytes(x, n_heads * head_dim, out);
    case KvDtype::kI8: {
      const std::size_t hb = kv_head_bytes(dtype, head_dim);
      for (std::size_t h = 0; h < n_heads; ++h)
        store_head_i8(x + h * head_dim, head_dim, out + h * hb);
      return;
    }
    case KvDtype::kI4: {
      const std::size_t hb = kv_head_bytes(dtype, head_dim);
      for (std::size_t h = 0; h < n_heads; ++h)
        store_head_i4(x + h * head_dim, head_dim, out + h * hb);
      return;
    }
  }
}

void kv_load_head(KvDtype dtype, const void* src, std::size_t head_dim, float* dst) {
  const auto* in = static_cast<const std::uint8_t*>(src);
  switch (dtype) {
    case KvDtype::kF32:
      std::memcpy(dst, in, head_dim * sizeof(float));
      return;
    case KvDtype::kF16:
      for (std::size_t i = 0; i < head_dim; ++i) {
        std::uint16_t h;
        std::memcpy(&h, in + 2 * i, 2);
        dst[i] = fp16_to_f32(h);
      }
      return;
    case KvDtype::kI8: {
      const auto* q = reinterpret_cast<const std::int8_t*>(in);
      for (std::size_t g = 0; g < groups(head_dim); ++g) {
        std::uint16_t h;
        std::memcpy(&h, in + head_dim + 2 * g, 2);
        const float scale = fp16_to_f32(h);
        for (std::size_t i = g * kKvI8Group; i < std::min(head_dim, (g + 1) * kKvI8Group); ++i) {
          dst[i] = scale * static_cast<float>(q[i]);
        }
      }
      return;
    }
    case KvDtype::kI4:
      kv_load_i4_from(in, head_dim, 0, dst);
      if (kv_i4_rotated(head_dim)) kv_hadamard(dst, head_dim);
      return;
  }
}

void kv_load_head_stored(KvDtype dtype, const void* src, std::size_t head_dim, float* dst) {
  if (dtype == KvDtype::kI4) {
    kv_load_i4_from(src, head_dim, 0, dst);
    return;
  }
  kv_load_head(dtype, src, head_dim, dst);
}

}  // namespace folio::kernels
