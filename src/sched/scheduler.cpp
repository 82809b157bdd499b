// Planning side of the scheduler: admission control, schedule(), preemption
// and finishing. The commit side (update()) is in scheduler_update.cpp.
#include "sched/scheduler.h"

#include <algorithm>
#include <string>

#include "base/error.h"

namespace folio::sched {

Scheduler::Scheduler(const SchedulerConfig& config, const kv::KvCacheConfig& kv_config)
    : config_(config), kv_(kv_config), waiting_(config.policy) {
  if (config.max_num_batched_tokens < 1) throw Error("--max-num-batched-tokens must be >= 1");
  if (config.max_num_seqs < 1) throw Error("--max-num-seqs must be >= 1");
  if (config.max_model_len < 1) throw Error("--max-model-len must be >= 1");
  if (config.long_prefill_token_threshold < 0) {
    throw Error("--long-prefill-token-threshold must be >= 0 (0: off)");
  }
  if (config.num_lookahead_tokens < 0) throw Error("num_lookahead_tokens must be >= 0");
}

SeqId Scheduler::add_request(const RequestSpec& spec) {
  // Callers admit requests first (engine/request_limits.h gives the user's
  // error); here a request that can never run is a bug.
  const auto prompt = static_cast<std::int64_t>(spec.prompt.size());
  FOLIO_CHECK(prompt > 0 && spec.max_tokens >= 1, "request was not admitted");
  FOLIO_CHECK(spec.n >= 1 && spec.n <= config_.max_num_seqs, "n outside [1, --max-num-seqs]");
  const std::int64_t total = prompt + spec.max_tokens;
  FOLIO_CHECK(total <= config_.max_model_len, "prompt + max_tokens > --max-model-len");
  // The last sampled token is never fed back, so a sequence holds at most
  // total - 1 positions; it must fit alone in the pool (others can be
  // preempted), or it would wait forever.
  FOLIO_CHECK(max_blocks(total - 1, spec.attention_window) <= kv_.num_blocks(),
              "request larger than the KV pool");

  auto r = std::make_unique<Request>();
  r->id = SeqId{next_id_++};
  r->parent_id = r->id;
  r->tokens = spec.prompt;
  r->num_prompt_tokens = static_cast<std::int32_t>(prompt);
  r->max_tokens = spec.max_tokens;
  r->n = spec.n;
  r->priority = spec.priority;
  r->arrival_time = spec.arrival_time;
  r->pool = spec.pool;
  // K/V computed under a sink + window policy differ from full attention's
  // past the window: such blocks are cached under a key of their own.
  r->cache_salt = spec.cache_salt ^ window_cache_key(spec.attention_window);
  r->attention_window = spec.attention_window;
  Request* raw = r.get();
  requests_.emplace(raw->id, std::move(r));
  waiting_.push(raw);
  return raw->id;
}

std::int64_t Scheduler::max_blocks(std::int64_t positions, const AttentionWindow& policy) const {
  return kv::max_blocks_per_seq(kv_.groups(), kv_.block_size(), positions, max_step_tokens(config_),
                                policy);
}

const Request* Scheduler::find(SeqId id) const {
  auto it = requests_.find(id);
  return it == requests_.end() ? nullptr : it->second.get();
}

Request* Scheduler::find_mut(SeqId id) {
  auto it = requests_.find(id);
  return it == requests_.end() ? nullptr : it->second.get();
}

bool Scheduler::finish_request(SeqId id, FinishReason reason) {
  FOLIO_CHECK(reason != FinishReason::kNone);
  Request* r = find_mut(id);
  if (r == nullptr) return false;
  finish(*r, reason);
  return true;
}

void Scheduler::finish(Request& r, FinishReason reason) {
  if (r.status == RequestStatus::kRunning) {
    remove_running(&r);
  } else {
    FOLIO_CHECK(waiting_.remove(&r), "live request in no queue");
  }
  kv_.free(r.id);  // same step: the blocks are reusable by the next plan
  transition(r, finished_status(reason));
  finished_since_plan_.push_back(r.id);
  requests_.erase(r.id);
}

void Scheduler::insert_running(Request* r) {
  auto pos = std::upper_bound(
      running_.begin(), running_.end(), r,
      [&](const Request* a, const Request* b) { return served_before(*a, *b, config_.policy); });
  running_.insert(pos, r);
}

void Scheduler::remove_running(Request* r) {
  auto it = std::find(running_.begin(), running_.end(), r);
  FOLIO_CHECK(it != running_.end());
  running_.erase(it);
}

SchedulerOutput Scheduler::schedule() {
  FOLIO_CHECK(!plan_pending_, "schedule() called twice without update()");
  SchedulerOutput out;
  out.step = ++step_;
  plan_pending_ = true;
  std::int32_t budget = config_.max_num_batched_tokens;
  schedule_running(out, budget);
  if (out.preempted_ids.empty()) admit_waiting(out, budget);
  for (const auto& s : out.requests) {
    out.cow_copies.insert(out.cow_copies.end(), s.cow.begin(), s.cow.end());
    out.total_tokens += s.num_tokens();
  }
  out.finished_ids = std::move(finished_since_plan_);
  finished_since_plan_.clear();
  return out;
}

std::int32_t Scheduler::lookahead(const Request& r, std::int32_t num_computed,
                                  std::int32_t num_new) const {
  const bool caught_up = num_computed + num_new == r.num_tokens();
  return caught_up ? config_.num_lookahead_tokens : 0;
}

std::int32_t Scheduler::prefill_cap(std::int32_t remaining) const {
  const std::int32_t t = config_.long_prefill_token_threshold;
  return t > 0 ? std::min(remaining, t) : remaining;
}

void Scheduler::schedule_running(SchedulerOutput& out, std::int32_t& budget) {
  // Decodes first, then partial prefills; policy order within each.
  std::vector<Request*> order;
  order.reserve(running_.size());
  for (Request* r : running_)
    if (r->num_tokens() - r->num_computed_tokens == 1) order.push_back(r);
  for (Request* r : running_)
    if (r->num_tokens() - r->num_computed_tokens != 1) order.push_back(r);

  for (Request* r : order) {
    if (r->status != RequestStatus::kRunning) continue;  // preempted this step
    if (budget == 0) break;
    const std::int32_t remaining = r->num_tokens() - r->num_computed_tokens;
    FOLIO_CHECK(remaining > 0, "running request with nothing to compute");
    const std::int32_t num_new = std::min(prefill_cap(remaining), budget);
    // Drafts ride on a decode, within the budget and max_tokens.
    std::int32_t num_spec = 0;
    if (remaining == 1 && !r->spec_tokens.empty()) {
      num_spec = std::min(
          {static_cast<std::int32_t>(r->spec_tokens.size()), budget - num_new, r->draft_room()});
      num_spec = std::max(num_spec, 0);
    }
    std::int32_t ahead = lookahead(*r, r->num_computed_tokens, num_new);
    while (true) {
      auto slots = kv_.allocate_slots(r->id, r->num_computed_tokens, num_new + num_spec + ahead);
      if (slots) {
        add_scheduled(*r, num_new, num_spec, std::move(*slots), out);
        budget -= num_new + num_spec;
        break;
      }
      // Lookahead, then drafts, are dropped before anyone is preempted for them.
      if (ahead > 0) {
        ahead = 0;
        continue;
      }
      if (num_spec > 0) {
        num_spec = 0;
        continue;
      }
      Request* victim = running_.back();
      preempt(*victim, out, budget);
      if (victim == r) break;
    }
    r->spec_tokens.clear();  // used, or stale once the step runs
  }
}

bool Scheduler::set_spec_tokens(SeqId id, std::vector<TokenId> draft) {
  Request* r = find_mut(id);
  if (r == nullptr || r->status != RequestStatus::kRunning || !r->can_draft()) return false;
  r->spec_tokens = std::move(draft);
  return true;
}

void Scheduler::admit_waiting(SchedulerOutput& out, std::int32_t& budget) {
  std::int32_t seats = 0;
  for (const Request* r : running_) seats += r->seats();
  while (budget > 0 && !waiting_.empty()) {
    Request* r = waiting_.front();
    if (seats + r->seats() > config_.max_num_seqs) break;
    FOLIO_CHECK(r->num_computed_tokens == 0);
    // Look up all but the last token: at least one token must be computed
    // to produce logits, and a hit never covers a block we would write. A
    // pooling request computes every position (none is looked up).
    auto lookup = std::span<const TokenId>(r->tokens).first(r->pool ? 0 : r->tokens.size() - 1);
    kv::PrefixHit hit =
        kv_.find_longest_prefix(lookup, r->cache_salt, r->block_hashes, r->attention_window);
    const std::int32_t num_new = std::min(prefill_cap(r->num_tokens() - hit.num_tokens), budget);
    const std::int32_t ahead = lookahead(*r, hit.num_tokens, num_new);
    auto slots =
        kv_.allocate_slots(r->id, hit.num_tokens, num_new + ahead, hit, r->attention_window);
    if (!slots && ahead > 0)
      slots = kv_.allocate_slots(r->id, hit.num_tokens, num_new, hit, r->attention_window);
    if (!slots) break;
    if (kv_.prefix_caching() && !r->pool) kv_.record_prefix_query(r->num_tokens(), hit.num_tokens);
    if (r->num_cached_tokens < 0) r->num_cached_tokens = hit.num_tokens;
    r->num_computed_tokens = hit.num_tokens;
    waiting_.pop_front();
    transition(*r, RequestStatus::kRunning);
    insert_running(r);
    add_scheduled(*r, num_new, 0, std::move(*slots), out);
    budget -= num_new;
    seats += r->seats();
  }
}

void Scheduler::preempt(Request& r, SchedulerOutput& out, std::int32_t& budget) {
  remove_running(&r);
  auto planned = std::find_if(out.requests.begin(), out.requests.end(),
                              [&](const ScheduledRequest& s) { return s.id == r.id; });
  if (planned != out.requests.end()) {  // already served this step: take it back
    budget += planned->num_tokens();
    out.requests.erase(planned);
  }
  kv_.free(r.id);
  r.num_computed_tokens = 0;
  r.runner_has_table = false;
  r.spec_tokens.clear();
  ++r.num_preemptions;
  ++num_preemptions_;
  transition(r, RequestStatus::kPreempted);
  waiting_.push(&r);
  out.preempted_ids.push_back(r.id);
}

void Scheduler::add_scheduled(Request& r, std::int32_t num_new, std::int32_t num_spec,
                              kv::SlotAllocation&& slots, SchedulerOutput& out) {
  ScheduledRequest s;
  s.id = r.id;
  s.start_pos = r.num_computed_tokens;
  s.attention_window = r.attention_window;
  auto first = r.tokens.begin() + s.start_pos;
  s.tokens.assign(first, first + num_new);
  s.tokens.insert(s.tokens.end(), r.spec_tokens.begin(), r.spec_tokens.begin() + num_spec);
  s.num_spec = num_spec;
  s.pool = r.pool;
  FOLIO_CHECK(!r.pool || s.start_pos + num_new <= r.num_prompt_tokens,
              "a pooling request computes its prompt only");
  if (r.runner_has_table) {
    s.tables = std::move(slots.tables);
  } else {  // first plan since admission, resumption or fork: send it all
    for (std::int32_t g = 0; g < kv_.num_groups(); ++g) {
      const kv::BlockTable* t = kv_.table(r.id, g);
      s.tables.push_back({t->num_skipped, 0, t->blocks, t->num_sink});
    }
    r.runner_has_table = true;
  }
  s.cow = std::move(slots.cow);
  // Caught up: the last token's logits give the next token, and each
  // draft's row verifies it (one row per draft, plus the last token's).
  const bool caught_up = s.start_pos + num_new == r.num_tokens();
  FOLIO_CHECK(caught_up || num_spec == 0, "drafts on a request that is not caught up");
  s.num_logits = caught_up ? 1 + num_spec : 0;
  s.num_samples = caught_up ? r.pending_samples() : 0;
  out.requests.push_back(std::move(s));
}

}  // namespace folio::sched
