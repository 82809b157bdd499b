#include "kv/kv_sizing.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "base/error.h"

namespace folio::kv {

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
