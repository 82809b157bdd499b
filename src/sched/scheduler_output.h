// sched/scheduler_output.h: the plain-data contract of one engine step.
//
//   SchedulerOutput plan = scheduler.schedule();   // what to compute
//   ... runner: apply cow_copies, forward the scheduled tokens, sample ...
//   ModelRunnerOutput result;                      // sampled tokens + stops
//   scheduler.update(plan, result);                // commit
//
// Block tables travel as deltas, one per KV layer group (kv/kv_groups.h):
// for each scheduled request and group the runner truncates its copy of the
// table to `blocks_from` entries, appends `block_ids` and marks the first
// `num_skipped` entries released (kv::TableDelta). A sequence's first plan
// after admission, resumption or a fork always carries its whole tables
// (blocks_from == 0). Requests in
// `preempted_ids` / `finished_ids` drop their runner-side state.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kv/types.h"
#include "sched/request.h"

namespace folio::sched {

struct ScheduledRequest {
  SeqId id;
  std::int32_t start_pos = 0;          // == num_computed_tokens: first position computed
  AttentionWindow attention_window;    // the request's sink + window policy (off: none)
  std::vector<TokenId> tokens;         // tokens at positions start_pos ...
  std::vector<kv::TableDelta> tables;  // block-table deltas, one per group (see above)
  std::vector<kv::CowCopy> cow;        // also gathered in SchedulerOutput::cow_copies
  // Logit rows wanted: those of the last num_logits tokens, in order (0: none,
  // a prefill chunk; 1: the next token; k + 1 when k speculative tokens are
  // verified). The runner returns them in plan order.
  std::int32_t num_logits = 0;
  std::int32_t num_samples = 0;  // tokens to draw when sampling (n before a fork)
  // The last num_spec tokens are drafts to verify (num_logits == num_spec + 1).
  std::int32_t num_spec = 0;
  // Mean pooling (engine::EngineRequest::pool): the runner returns the sum
  // of these tokens' hidden states (all prompt positions; never drafts).
  bool pool = false;

  std::int32_t num_tokens() const { return static_cast<std::int32_t>(tokens.size()); }
  bool sample() const { return num_logits > 0; }
  std::span<const TokenId> drafts() const {
    return std::span<const TokenId>(tokens).last(static_cast<std::size_t>(num_spec));
  }
};

struct SchedulerOutput {
  std::uint64_t step = 0;
  std::vector<ScheduledRequest> requests;
  std::vector<kv::CowCopy> cow_copies;  // run before the forward pass
  std::vector<SeqId> preempted_ids;     // this step
  std::vector<SeqId> finished_ids;      // since the previous plan (incl. aborts)
  std::int32_t total_tokens = 0;
};

// One drawn token and the caller's verdict on it (EOS, stop token or
// string, ...). The scheduler adds kLength by itself at max_tokens.
struct SampledToken {
  TokenId token = 0;
  FinishReason finish = FinishReason::kNone;
};

// samples: before a fork (num_samples > 1) one token per sample; else the
// one sample's new tokens in order: the accepted drafts (num_accepted of
// them, equal to the plan's drafts), then the target's own next token unless
// a stop ended the run on an accepted draft.
struct RequestResult {
  SeqId id;
  std::vector<SampledToken> samples;
  std::int32_t num_accepted = 0;
};

struct ModelRunnerOutput {
  std::vector<RequestResult> results;  // one per plan entry with sample == true
};

// What update() reports per sequence that got tokens or finished. Children
// created by a fork appear here first, with their parent's id.
struct SequenceOutput {
  SeqId id;
  SeqId parent_id;
  std::int32_t sample_index = 0;
  std::vector<TokenId> new_tokens;
  FinishReason finish = FinishReason::kNone;
};

}  // namespace folio::sched
