// sched/scheduler_config.h: scheduler limits, named after vLLM's flags.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/request.h"

namespace folio::sched {

struct SchedulerConfig {
  std::int32_t max_num_batched_tokens = 2048;  // token budget per step
  std::int32_t max_num_seqs = 256;             // running sequences
  std::int32_t max_model_len = 4096;           // prompt + max_tokens per request
  SchedulingPolicy policy = SchedulingPolicy::kFcfs;
  // vLLM's --long-prefill-token-threshold: when > 0, one request's prefill
  // chunk takes at most this many tokens of a step, so a long prompt spreads
  // over several steps and the decodes beside it keep short steps (lower
  // inter-token latency, later first token). 0: off.
  std::int32_t long_prefill_token_threshold = 0;
  // Speculative decoding with a model drafter: KV slots reserved past a
  // caught-up request's tokens, so the drafter can write its K draft
  // positions after the step (vLLM's num_lookahead_tokens). Dropped
  // before anyone is preempted for them. 0: none.
  std::int32_t num_lookahead_tokens = 0;
};

// Most positions one step computes for one sequence: its chunk of the token
// budget plus the slots reserved ahead for a drafter.
inline std::int64_t max_step_tokens(const SchedulerConfig& c) {
  return std::int64_t{c.max_num_batched_tokens} + c.num_lookahead_tokens;
}

// What a caller submits; the scheduler assigns the id.
struct RequestSpec {
  std::vector<TokenId> prompt;
  std::int32_t max_tokens = 16;
  std::int32_t n = 1;
  std::int32_t priority = 0;
  double arrival_time = 0;
  std::uint64_t cache_salt = 0;
  AttentionWindow attention_window;  // sink + window attention (base/attention_window.h)
  bool pool = false;  // mean pooling: every position computed (no prefix hit), hidden sums
};

}  // namespace folio::sched
