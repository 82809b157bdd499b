// spec/row_cost.h: what one verification row costs on this machine, measured
// while the engine runs.
//
// The adaptive draft length (speculative_config.h) asks for the j-th draft
// of a round only while it is worth the row that verifies it: acceptance^j
// >= row cost, in units of a single-stream decode step. That cost is a
// property of the machine and the model (how much more K + 1 rows of the
// matmuls take than one: 0.1 on one CPU, 0.3 or more on another), so the
// engine measures it from its own steps that run one sequence:
//
//   T[r]  = running mean of the step's forward seconds (as the model runner
//           timed them) with r rows (1 + the drafts verified);
//   cost  = (T[r] / T[1] - 1) / (r - 1), averaged over the row counts seen,
//
// each row count weighted by its steps times (r - 1)^2 (the per-row cost
// of a wider step is the less noisy), blended with a prior
// (kDefaultRowCost, worth kPriorWeight one-draft steps; a four-draft step
// weighs 16) so that the first steps do not wait for it; the prior fades as
// steps accumulate. (A heavier prior, 32, held a machine whose rows cost 0.9
// of a step at 0.76 after a few dozen rounds.)
// Until one-row and several-row steps have both been seen, value() is the
// prior. Only single-sequence steps count: a batch's rows share its weight
// reads with other sequences and cost differently (the load rule,
// max_batch_rows, covers batches). A model drafter that would not pay even
// at the prior is never tried, so it never brings a measurement of its own
// (ngram steps do).
#pragma once

#include <array>
#include <cstdint>

namespace folio::spec {

// The prior: one more row at the default precision on the 2-core AMD EPYC
// Zen 3 of docs/PERFORMANCE.md (the constant the rule used before it was
// measured per machine).
inline constexpr double kDefaultRowCost = 0.3;

class RowCostEstimate {
 public:
  static constexpr double kWeight = 0.1;              // of a new step in a row count's mean
  static constexpr double kPriorWeight = 2;           // the prior: two one-draft steps
  static constexpr double kMinCost = 0.02;            // a row is never free
  static constexpr double kMaxCost = 2;               // nor costs more than two steps
  static constexpr std::int32_t kMaxRows = 17;        // 1 + kMaxSpeculativeTokens
  static constexpr std::int32_t kMinOneRowSteps = 2;  // before T[1] is trusted

  // A pinned value (the "row_cost" key): value() returns it (steps are
  // still observed for one_row_seconds). Otherwise the prior until measured.
  static RowCostEstimate pinned(double cost);
  RowCostEstimate() = default;

  // One single-sequence step of `rows` rows took `seconds`. Ignores rows
  // outside [1, kMaxRows] and times that are not positive and finite.
  void observe(std::int32_t rows, double seconds);
  // The cost of one verification row as a fraction of a one-row step,
  // in [kMinCost, kMaxCost].
  double value() const;
  bool measured() const;  // false: value() is the prior (or pinned)
  // T[1], the mean one-row step's seconds (what a draft forward's cost is
  // measured against, spec/draft_cost.h); 0 before kMinOneRowSteps.
  double one_row_seconds() const;

 private:
  double pinned_ = -1;
  std::array<double, kMaxRows + 1> mean_{};
  std::array<std::int32_t, kMaxRows + 1> count_{};
};

}  // namespace folio::spec
