// eval/kl_divergence.h: how far a candidate model's next-token distributions
// are from a base model's on the same tokens, with llama.cpp's statistics
// (tools/perplexity/perplexity.cpp, kl_divergence()), so the numbers compare
// with `llama-perplexity --kl-divergence`.
//
// Per scored row, with p the base's distribution, q the candidate's and t the
// token that follows:
//   KLD      = sum_i p_i (log p_i - log q_i)          (KL(base || candidate))
//   delta p  = q_t - p_t
//   same top = argmax q == argmax p                     (first index on ties)
//   NLLs     = -log q_t, -log p_t                       (for both PPLs)
//
// Over all rows (KldAccumulator): mean +/- standard error of each, PPL(Q),
// PPL(base), their log-ratio with the covariance term, RMS delta p, the
// same-top fraction +/- its binomial error, and quantiles of KLD and delta p.
// Uncertainties are llama.cpp's: 0 for 10 rows or fewer.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "base/token_id.h"
#include "eval/logprob_file.h"

namespace folio::eval {

struct RowComparison {
  double nll = 0;       // -log q_t
  double nll_base = 0;  // -log p_t
  double kld = 0;       // KL(p || q), nats
  double p_diff = 0;    // q_t - p_t
  bool same_top = false;
};

// Against a stored base row: llama.cpp's arithmetic (f32 terms, f64 sum),
// including its skip of the terms with log p_i <= -16 (below the row's
// compression floor they carry no information).
RowComparison compare_row(std::span<const float> logits, const CompressedRow& base, TokenId target);

// Against the base model's own logits (lockstep, nothing stored): f64, every term.
RowComparison compare_row(std::span<const float> logits, std::span<const float> base_logits,
                          TokenId target);

struct Estimate {
  double value = 0;
  double uncertainty = 0;  // one standard error
};

struct Quantile {
  double fraction = 0;  // 0: minimum, 0.5: median, 1: maximum
  double value = 0;
};

struct KldSummary {
  std::size_t count = 0;
  Estimate ppl, ppl_base;
  double log_ppl_correlation = 0;  // Cor(ln PPL(Q), ln PPL(base)); NaN when undefined
  Estimate log_ppl_ratio;          // mean ln(PPL(Q) / PPL(base))
  Estimate ppl_ratio, ppl_diff;    // PPL(Q) / PPL(base), PPL(Q) - PPL(base)
  Estimate kld;                    // mean KLD
  Estimate p_diff, rms_p_diff;     // mean and RMS of delta p
  Estimate same_top;               // fraction of rows with the same top token
  // Filled by KldAccumulator::summary(true) only, fractions descending as
  // llama.cpp prints them: KLD {1, .999, .99, .95, .9, .5, .1, .05, .01, .001, 0},
  // delta p {1, .999, .99, .95, .9, .75, .5, .25, .1, .05, .01, .001, 0}.
  std::vector<Quantile> kld_quantiles, p_diff_quantiles;
};

// Linear interpolation between the closest ranks of `sorted` (ascending, not
// empty): llama.cpp's percentile(); fraction 0.5 is the median.
double quantile(std::span<const float> sorted, double fraction);

class KldAccumulator {
 public:
  void add(const RowComparison& r);
  std::size_t count() const { return count_; }
  // The moments; with `quantiles`, also the quantiles (sorts copies of the values).
  KldSummary summary(bool quantiles) const;

 private:
  double nll_ = 0, nll2_ = 0, nll_base_ = 0, nll_base2_ = 0, nll_nll_base_ = 0;
  double kld_sum_ = 0, kld2_ = 0, p_diff_sum_ = 0, p_diff2_ = 0, p_diff4_ = 0;
  std::size_t same_top_ = 0, count_ = 0;
  std::vector<float> kld_, p_diff_;  // every row's, for the quantiles (as llama.cpp: f32)
};

}  // namespace folio::eval
