// spec/layer_skip_drafter.h: self-speculation, no second model.
//
// The draft is the target model itself running a subset of its layers, then
// its own final norm and output head (model::Model::forward over a layer
// list): the first L layers (early exit), or the first and last layers with
// the middle skipped. It shares the target's weights and its KV cache: the
// K/V of the layers it runs at positions before the draft are the target's
// own (the same tokens through the same layers), and the K/V it writes at
// its own positions are scratch the target overwrites when it verifies
// those positions.
//
//   draft(runs, kv, ws, pool)   K rounds; round j forwards, for every run
//                               still drafting, its newest token at its
//                               position, one batch for all runs; the
//                               argmax is the next draft (greedy drafts:
//                               the verifier's q is one-hot). A run stops
//                               early when the draft's own probability of
//                               its argmax is below p_min (llama.cpp's
//                               --draft-p-min): an unsure draft is
//                               usually rejected, and its row costs.
//
// The caller reserves KV slots for positions [pos, pos + k) of every run
// and binds batch sequence id `seq` of each run in `kv`.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/thread_pool.h"
#include "model/batch.h"
#include "model/kv_cache.h"
#include "model/model.h"

namespace folio::spec {

struct DraftRun {
  std::int32_t seq = 0;  // batch sequence id, bound in the KV cache
  TokenId last = 0;      // the sequence's newest token (no K/V yet) ...
  std::int32_t pos = 0;  // ... at this position
  std::int32_t k = 0;    // drafts wanted
  std::vector<TokenId> out;
};

class LayerSkipDrafter {
 public:
  // `layers`: increasing indices of the model's layers, at least one
  // (checked by the forward pass).
  LayerSkipDrafter(const model::Model& model, std::vector<std::size_t> layers, float p_min = 0);

  const std::vector<std::size_t>& layers() const { return layers_; }
  void draft(std::span<DraftRun> runs, model::KvCache& kv, model::Workspace& ws,
             kernels::ThreadPool& pool);

 private:
  const model::Model& model_;
  std::vector<std::size_t> layers_;
  float p_min_;
  model::Batch batch_;
  std::vector<std::size_t> live_;  // runs in this round's batch
};

}  // namespace folio::spec
