// engine/paged_model_runner.h: the real ModelRunner: a loaded model over the
// paged KV cache.
//
// execute(plan):
//   1 cache.apply(plan)   forget finished / preempted tables, apply the
//                         block-table deltas, run the COW copies
//   2 cache.bind(plan)    batch sequence id i == plan.requests[i]
//   3 batch = plan        every scheduled token at its position; the last
//                         num_logits tokens of each entry are logit rows
//   4 model.forward(batch, cache, workspace, pool)
//
// draft(requests) (speculative decoding), spec::ModelDrafter with a
// workspace of its own:
//   layer_skip   the model's own subset of layers over the same cache;
//   draft_model  a second model over its own K/V in the same blocks
//                (DraftKvCache, which follows every plan too): each
//                sequence first catches up on the positions it has no
//                draft K/V for, in the same forward as its first draft.
//
// Owns the kernel thread pool and the forward workspace, so the engine core
// holds no model state at all.
#pragma once

#include <memory>
#include <optional>

#include "engine/draft_kv_cache.h"
#include "engine/model_runner.h"
#include "engine/paged_kv_cache.h"
#include "kernels/thread_pool.h"
#include "model/batch.h"
#include "model/model.h"
#include "spec/model_drafter.h"
#include "spec/speculative_config.h"

namespace folio::engine {

class PagedModelRunner final : public ModelRunner {
 public:
  // `model` must outlive the runner; `threads` kernel threads (0: all
  // hardware threads).
  PagedModelRunner(const model::Model& model, int threads);
  // Kernels run on `pool`, which other runners may share (several models in
  // one server); their steps must not overlap (engine/step_gate.h).
  PagedModelRunner(const model::Model& model, std::shared_ptr<kernels::ThreadPool> pool);

  std::int32_t vocab_size() const override;
  std::int32_t hidden_size() const override;
  std::int64_t context_length() const override;
  std::vector<kv::KvGroup> kv_groups() const override;
  std::int64_t kv_bytes_per_block(std::int32_t block_size, kernels::KvDtype dtype) const override;
  std::int64_t init_kv(const KvLayout& layout) override;
  RunnerOutput execute(const sched::SchedulerOutput& plan) override;
  double draft(std::span<DraftRequest> requests) override;

  // Self-speculation: `layers` of the model draft (spec/model_drafter.h).
  void enable_layer_skip(std::vector<std::size_t> layers, float p_min = 0);
  // A second model drafts (it must outlive the runner). Throws
  // folio::Error when its output size is not the model's. Before init_kv().
  // It catches its K/V up on a long context in forwards of at most
  // `catch_up_rows` positions (the engine's default token budget).
  void enable_draft_model(const model::Model& draft, float p_min = 0,
                          std::int32_t catch_up_rows = kDefaultCatchUpRows);
  static constexpr std::int32_t kDefaultCatchUpRows = 2048;
  // Sets up what `c` needs of the runner (layer_skip: the drafter, its
  // num_layers resolved for this model; draft_model: the drafter over
  // `draft`, which the caller loaded from c.draft_model and checked for
  // the same vocabulary) and returns `c` resolved. Throws folio::Error for
  // a num_layers the model does not have, or draft_model without `draft`.
  spec::SpeculativeConfig configure_speculation(spec::SpeculativeConfig c,
                                                const model::Model* draft = nullptr);
  // Layers the draft runs (layer_skip: of this model; draft_model: of the
  // draft); 0 without a drafter.
  std::size_t draft_layers() const { return drafter_ ? drafter_->layers().size() : 0; }
  const DraftKvCache* draft_cache() const { return draft_kv_ ? &*draft_kv_ : nullptr; }

  const model::Model& model() const { return model_; }
  int threads() const { return pool_->size(); }
  const PagedKvCache* cache() const { return cache_ ? &*cache_ : nullptr; }

 private:
  void build_batch(const sched::SchedulerOutput& plan);
  void draft_with_own_kv(std::span<DraftRequest> requests);
  std::int32_t catch_up(sched::SeqId seq, std::span<const TokenId> tokens, std::int32_t from,
                        std::int32_t pos);

  const model::Model& model_;
  std::shared_ptr<kernels::ThreadPool> pool_;  // never null
  std::optional<PagedKvCache> cache_;
  model::Workspace ws_;
  model::Batch batch_;
  std::optional<spec::ModelDrafter> drafter_;
  const model::Model* draft_model_ = nullptr;  // draft_model only: the drafter's model ...
  std::optional<DraftKvCache> draft_kv_;       // ... and its K/V
  std::vector<std::int32_t> draft_from_;       // per run: its first catch-up position
  std::int32_t draft_catch_up_rows_ = kDefaultCatchUpRows;
  std::vector<TokenId> written_;
  model::Workspace draft_ws_;
  std::vector<sched::SeqId> draft_seqs_;
  std::vector<spec::DraftRun> draft_runs_;
};

}  // namespace folio::engine
