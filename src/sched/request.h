// sched/request.h: one sequence's scheduling state and its state machine.
//
//            add                 schedule()               finish / abort
//   (new) ------> WAITING ---------------------> RUNNING ----------------> FINISHED_*
//                    ^                          |  ^  |
//                    |      out of KV blocks    |  |  |  (any live state can
//                    +--- PREEMPTED <-----------+  |  |   be aborted)
//                              |     re-admitted   |
//                              +-------------------+
//
// The one scheduling rule (vLLM v1): `tokens` holds prompt then outputs;
// `num_computed_tokens` counts leading tokens whose K/V are in the cache.
// Each step advances it by up to the remaining count; prefill, chunked
// prefill, prefix hits and decode are all this. Preemption (recompute)
// resets it to 0; the request's tokens, outputs included, are kept, so it
// resumes by recomputing them (with prefix-cache help) and finishes the same.
//
// A request with n > 1 samples runs as one sequence until its first sample;
// then it forks n-1 child sequences sharing its blocks (copy-on-write).
//
// Speculative tokens are the same rule: a caught-up request with drafts
// (`spec_tokens`, set by the engine's proposer) is scheduled with its last
// token plus the drafts, and after verification num_computed_tokens counts
// only the accepted ones (the KV slots of the rest are released).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/attention_window.h"
#include "base/finish_reason.h"
#include "kv/block_hash.h"
#include "kv/types.h"

namespace folio::sched {

using kv::SeqId;

enum class RequestStatus {
  kWaiting,
  kRunning,
  kPreempted,
  kFinishedStopped,
  kFinishedLength,
  kFinishedAborted,
  kFinishedError,
};

const char* status_name(RequestStatus s);
bool is_finished(RequestStatus s);
RequestStatus finished_status(FinishReason r);

enum class SchedulingPolicy { kFcfs, kPriority };

struct Request {
  SeqId id;
  SeqId parent_id;                // == id for a root request
  std::int32_t sample_index = 0;  // which of the parent's n samples
  std::vector<TokenId> tokens;    // prompt, then outputs
  std::int32_t num_prompt_tokens = 0;
  std::int32_t max_tokens = 0;
  std::int32_t n = 1;         // samples; children have n = 1
  bool forked = false;        // the n-1 children exist
  std::int32_t priority = 0;  // lower value = served first (vLLM)
  double arrival_time = 0;
  std::uint64_t cache_salt = 0;      // prefix-cache extra key (LoRA id / tenant salt)
  AttentionWindow attention_window;  // sink + window policy (off: full attention)
  bool pool = false;                 // mean pooling: no prefix hit, hidden sums wanted

  std::int32_t num_computed_tokens = 0;
  RequestStatus status = RequestStatus::kWaiting;
  std::int32_t num_preemptions = 0;
  std::int32_t num_cached_tokens = -1;      // prefix hit at first admission (-1: not yet)
  std::vector<kv::BlockHash> block_hashes;  // memo of full-block hashes of `tokens`
  bool runner_has_table = false;            // its whole block table went out in a plan
  std::vector<TokenId> spec_tokens;         // drafts to verify in its next step

  std::int32_t num_tokens() const { return static_cast<std::int32_t>(tokens.size()); }
  std::int32_t num_output_tokens() const { return num_tokens() - num_prompt_tokens; }
  std::span<const TokenId> output() const {
    return std::span<const TokenId>(tokens).subspan(static_cast<std::size_t>(num_prompt_tokens));
  }
  // Samples drawn the next time this request catches up: n before the fork.
  std::int32_t pending_samples() const { return n > 1 && !forked ? n : 1; }
  // Scheduler seats (max_num_seqs) it holds while running, children included.
  std::int32_t seats() const { return pending_samples(); }
  // Caught up with one sample (n > 1 forks first): its next step may verify drafts.
  bool can_draft() const {
    return pending_samples() == 1 && num_tokens() - num_computed_tokens == 1;
  }
  // Drafts that step may verify within max_tokens (the row after the last
  // draft yields one more token).
  std::int32_t draft_room() const { return max_tokens - num_output_tokens() - 1; }
};

// Applies a state change; FOLIO_CHECKs that it is an edge of the diagram.
void transition(Request& r, RequestStatus to);

// Strict scheduling order: true when `a` is served before `b`. FCFS:
// (arrival_time, id); priority: (priority, arrival_time, id).
bool served_before(const Request& a, const Request& b, SchedulingPolicy policy);

}  // namespace folio::sched
