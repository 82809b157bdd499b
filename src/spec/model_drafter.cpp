#include "spec/model_drafter.h"

#include <cmath>
#include <numeric>
#include <utility>

#include "base/error.h"
#include "sampling/draw.h"
#include "sampling/logprobs.h"

namespace folio::spec {

ModelDrafter::ModelDrafter(const model::Model& model, std::vector<std::size_t> layers, float p_min)
    : model_(model), layers_(std::move(layers)), p_min_(p_min) {}

std::vector<std::size_t> all_layers(const model::Model& m) {
  std::vector<std::size_t> out(m.config().n_layer);
  std::iota(out.begin(), out.end(), std::size_t{0});
  return out;
}

void ModelDrafter::draft(std::span<DraftRun> runs, model::KvCache& kv, model::Workspace& ws,
                         kernels::ThreadPool& pool) {
  for (DraftRun& r : runs) {
    r.out.clear();
    r.rounds = 0;
  }
  const auto vocab = model_.n_vocab();
  for (std::int32_t round = 0;; ++round) {
    batch_.clear();
    live_.clear();
    for (std::size_t i = 0; i < runs.size(); ++i) {
      DraftRun& r = runs[i];
      if (round >= r.k) continue;
      if (round == 0) {
        const auto first = r.pos - static_cast<std::int32_t>(r.behind.size());
        for (std::size_t j = 0; j < r.behind.size(); ++j)
          batch_.add(r.behind[j], first + static_cast<std::int32_t>(j), r.seq, false);
      }
      const TokenId t = round == 0 ? r.last : r.out.back();
      batch_.add(t, r.pos + round, r.seq, true);
      live_.push_back(i);
    }
    if (live_.empty()) return;
    const auto logits = model_.forward(batch_, kv, ws, pool, layers_);
    for (std::size_t j = 0; j < live_.size(); ++j) {
      DraftRun& r = runs[live_[j]];
      ++r.rounds;
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
