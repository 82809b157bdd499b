// Commit side of the scheduler: update() applies one step's results.
#include <algorithm>
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
    r->num_computed_tokens += s.num_tokens() - s.num_spec;  // drafts count once accepted
    const auto cache = [&] {
      kv_.cache_full_blocks(r->id, r->tokens, r->num_computed_tokens, r->cache_salt,
                            r->block_hashes);
    };
    if (!s.sample()) {
      cache();
      continue;
    }
    auto it = by_id.find(s.id);
    FOLIO_CHECK(it != by_id.end() && !it->second->samples.empty(),
                "runner output lacks the planned samples of sequence " + to_string(s.id));
    if (s.num_samples > 1) {
      FOLIO_CHECK(it->second->samples.size() == static_cast<std::size_t>(s.num_samples),
                  "runner output lacks the planned samples of sequence " + to_string(s.id));
      cache();
      commit_samples(*r, *it->second, outs);
    } else {
      commit_verified(*r, s, *it->second, outs);
    }
  }
  return outs;
}

// One sample's tokens: accepted drafts (their K/V was computed this step),
// then the target's own token. Rejected drafts give their slots back.
void Scheduler::commit_verified(Request& r, const ScheduledRequest& s, const RequestResult& result,
                                std::vector<SequenceOutput>& outs) {
  const std::int32_t a = result.num_accepted;
  const auto n = static_cast<std::int32_t>(result.samples.size());
  FOLIO_CHECK(a >= 0 && a <= s.num_spec && n >= std::max(a, 1) && n <= a + 1,
              "verification result does not fit the drafts of sequence " + to_string(s.id));
  const auto drafts = s.drafts();
  for (std::int32_t i = 0; i < a; ++i)
    FOLIO_CHECK(
        result.samples[static_cast<std::size_t>(i)].token == drafts[static_cast<std::size_t>(i)],
        "an accepted token differs from its draft");
  r.num_computed_tokens += a;
  if (s.num_spec > a) kv_.truncate(r.id, r.num_computed_tokens + config_.num_lookahead_tokens);
  SequenceOutput o{r.id, r.parent_id, r.sample_index, {}, FinishReason::kNone};
  for (const SampledToken& t : result.samples) {
    r.tokens.push_back(t.token);
    o.new_tokens.push_back(t.token);
    o.finish = finish_reason_for(r, t.finish);
    if (o.finish != FinishReason::kNone) break;
  }
  FOLIO_CHECK(n == a + 1 || o.finish != FinishReason::kNone,
              "a run of accepted drafts may only end without a token at a stop");
  kv_.cache_full_blocks(r.id, r.tokens, std::min(r.num_computed_tokens, r.num_tokens()),
                        r.cache_salt, r.block_hashes);
  outs.push_back(std::move(o));
  if (outs.back().finish != FinishReason::kNone) finish(r, outs.back().finish);
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
  c->attention_window = parent.attention_window;
  c->num_computed_tokens = parent.num_computed_tokens;
  c->num_cached_tokens = parent.num_cached_tokens;
  c->block_hashes = parent.block_hashes;
  transition(*c, RequestStatus::kRunning);
  kv_.fork(parent.id, c->id);
  // Lookahead blocks hold no computed position: the child does not share
  // them (a shared block is written in place only as a fork's last one).
  kv_.truncate(c->id, c->num_computed_tokens);
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
