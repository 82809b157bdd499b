// spec/rejection.h: the lossless verification rule of speculative decoding.
//
// The target model's distribution p at a drafted position is the one the
// request's sampler would draw from there (sampling::Sampler::target: the
// whole chain, penalties and truncation included). With a draft token d
// proposed with probability q(d) (Leviathan et al. 2023, Chen et al. 2023):
//
//   accept d with probability min(1, p(d) / q(d));
//   otherwise draw from the residual max(0, p - q), normalized.
//
// The token that comes out is distributed exactly as p, whatever q is. For
// the n-gram proposer q is one-hot at d: accept with probability p(d), else
// draw from p with d removed. Greedy requests have a one-hot p (the argmax),
// so the rule accepts d exactly when it is the argmax and otherwise yields
// the argmax: token-identical to decoding without drafts. The accept test
// draws a random number only when 0 < p(d) < 1.
#pragma once

#include <vector>

#include "sampling/candidates.h"
#include "sampling/draw.h"

namespace folio::spec {

struct Verdict {
  TokenId token = 0;
  bool accepted = false;  // token == the draft
};

// q one-hot at `draft`. `p` is a candidate list (probabilities = softmax of
// its logits). `weights` is scratch reused across calls.
Verdict verify_one_hot(const sampling::Candidates& p, TokenId draft, sampling::Rng& rng,
                       std::vector<double>& weights);

// Probability of `id` under `p` (0 when it is not a candidate).
double probability(const sampling::Candidates& p, TokenId id, std::vector<double>& weights);

}  // namespace folio::spec
