// Commit side of the scheduler: update() applies one step's results.
#include <unordered_map>

#include "base/error.h"
#include "sched/scheduler.h"

namespace folio::sched {

std::vector<SequenceOutput> Scheduler::update(const SchedulerOutput& plan,
                                              const ModelRunnerOutput& result) {
  FOLIO_CHECK(plan_pending_ && plan.step == step_, "update() must follow its own schedule()");
  plan_pending_ = false;
  std::unordered_map<SeqId, const RequestResult*> by_id;
  for (const auto& res : result.results) by_id[res.id] = &res;

  std::vector<SequenceOutput> outs;
  for (const ScheduledRequest& s : plan.requests) {
    Request* r = find_mut(s.id);
    if (r == nullptr || r->status != RequestStatus::kRunning) continue;  // aborted meanwhile
    FOLIO_CHECK(r->num_computed_tokens == s.start_pos, "plan and request disagree");
    r->num_computed_tokens += s.num_tokens();
    kv_.cache_full_blocks(r->id, r->tokens, r->num_computed_tokens, r->cache_salt, r->block_hashes);
    if (!s.sample()) continue;
    auto it = by_id.find(s.id);
    FOLIO_CHECK(
        it != by_id.end() && it->second->samples.size() == static_cast<std::size_t>(s.num_samples),
        "runner output lacks the planned samples of sequence " + to_string(s.id));
    commit_samples(*r, *it->second, outs);
  }
  return outs;
}

void Scheduler::commit_samples(Request& r, const RequestResult& result,
                               std::vector<SequenceOutput>& outs) {
  // Children copy the parent's tokens before sample 0 is appended to it.
  if (result.samples.size() > 1) {
    r.forked = true;
    for (std::size_t k = 1; k < result.samples.size(); ++k)
      fork_child(r, static_cast<std::int32_t>(k), result.samples[k], outs);
  }
  const SampledToken& s = result.samples[0];
  r.tokens.push_back(s.token);
  const FinishReason reason = finish_reason_for(r, s.finish);
  outs.push_back({r.id, r.parent_id, r.sample_index, {s.token}, reason});
  if (reason != FinishReason::kNone) finish(r, reason);
}

void Scheduler::fork_child(Request& parent, std::int32_t k, const SampledToken& s,
                           std::vector<SequenceOutput>& outs) {
  auto c = std::make_unique<Request>();
  c->id = SeqId{next_id_++};
  c->parent_id = parent.id;
  c->sample_index = k;
  c->tokens = parent.tokens;
  c->tokens.push_back(s.token);
  c->num_prompt_tokens = parent.num_prompt_tokens;
  c->max_tokens = parent.max_tokens;
  c->priority = parent.priority;
  c->arrival_time = parent.arrival_time;
  c->cache_salt = parent.cache_salt;
  c->num_computed_tokens = parent.num_computed_tokens;
  c->num_cached_tokens = parent.num_cached_tokens;
  c->block_hashes = parent.block_hashes;
  transition(*c, RequestStatus::kRunning);
  kv_.fork(parent.id, c->id);
  Request* raw = c.get();
  requests_.emplace(raw->id, std::move(c));
  insert_running(raw);
  const FinishReason reason = finish_reason_for(*raw, s.finish);
  outs.push_back({raw->id, parent.id, k, {s.token}, reason});
  if (reason != FinishReason::kNone) finish(*raw, reason);
}

FinishReason Scheduler::finish_reason_for(const Request& r, FinishReason verdict) const {
  if (verdict != FinishReason::kNone) return verdict;
  if (r.num_output_tokens() >= r.max_tokens) return FinishReason::kLength;
  return FinishReason::kNone;
}

}  // namespace folio::sched
