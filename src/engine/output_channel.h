// engine/output_channel.h: one request's output channel (engine -> consumer).
//
// The engine thread pushes one RequestOutput per step in which the request
// produced something (new tokens, text, a finish). Each request has its own
// channel with its own mutex and condition variable, so a step wakes exactly
// the consumers whose requests advanced (DESIGN.md: nothing wakes all
// waiters). A consumer either blocks (wait_drain, for tools and tests) or
// registers an edge-triggered callback (set_notify, for async IO).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/notify_queue.h"
#include "sampling/logprobs.h"
#include "sched/request.h"

namespace folio::engine {

using TokenId = std::int32_t;
using FinishReason = sched::FinishReason;

// New output of one sample (index in [0, n)) since the previous item.
struct SampleDelta {
  std::int32_t index = 0;
  std::vector<TokenId> token_ids;
  std::vector<sampling::Logprobs> logprobs;  // one per token when params.logprobs is set
  std::string text;  // detokenized delta, stop strings applied (empty without a tokenizer)
  FinishReason finish = FinishReason::kNone;
  std::string stop_reason;  // the stop string that matched, if any
};

struct RequestOutput {
  std::uint64_t request_id = 0;
  std::vector<SampleDelta> samples;    // only the samples that changed
  std::int32_t num_prompt_tokens = 0;
  std::int32_t num_cached_tokens = 0;  // prefix-cache hit at admission
  bool finished = false;               // last item: every sample has finished
  std::string error;                   // engine failure (samples finish kError)
  double ttft_s = 0;                   // add_request -> first token (set once known)
  double queue_s = 0;                  // add_request -> first scheduled (set once known)
};

// One request's channel: see base/notify_queue.h for the threading contract.
using OutputChannel = NotifyQueue<RequestOutput>;

}  // namespace folio::engine
