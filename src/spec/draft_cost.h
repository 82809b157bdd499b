// spec/draft_cost.h: what one forward of a model drafter costs on this
// machine, measured while the engine runs.
//
// The adaptive rule (speculative_config.h) charges each draft token the
// forward that made it, as a fraction of a single-stream target step. The
// start-up estimate is the drafter's weight bytes over the target's (decode
// streams every weight once), but the two need not run at the same bytes
// per second (kernels differ by weight type; a small draft pays fixed
// costs per forward; its weights may or may not stay in cache between the
// target's forwards). On the Xeon of docs/PERFORMANCE.md the Q4_0 draft of
// the F16 target has 0.33 of its bytes, decodes alone in 0.22 of its step,
// and measures 0.29-0.35 as a draft. So the engine measures it from
// proposals that drafted for one sequence that was caught up (at most one
// position of K/V to write first):
//
//   D     = running mean of the proposal's seconds per draft forward (as
//           the model runner timed them);
//   cost  = D / T[1], T[1] the one-row target step (RowCostEstimate::
//           one_row_seconds).
//
// Until kMinProposals proposals and T[1] are both known, value() is the
// start-up estimate (the prior). A drafter that would not pay even at the
// prior is never run, so it never brings a measurement.
#pragma once

#include <cstdint>

namespace folio::spec {

class DraftCostEstimate {
 public:
  static constexpr double kWeight = 0.1;            // of a new proposal in the running mean
  static constexpr std::int32_t kMinProposals = 2;  // before D is trusted
  static constexpr double kMinCost = 0.01;          // a draft is never free
  static constexpr double kMaxCost = 4;             // nor costs more than four steps

  // A pinned value (the "draft_cost" key): value() returns it, whatever is
  // observed.
  static DraftCostEstimate pinned(double cost);
  // `prior`: the start-up estimate (0 for a drafter without a model).
  explicit DraftCostEstimate(double prior = 0) : prior_(prior) {}

  // One proposal of `forwards` draft forwards took `seconds`. Ignores
  // forwards < 1 and times that are not positive and finite.
  void observe(std::int32_t forwards, double seconds);
  // The cost of one draft forward as a fraction of a one-row target step
  // of `step_seconds` (<= 0: unknown, the prior), in [kMinCost, kMaxCost].
  double value(double step_seconds) const;
  bool measured() const;  // false: value() is the prior (or pinned)

 private:
  double prior_ = 0;
  bool pinned_ = false;
  double mean_ = 0;  // seconds per forward
  std::int32_t count_ = 0;
};

}  // namespace folio::spec
