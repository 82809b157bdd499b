#include "kernels/kv_row.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "base/error.h"
#include "base/fp16.h"

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

}  // namespace

KvDtype parse_kv_dtype(std::string_view name) {
  if (name == "auto" || name == "f16" || name == "float16") return KvDtype::kF16;
  if (name == "f32" || name == "float32") return KvDtype::kF32;
  if (name == "int8") return KvDtype::kI8;
  throw Error(
      "--kv-cache-dtype " + std::string(name) +
      ": the attention kernels read f16, f32 or int8 K/V (expected auto, f16, f32 or int8)");
}

const char* kv_dtype_name(KvDtype dtype) {
  switch (dtype) {
    case KvDtype::kF32:
      return "f32";
    case KvDtype::kF16:
      return "f16";
    case KvDtype::kI8:
      return "int8";
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
      for (std::size_t i = 0; i < n_heads * head_dim; ++i) {
        const std::uint16_t h = f32_to_fp16(x[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      return;
    case KvDtype::kI8: {
      const std::size_t hb = kv_head_bytes(dtype, head_dim);
      for (std::size_t h = 0; h < n_heads; ++h)
        store_head_i8(x + h * head_dim, head_dim, out + h * hb);
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
  }
}

}  // namespace folio::kernels
