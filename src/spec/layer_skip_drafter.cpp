#include "spec/layer_skip_drafter.h"

#include <cmath>
#include <utility>

#include "base/error.h"
#include "sampling/draw.h"
#include "sampling/logprobs.h"

namespace folio::spec {

LayerSkipDrafter::LayerSkipDrafter(const model::Model& model, std::vector<std::size_t> layers,
                                   float p_min)
    : model_(model), layers_(std::move(layers)), p_min_(p_min) {}

void LayerSkipDrafter::draft(std::span<DraftRun> runs, model::KvCache& kv, model::Workspace& ws,
                             kernels::ThreadPool& pool) {
  for (DraftRun& r : runs) r.out.clear();
  const auto vocab = model_.n_vocab();
  for (std::int32_t round = 0;; ++round) {
    batch_.clear();
    live_.clear();
    for (std::size_t i = 0; i < runs.size(); ++i) {
      DraftRun& r = runs[i];
      if (round >= r.k) continue;
      const TokenId t = round == 0 ? r.last : r.out.back();
      batch_.add(t, r.pos + round, r.seq, true);
      live_.push_back(i);
    }
    if (batch_.empty()) return;
    const auto logits = model_.forward(batch_, kv, ws, pool, layers_);
    for (std::size_t j = 0; j < live_.size(); ++j) {
      DraftRun& r = runs[live_[j]];
      const auto row = logits.subspan(j * vocab, vocab);
      const TokenId best = sampling::argmax(row);
      if (p_min_ > 0 &&
          std::exp(sampling::compute_logprobs(row, best, 0).chosen.logprob) < p_min_) {
        r.k = static_cast<std::int32_t>(r.out.size());  // unsure: stop this run here
        continue;
      }
      r.out.push_back(best);
    }
  }
}

}  // namespace folio::spec
