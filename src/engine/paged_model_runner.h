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
// Owns the kernel thread pool and the forward workspace, so the engine core
// holds no model state at all.
#pragma once

#include <memory>
#include <optional>

#include "engine/model_runner.h"
#include "engine/paged_kv_cache.h"
#include "kernels/thread_pool.h"
#include "model/batch.h"
#include "model/model.h"

namespace folio::engine {

class PagedModelRunner final : public ModelRunner {
 public:
  // `model` must outlive the runner; `threads` kernel threads (0: all
  // hardware threads).
  PagedModelRunner(const model::Model& model, int threads);

  std::int32_t vocab_size() const override;
  std::int64_t context_length() const override;
  std::int64_t kv_bytes_per_block(std::int32_t block_size, kernels::KvDtype dtype) const override;
  std::int64_t init_kv(const KvLayout& layout) override;
  RunnerOutput execute(const sched::SchedulerOutput& plan) override;

  const model::Model& model() const { return model_; }
  int threads() const { return pool_.size(); }
  const PagedKvCache* cache() const { return cache_ ? &*cache_ : nullptr; }

 private:
  void build_batch(const sched::SchedulerOutput& plan);

  const model::Model& model_;
  kernels::ThreadPool pool_;
  std::optional<PagedKvCache> cache_;
  model::Workspace ws_;
  model::Batch batch_;
};

}  // namespace folio::engine
