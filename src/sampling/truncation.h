// sampling/truncation.h: steps that scale or shrink the candidate list.
//
// All of them keep at least one candidate, never reorder a sorted list, and
// avoid a full vocabulary sort: top-k selects with nth_element and sorts only
// k items; top-p sorts a growing prefix only until it holds mass p.
#pragma once

#include <cstdint>

#include "sampling/candidates.h"

namespace folio::sampling {

// logit /= temperature (temperature > 0; 0 means greedy and never gets here).
void apply_temperature(Candidates& c, float temperature);

// Keeps the k highest logits (ties by lower id); k <= 0 or k >= size: no-op.
// Leaves the list sorted.
void apply_top_k(Candidates& c, std::int32_t k);

// Keeps the smallest prefix of the sorted list whose softmax mass is >= p
// (mass computed over the current list). p >= 1: no-op. Leaves it sorted.
void apply_top_p(Candidates& c, float p);

// Keeps tokens with prob >= min_p * max prob, i.e. exp(logit - max) >= min_p.
// min_p <= 0: no-op. Keeps the list's order.
void apply_min_p(Candidates& c, float min_p);

}  // namespace folio::sampling
