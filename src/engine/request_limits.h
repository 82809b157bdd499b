// engine/request_limits.h: the one place a request is checked against the
// engine's limits, with one set of messages in vLLM's wording.
//
// admit() runs once per request, on the consumer's thread, before anything
// is queued: the server admits before it takes an admission slot (so a bad
// request is a 400, never a 429), EngineLoop::submit and
// LLMEngine::add_request accept only the AdmittedRequest it returns, and the
// scheduler treats a request that can never run as a bug (FOLIO_CHECK).
//
// It checks the sampling parameters (SamplingParams::validate), the prompt
// (non-empty, ids in the vocabulary), n in [1, --max-num-seqs], the
// context (prompt + max_tokens <= --max-model-len) and the KV pool (the
// blocks the request's positions ever hold at once fit in the whole pool,
// under its attention window), the attention window (window >= 0, 0 <=
// sinks <= window), and fills the defaults: max_tokens, whatever the
// context leaves (max_model_len - prompt), and the engine's attention window.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "engine/protocol.h"
#include "kv/kv_groups.h"

namespace folio::engine {

// A request that passed RequestLimits::admit: max_tokens is set and the
// request can run. Only admit() makes one.
class AdmittedRequest {
 public:
  const EngineRequest& request() const { return r_; }
  EngineRequest take() && { return std::move(r_); }

 private:
  friend class RequestLimits;
  explicit AdmittedRequest(EngineRequest r) : r_(std::move(r)) {}
  EngineRequest r_;
};

class RequestLimits {
 public:
  struct Values {
    std::int32_t max_model_len = 0;  // prompt + output tokens
    std::int32_t max_num_seqs = 0;   // bounds n
    std::int32_t num_kv_blocks = 0;  // the whole pool
    std::int32_t block_size = 0;
    std::int32_t vocab_size = 0;
    // The pool's layer groups (empty: one full-attention group) and the most
    // positions one step computes for a sequence: a sliding group holds at
    // most a window plus one step (kv::max_blocks_per_seq).
    std::vector<kv::KvGroup> kv_groups = {};
    std::int64_t max_step_tokens = 1;
    AttentionWindow default_window = {};  // for requests that leave it unset
  };

  // Throws folio::Error for values that cannot admit anything (non-positive).
  explicit RequestLimits(const Values& v);

  // Throws folio::Error naming what is wrong; otherwise the request with
  // max_tokens resolved and, when arrival_time is 0, `now` as its arrival.
  AdmittedRequest admit(EngineRequest r, double now) const;

  const Values& values() const { return v_; }

 private:
  Values v_;
};

}  // namespace folio::engine
