#include "kv/kv_sizing.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "base/error.h"

namespace folio::kv {

KvCacheDtype parse_kv_cache_dtype(std::string_view name) {
  if (name == "auto" || name == "f16" || name == "float16") return KvCacheDtype::kF16;
  if (name == "f32" || name == "float32") return KvCacheDtype::kF32;
  if (name == "int8") return KvCacheDtype::kInt8;
  if (name == "int4") return KvCacheDtype::kInt4;
  throw Error("unknown --kv-cache-dtype '" + std::string(name) +
              "' (expected auto, f16, f32, int8 or int4)");
}

const char* kv_cache_dtype_name(KvCacheDtype dtype) {
  switch (dtype) {
    case KvCacheDtype::kF32:
      return "f32";
    case KvCacheDtype::kF16:
      return "f16";
    case KvCacheDtype::kInt8:
      return "int8";
    case KvCacheDtype::kInt4:
      return "int4";
  }
  return "?";
}

std::int64_t kv_row_bytes(std::int64_t head_dim, KvCacheDtype dtype) {
  if (head_dim <= 0) throw Error("KV head_dim must be positive");
  const std::int64_t scales = 2 * ((head_dim + kKvQuantGroup - 1) / kKvQuantGroup);
  switch (dtype) {
    case KvCacheDtype::kF32:
      return 4 * head_dim;
    case KvCacheDtype::kF16:
      return 2 * head_dim;
    case KvCacheDtype::kInt8:
      return head_dim + scales;
    case KvCacheDtype::kInt4:
      if (head_dim % 2 != 0) throw Error("int4 KV cache needs an even head_dim");
      return head_dim / 2 + scales;
  }
  return 0;
}

std::int64_t kv_bytes_per_token(const KvShape& shape, KvCacheDtype dtype) {
  if (shape.n_layers <= 0 || shape.n_kv_heads <= 0)
    throw Error("KV shape needs positive layer and KV head counts");
  return shape.n_layers * 2 * shape.n_kv_heads * kv_row_bytes(shape.head_dim, dtype);
}

std::int64_t kv_bytes_per_block(const KvShape& shape, KvCacheDtype dtype, std::int32_t block_size) {
  if (block_size <= 0) throw Error("--block-size must be positive");
  return kv_bytes_per_token(shape, dtype) * block_size;
}

std::int32_t kv_blocks_for_budget(std::int64_t budget_bytes, std::int64_t bytes_per_block) {
  FOLIO_CHECK(bytes_per_block > 0);
  const std::int64_t n = budget_bytes / bytes_per_block;
  if (budget_bytes <= 0 || n < 1)
    throw Error("KV cache budget of " + std::to_string(budget_bytes) +
                " bytes is smaller than one block (" + std::to_string(bytes_per_block) +
                " bytes); raise --kv-cache-memory or lower --block-size");
  if (n > std::numeric_limits<std::int32_t>::max())
    throw Error("KV cache budget buys more than 2^31-1 blocks; raise --block-size");
  return static_cast<std::int32_t>(n);
}

std::int64_t parse_byte_size(std::string_view text) {
  const std::string s(text);
  std::size_t i = 0;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
  const std::string number = s.substr(0, i);
  std::string unit = s.substr(i);
  while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  auto bad = [&] {
    return Error("cannot read byte size '" + s + "' (examples: 2GiB, 512MiB, 1.5GB, 1000000)");
  };
  if (number.empty() || number.find('.') != number.rfind('.')) throw bad();
  double mult = 0;
  const char* units[] = {"",   "B",  "KiB", "MiB", "GiB", "TiB", "KB",
                         "MB", "GB", "TB",  "K",   "M",   "G",   "T"};
  const double mults[] = {1,   1,   0x1p10, 0x1p20, 0x1p30, 0x1p40, 1e3,
                          1e6, 1e9, 1e12,   0x1p10, 0x1p20, 0x1p30, 0x1p40};
  for (std::size_t u = 0; u < std::size(units); ++u)
    if (unit == units[u]) mult = mults[u];
  if (mult == 0) throw bad();
  const double v = std::strtod(number.c_str(), nullptr) * mult;
  if (!std::isfinite(v) || v >= 0x1p62) throw bad();
  return static_cast<std::int64_t>(v);
}

}  // namespace folio::kv
