// sched/scheduler.h: continuous batching under one token budget.
//
// schedule() builds a step plan in two passes over a budget of
// max_num_batched_tokens tokens and max_num_seqs sequences:
//
//  1. running requests, decodes first (so a long prompt's chunks never stall
//     them), then unfinished prefills, each in policy order; each advances
//     by min(remaining, budget) tokens. When the KV pool cannot supply a
//     request's blocks, the lowest-ranked running request (last in policy
//     order: latest arrival, or lowest priority) is preempted by recompute,
//     possibly the request itself.
//  2. if nobody was preempted, waiting requests in policy order, while
//     budget, seats and blocks last (strict order: the head blocks the rest).
//     Their prefix-cache hits count as already computed tokens.
//
// update() commits the step: advances num_computed_tokens (by the verified
// tokens: rejected drafts release their slots), caches newly full blocks,
// appends sampled tokens, forks n > 1 requests at their first sample,
// finishes requests (the caller's stop verdict, or max_tokens) and frees
// their blocks at once. abort() frees blocks immediately.
//
// Drafts: set_spec_tokens() gives a caught-up request the tokens to verify
// in its next step. They take budget like any token; the plan carries as
// many as the budget and max_tokens allow (the last draft's row yields one
// more token, so a request never passes max_tokens), and fewer or none when
// KV blocks are short (dropped before anyone is preempted for them). With
// num_lookahead_tokens, a caught-up request also keeps that many slots
// reserved past its verified tokens, for a model drafter's positions.
//
// Pure integer logic: no model, no threads, no clocks (arrival times come
// from the caller), so tests drive it step by step.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "sched/request.h"
#include "sched/request_queue.h"
#include "sched/scheduler_config.h"
#include "sched/scheduler_output.h"

namespace folio::sched {

class Scheduler {
 public:
  // Throws folio::Error for limits that cannot work (non-positive values).
  Scheduler(const SchedulerConfig& config, const kv::KvCacheConfig& kv_config);

  // Queues a request and returns its sequence id. The request must have
  // been admitted (engine/request_limits.h): one that can never run (empty
  // prompt, max_tokens < 1, n outside [1, max_num_seqs], prompt + max_tokens
  // > max_model_len, more KV blocks than the pool) fails a FOLIO_CHECK.
  SeqId add_request(const RequestSpec& spec);
  // Ends one sequence now (any live state) and frees its blocks; it is
  // reported in the next plan's finished_ids. False if unknown/finished.
  // Children of an n > 1 request are separate sequences.
  bool abort(SeqId id) { return finish_request(id, FinishReason::kAbort); }
  bool finish_request(SeqId id, FinishReason reason);

  // Drafts for the next step of a running, caught-up sequence with one
  // sample (n > 1 forks first). False (nothing set) otherwise.
  bool set_spec_tokens(SeqId id, std::vector<TokenId> draft);

  SchedulerOutput schedule();
  std::vector<SequenceOutput> update(const SchedulerOutput& plan, const ModelRunnerOutput& result);

  const SchedulerConfig& config() const { return config_; }
  bool has_unfinished() const { return !requests_.empty(); }
  std::int32_t num_waiting() const { return static_cast<std::int32_t>(waiting_.size()); }
  std::int32_t num_running() const { return static_cast<std::int32_t>(running_.size()); }
  std::span<Request* const> running() const { return running_; }
  const RequestQueue& waiting() const { return waiting_; }
  const Request* find(SeqId id) const;
  std::int64_t num_preemptions() const { return num_preemptions_; }
  const kv::KvCacheManager& kv() const { return kv_; }
  kv::KvCacheManager& kv() { return kv_; }
  // Most KV blocks a sequence of `positions` positions ever holds under this
  // configuration (sliding groups, and every group under a sink + window
  // `policy`, hold their sinks and a window plus one step).
  std::int64_t max_blocks(std::int64_t positions, const AttentionWindow& policy = {}) const;

 private:
  // Tokens of `remaining` that one request may compute this step (the
  // long-prefill threshold), before the step's budget applies.
  std::int32_t prefill_cap(std::int32_t remaining) const;
  // Slots to reserve past this step's tokens (num_lookahead_tokens once
  // computing num_new more after num_computed catches the request up).
  std::int32_t lookahead(const Request& r, std::int32_t num_computed, std::int32_t num_new) const;
  void schedule_running(SchedulerOutput& out, std::int32_t& budget);
  void admit_waiting(SchedulerOutput& out, std::int32_t& budget);
  void preempt(Request& r, SchedulerOutput& out, std::int32_t& budget);
  void add_scheduled(Request& r, std::int32_t num_new, std::int32_t num_spec,
                     kv::SlotAllocation&& slots, SchedulerOutput& out);
  void commit_samples(Request& r, const RequestResult& result, std::vector<SequenceOutput>& outs);
  void commit_verified(Request& r, const ScheduledRequest& s, const RequestResult& result,
                       std::vector<SequenceOutput>& outs);
  void fork_child(Request& parent, std::int32_t k, const SampledToken& s,
                  std::vector<SequenceOutput>& outs);
  // Caller's verdict, else kLength once max_tokens outputs exist.
  FinishReason finish_reason_for(const Request& r, FinishReason verdict) const;
  void finish(Request& r, FinishReason reason);
  void insert_running(Request* r);
  void remove_running(Request* r);
  Request* find_mut(SeqId id);

  SchedulerConfig config_;
  kv::KvCacheManager kv_;
  std::unordered_map<SeqId, std::unique_ptr<Request>> requests_;  // live ones
  RequestQueue waiting_;                                          // WAITING and PREEMPTED
  std::vector<Request*> running_;                                 // RUNNING, in policy order
  std::vector<SeqId> finished_since_plan_;
  std::uint64_t next_id_ = 1;
  std::uint64_t step_ = 0;
  bool plan_pending_ = false;
  std::int64_t num_preemptions_ = 0;
};

}  // namespace folio::sched
