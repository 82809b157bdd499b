#include "spec/layer_skip_drafter.h"

#include <utility>

#include "base/error.h"
#include "sampling/draw.h"

namespace folio::spec {

LayerSkipDrafter::LayerSkipDrafter(const model::Model& model, std::vector<std::size_t> layers)
    : model_(model), layers_(std::move(layers)) {}

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
    for (std::size_t j = 0; j < live_.size(); ++j)
      runs[live_[j]].out.push_back(sampling::argmax(logits.subspan(j * vocab, vocab)));
  }
}

}  // namespace folio::spec
