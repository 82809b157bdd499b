// sampling/candidates.h: the candidate list the truncation steps rewrite.
//
// The sampler works in two stages. Steps that touch a few token ids (logit
// bias, penalties, masks) edit the dense logits vector in place, indexed by
// token id. Steps that shrink the set (top-k, top-p, min-p) work on this
// list of (id, logit) pairs, which only gets shorter; `sorted` records that
// a step already ordered it so later steps can skip their own sort.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sampling/sampling_params.h"

namespace folio::sampling {

struct Candidate {
  TokenId id;
  float logit;
};

// Orders candidates by descending logit, ties by ascending id, so every
// partial order the steps build is deterministic (seeded draws depend on it).
inline bool higher(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

struct Candidates {
  std::vector<Candidate> items;
  bool sorted = false;  // items are ordered by higher()

  // Fills `items` with every token of `logits` (id = index), reusing capacity.
  void assign(std::span<const float> logits);
  // Every token whose logit is finite (a grammar's mask sets the others to
  // -inf: they have probability 0, and leaving them out makes the list as
  // short as the set of allowed tokens). Empty when none is.
  void assign_finite(std::span<const float> logits);

  // Fills `items` with only the k best tokens of `logits`, sorted, in one
  // pass with a k-sized heap: most tokens cost a single comparison, and the
  // full vocabulary is never materialized. k must be in [1, logits.size()].
  void assign_top_k(std::span<const float> logits, std::size_t k);
};

}  // namespace folio::sampling
