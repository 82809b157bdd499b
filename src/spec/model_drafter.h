// spec/model_drafter.h: greedy drafting with a model (speculative decoding
// methods layer_skip and draft_model).
//
// ModelDrafter runs a model, or a subset of its layers, autoregressively
// for K rounds over a KV cache, one batch per round for every run still
// drafting; the argmax is the next draft (greedy drafts: the verifier's q
// is one-hot, spec/rejection.h). The two methods differ only in what they
// hand it:
//
//   layer_skip   the target itself, a subset of its layers (the first L,
//                or the first and last with the middle skipped), then its
//                own final norm and output head, over the target's KV
//                cache. The K/V of those layers before the draft is the
//                target's own (the same tokens through the same layers);
//                what it writes at the draft positions is scratch the
//                target overwrites when it verifies them.
//   draft_model  a second, smaller model with the target's vocabulary, all
//                its layers, over its own K/V (engine/draft_kv_cache.h).
//                Its K/V is computed lazily, so a run may bring `behind`:
//                the tokens before `last` the draft has no K/V for yet,
//                forwarded in round 0's batch (no logits) ahead of `last`.
//
// A run stops early when the draft's own probability of its argmax is
// below p_min (llama.cpp's --draft-p-min): an unsure draft is usually
// rejected, and its verification row costs.
//
// The caller reserves KV slots for positions [pos - behind.size(), pos + k)
// of every run and binds batch sequence id `seq` of each run in `kv`.
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
  std::int32_t seq = 0;             // batch sequence id, bound in the KV cache
  std::span<const TokenId> behind;  // tokens at [pos - behind.size(), pos): K/V first
  TokenId last = 0;                 // the sequence's newest token (no K/V yet) ...
  std::int32_t pos = 0;             // ... at this position
  std::int32_t k = 0;               // drafts wanted
  std::vector<TokenId> out;         // filled: up to k drafts
  std::int32_t rounds = 0;          // filled: forwards it was in, the K/V written
                                    // at pos .. pos + rounds - 1 (last, out[0], ...)
};

class ModelDrafter {
 public:
  // `layers`: increasing indices of the model's layers, at least one
  // (checked by the forward pass); all of them for a draft model.
  ModelDrafter(const model::Model& model, std::vector<std::size_t> layers, float p_min = 0);

  const model::Model& model() const { return model_; }
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

// All layer indices of `m`, in order.
std::vector<std::size_t> all_layers(const model::Model& m);

}  // namespace folio::spec
