// tests/engine/greedy_reference.h: a model's greedy continuation computed
// straight from the model, the reference the engine and runner tests check
// against: the whole prompt in one forward, then one token per forward,
// one sequence in a contiguous f32 cache (no paging, no batching), under a
// sink + window attention policy when one is given (nothing released: the
// forward pass masks by position).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/thread_pool.h"
#include "model/contiguous_kv_cache.h"
#include "model/model.h"
#include "sampling/draw.h"

namespace folio::engine::testing {

inline std::vector<TokenId> greedy_after(const model::Model& m, const std::vector<TokenId>& prompt,
                                         std::int32_t n, int threads = 1,
                                         const AttentionWindow& window = {}) {
  model::ContiguousKvCache kv(m.config(), 1, prompt.size() + static_cast<std::size_t>(n));
  model::Workspace ws;
  kernels::ThreadPool pool(threads);
  model::Batch b;
  for (std::size_t i = 0; i < prompt.size(); ++i)
    b.add(prompt[i], static_cast<std::int32_t>(i), 0, i + 1 == prompt.size(), window);
  std::vector<TokenId> out;
  for (std::int32_t i = 0; i < n; ++i) {
    out.push_back(sampling::argmax(m.forward(b, kv, ws, pool)));
    b.clear();
    b.add(out.back(), static_cast<std::int32_t>(prompt.size() + out.size()) - 1, 0, true, window);
  }
  return out;
}

}  // namespace folio::engine::testing
