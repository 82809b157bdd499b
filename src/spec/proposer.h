// spec/proposer.h: what every speculative-decoding method implements.
//
// After each engine step the engine asks the proposer, in one batch, for up
// to `max_tokens` draft tokens to follow each caught-up sequence's tokens
// (prompt, then outputs). The target model verifies them in the next step
// (spec/rejection.h), so a proposer may be wrong as often as it likes: that
// costs speed, never correctness. A draft is deterministic given the
// tokens, so seeded requests stay reproducible.
//
// State kept per sequence (an n-gram index, a draft model's KV) is keyed by
// the caller's sequence id and dropped by release().
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/token_id.h"

namespace folio::spec {

struct DraftQuery {
  std::uint64_t key = 0;            // the caller's sequence id
  std::span<const TokenId> tokens;  // its tokens so far
  std::int32_t max_tokens = 0;      // K for this step (>= 1)
  std::vector<TokenId> draft;       // out: 0 .. max_tokens tokens
  std::int32_t forwards = 0;        // out: model forwards it took (0 for ngram): one
                                    // more than the drafts when draft_p_min stopped it
  std::int32_t caught_up = 0;       // out: positions a lagging draft model wrote K/V
                                    // for first
  double seconds = 0;               // out: the model forwards' seconds (0: untimed; one
                                    // batch for every query of a call: the call's)
};

class Proposer {
 public:
  virtual ~Proposer() = default;
  virtual const char* name() const = 0;
  // Fills every query's draft (cleared first).
  virtual void propose(std::span<DraftQuery> queries) = 0;
  // The sequence is gone (finished, aborted, preempted): drop its state.
  virtual void release(std::uint64_t key) = 0;
};

}  // namespace folio::spec
