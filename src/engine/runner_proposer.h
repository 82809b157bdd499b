// engine/runner_proposer.h: a spec::Proposer whose drafts come from the
// model runner (ModelRunner::draft: layer_skip runs the target's first
// layers over the shared KV cache, draft_model a second model over its own
// K/V in the same blocks).
//
// A query's sequence drafts at most as many tokens as the scheduler has KV
// slots reserved past its newest token (SchedulerConfig::
// num_lookahead_tokens; fewer when the pool was short). The drafter's K/V
// live in those slots (a draft model's record of them goes with the
// sequence's table when the plan drops it), so there is nothing to release.
#pragma once

#include <vector>

#include "engine/model_runner.h"
#include "sched/scheduler.h"
#include "spec/proposer.h"

namespace folio::engine {

class RunnerProposer final : public spec::Proposer {
 public:
  // Both must outlive the proposer.
  RunnerProposer(ModelRunner& runner, const sched::Scheduler& sched, const char* name)
      : runner_(runner), sched_(sched), name_(name) {}

  const char* name() const override { return name_; }
  void propose(std::span<spec::DraftQuery> queries) override {
    requests_.clear();
    index_.clear();
    for (std::size_t i = 0; i < queries.size(); ++i) {
      spec::DraftQuery& q = queries[i];
      q.draft.clear();
      const kv::BlockTable* t = sched_.kv().table(kv::SeqId{q.key});
      if (t == nullptr || q.tokens.empty()) continue;
      const auto pos = static_cast<std::int32_t>(q.tokens.size()) - 1;
      const std::int32_t k = std::min(q.max_tokens, t->num_slots - pos);
      if (k < 1) continue;
      requests_.push_back({kv::SeqId{q.key}, q.tokens, k, {}, 0});
      index_.push_back(i);
    }
    if (requests_.empty()) return;
    const double seconds = runner_.draft(requests_);
    for (std::size_t j = 0; j < requests_.size(); ++j) {
      spec::DraftQuery& q = queries[index_[j]];
      q.draft = std::move(requests_[j].out);
      q.forwards = requests_[j].rounds;
      q.caught_up = requests_[j].caught_up;
      q.seconds = seconds;
    }
  }
  void release(std::uint64_t /*key*/) override {}

 private:
  ModelRunner& runner_;
  const sched::Scheduler& sched_;
  const char* name_;
  std::vector<DraftRequest> requests_;
  std::vector<std::size_t> index_;
};

}  // namespace folio::engine
