#include "kv/kv_groups.h"

#include <algorithm>
#include <map>

#include "base/error.h"

namespace folio::kv {

KvGroupLayout group_layers(std::span<const std::int32_t> layer_windows) {
  KvGroupLayout out;
  out.layer_group.assign(layer_windows.size(), 0);
  out.layer_slot.assign(layer_windows.size(), 0);
  if (layer_windows.empty()) return out;
  // Window -> its layers in order; the map puts 0 (full attention) first.
  std::map<std::int32_t, std::vector<std::size_t>> by_window;
  for (std::size_t l = 0; l < layer_windows.size(); ++l) {
    FOLIO_CHECK(layer_windows[l] >= 0, "negative attention window");
    by_window[layer_windows[l]].push_back(l);
  }
  std::size_t slots = layer_windows.size();
  for (const auto& [w, layers] : by_window) slots = std::min(slots, layers.size());
  out.slots = static_cast<std::int32_t>(slots);
  for (const auto& [w, layers] : by_window) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      if (i % slots == 0) out.groups.push_back({w});
      out.layer_group[layers[i]] = static_cast<std::int32_t>(out.groups.size()) - 1;
      out.layer_slot[layers[i]] = static_cast<std::int32_t>(i % slots);
    }
  }
  return out;
}

std::int32_t skipped_blocks(std::int32_t window, std::int32_t block_size,
                            std::int64_t num_computed) {
  FOLIO_CHECK(block_size > 0 && window >= 0 && num_computed >= 0);
  if (window == 0) return 0;
  // The first query (position num_computed) reads num_computed - window + 1 on.
  const std::int64_t first = num_computed - window + 1;
  return first > 0 ? static_cast<std::int32_t>(first / block_size) : 0;
}

BlockRange released_blocks(const AttentionWindow& w, std::int32_t block_size,
                           std::int64_t num_computed) {
  FOLIO_CHECK(block_size > 0 && w.window >= 0 && w.sinks >= 0);
  if (!w.on()) return {};
  const std::int32_t lo = (w.sinks + block_size - 1) / block_size;
  return {lo, std::max(lo, skipped_blocks(w.window, block_size, num_computed))};
}

std::int64_t every_position_blocks(std::span<const KvGroup> groups, std::int32_t block_size,
                                   std::int64_t positions) {
  FOLIO_CHECK(block_size > 0 && positions >= 0);
  const std::int64_t full = (positions + block_size - 1) / block_size;
  return full * static_cast<std::int64_t>(std::max<std::size_t>(groups.size(), 1));
}

std::int64_t max_blocks_per_seq(std::span<const KvGroup> groups, std::int32_t block_size,
                                std::int64_t positions, std::int64_t max_step_tokens,
                                const AttentionWindow& policy) {
  FOLIO_CHECK(max_step_tokens > 0);
  const std::int64_t full = every_position_blocks({}, block_size, positions);
  const KvGroup one_full{};
  if (groups.empty()) groups = std::span<const KvGroup>(&one_full, 1);
  std::int64_t total = 0;
  for (const KvGroup& g : groups) {
    const AttentionWindow w = effective_window(g.window, policy);
    if (!w.on()) {
      total += full;
      continue;
    }
    // The sink blocks, then the blocks from the window's first position to
    // the step's last: at most ceil((W - 1 + step) / B) + 1 (the first one
    // may be partly before it).
    const std::int64_t span = w.window - 1 + max_step_tokens;
    const std::int64_t sinks = released_blocks(w, block_size, 0).lo;
    total += std::min(full, sinks + (span + block_size - 1) / block_size + 1);
  }
  return total;
}

}  // namespace folio::kv
