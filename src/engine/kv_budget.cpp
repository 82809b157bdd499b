#include "engine/kv_budget.h"

#include <algorithm>
#include <fstream>
#include <string>

namespace folio::engine {

std::int64_t mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

std::int64_t default_kv_cap() {
  const std::int64_t avail = mem_available_bytes();
  return avail > 0 ? avail / 4 : std::int64_t{1} << 30;
}

std::int64_t default_kv_cache_memory(std::int64_t per_block, std::int64_t blocks_per_seq,
                                     std::int32_t max_num_seqs, std::int64_t cap) {
  const std::int64_t need = per_block * blocks_per_seq * std::int64_t{max_num_seqs};
  if (cap <= 0) cap = default_kv_cap();
  // At least one full-length sequence, so the engine can always make progress.
  return std::max(std::min(need, cap), per_block * blocks_per_seq);
}

}  // namespace folio::engine
