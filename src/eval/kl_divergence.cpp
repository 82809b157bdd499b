#include "eval/kl_divergence.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"

namespace folio::eval {

namespace {

// First index of the largest value (llama.cpp's argmax: strict >).
template <class F>
std::size_t first_argmax(std::size_t n, F value) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < n; ++i) {
    if (value(i) > value(best)) best = i;
  }
  return best;
}

// max + log(sum exp(x - max)), in f64.
double log_sum_exp(std::span<const float> x) {
  const double max = *std::max_element(x.begin(), x.end());
  double sum = 0;
  for (const float v : x) sum += std::exp(static_cast<double>(v) - max);
  return max + std::log(sum);
}

// llama.cpp's mean_and_uncertainty(): the mean and its standard error, the
// latter 0 for 10 values or fewer.
Estimate mean_and_uncertainty(double sum, double sum2, std::size_t count) {
  if (count < 1) return {};
  const double n = static_cast<double>(count);
  const double mean = sum / n;
  const double var = sum2 / n - mean * mean;
  return {mean, var > 0 && count > 10 ? std::sqrt(var / (n - 1)) : 0.0};
}

// llama.cpp's covariance() of the two means; 0 for fewer than 10 values.
double covariance(double sum_a, double sum_b, double sum_ab, std::size_t count) {
  if (count < 10) return 0;
  const double n = static_cast<double>(count);
  return (sum_ab / n - (sum_a / n) * (sum_b / n)) / (n - 1);
}

std::vector<Quantile> quantiles(std::vector<float> values, std::span<const double> fractions) {
  std::sort(values.begin(), values.end());
  std::vector<Quantile> out;
  for (const double f : fractions) out.push_back({f, quantile(values, f)});
  return out;
}

}  // namespace

RowComparison compare_row(std::span<const float> logits, const CompressedRow& base,
                          TokenId target) {
  const std::size_t n = logits.size();
  FOLIO_CHECK(n > 0 && base.n_vocab() == n && target >= 0 && static_cast<std::size_t>(target) < n);
  const auto t = static_cast<std::size_t>(target);
  const std::size_t top = first_argmax(n, [&](std::size_t i) { return logits[i]; });
  const float max = logits[top];
  double sum_exp = 0;
  for (const float x : logits) sum_exp += std::exp(x - max);
  const auto lse = static_cast<float>(std::log(sum_exp));
  const float nll = max + lse - logits[t];
  const float nll_base = -base.log_prob(t);
  const float log_norm = max + lse;  // log q_i = logits[i] - log_norm
  double kld = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float log_p = base.log_prob(i);
    if (log_p > -16.f) kld += std::exp(log_p) * (log_p - logits[i] + log_norm);
  }
  const std::size_t top_base = first_argmax(n, [&](std::size_t i) { return base.log_prob(i); });
  return {.nll = nll,
          .nll_base = nll_base,
          .kld = kld,
          .p_diff = std::exp(-nll) - std::exp(-nll_base),
          .same_top = top == top_base};
}

RowComparison compare_row(std::span<const float> logits, std::span<const float> base_logits,
                          TokenId target) {
  const std::size_t n = logits.size();
  FOLIO_CHECK(n > 0 && base_logits.size() == n && target >= 0 &&
              static_cast<std::size_t>(target) < n);
  const auto t = static_cast<std::size_t>(target);
  const double lse_q = log_sum_exp(logits), lse_p = log_sum_exp(base_logits);
  double kld = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double log_p = base_logits[i] - lse_p;
    const double log_q = logits[i] - lse_q;
    kld += std::exp(log_p) * (log_p - log_q);
  }
  const double nll = lse_q - logits[t], nll_base = lse_p - base_logits[t];
  const std::size_t top = first_argmax(n, [&](std::size_t i) { return logits[i]; });
  const std::size_t top_base = first_argmax(n, [&](std::size_t i) { return base_logits[i]; });
  return {.nll = nll,
          .nll_base = nll_base,
          .kld = kld,
          .p_diff = std::exp(-nll) - std::exp(-nll_base),
          .same_top = top == top_base};
}

double quantile(std::span<const float> sorted, double fraction) {
  FOLIO_CHECK(!sorted.empty());
  if (fraction <= 0) return sorted.front();
  if (fraction >= 1) return sorted.back();
  const double p = fraction * static_cast<double>(sorted.size() - 1);
  const auto i = static_cast<std::size_t>(p);
  const double w = p - static_cast<double>(i);
  return (1 - w) * sorted[i] + w * sorted[std::min(i + 1, sorted.size() - 1)];
}

void KldAccumulator::add(const RowComparison& r) {
  nll_ += r.nll;
  nll2_ += r.nll * r.nll;
  nll_base_ += r.nll_base;
  nll_base2_ += r.nll_base * r.nll_base;
  nll_nll_base_ += r.nll * r.nll_base;
  kld_sum_ += r.kld;
  kld2_ += r.kld * r.kld;
  p_diff_sum_ += r.p_diff;
  const double d2 = r.p_diff * r.p_diff;
  p_diff2_ += d2;
  p_diff4_ += d2 * d2;
  same_top_ += r.same_top ? 1 : 0;
  ++count_;
  kld_.push_back(static_cast<float>(r.kld));
  p_diff_.push_back(static_cast<float>(r.p_diff));
}

KldSummary KldAccumulator::summary(bool with_quantiles) const {
  KldSummary s;
  s.count = count_;
  if (count_ == 0) return s;
  const double n = static_cast<double>(count_);
  const Estimate log_ppl = mean_and_uncertainty(nll_, nll2_, count_);
  const Estimate log_ppl_base = mean_and_uncertainty(nll_base_, nll_base2_, count_);
  s.ppl = {std::exp(log_ppl.value), std::exp(log_ppl.value) * log_ppl.uncertainty};
  s.ppl_base = {std::exp(log_ppl_base.value),
                std::exp(log_ppl_base.value) * log_ppl_base.uncertainty};
  const double cov = covariance(nll_, nll_base_, nll_nll_base_, count_);
  const double unc_product = log_ppl.uncertainty * log_ppl_base.uncertainty;
  s.log_ppl_correlation =
      unc_product > 0 ? cov / unc_product : std::numeric_limits<double>::quiet_NaN();
  // max(0, .): identical runs can round the variance of the difference below 0.
  const double ratio_var = log_ppl.uncertainty * log_ppl.uncertainty +
                           log_ppl_base.uncertainty * log_ppl_base.uncertainty - 2 * cov;
  s.log_ppl_ratio = {log_ppl.value - log_ppl_base.value, std::sqrt(std::max(0.0, ratio_var))};
  s.ppl_ratio = {std::exp(s.log_ppl_ratio.value),
                 std::exp(s.log_ppl_ratio.value) * s.log_ppl_ratio.uncertainty};
  const double ppl_cov = s.ppl.value * s.ppl_base.value * cov;
  const double diff_var = s.ppl.uncertainty * s.ppl.uncertainty +
                          s.ppl_base.uncertainty * s.ppl_base.uncertainty - 2 * ppl_cov;
  s.ppl_diff = {s.ppl.value - s.ppl_base.value, std::sqrt(std::max(0.0, diff_var))};
  s.kld = mean_and_uncertainty(kld_sum_, kld2_, count_);
  s.p_diff = mean_and_uncertainty(p_diff_sum_, p_diff2_, count_);
  const Estimate mse = mean_and_uncertainty(p_diff2_, p_diff4_, count_);
  const double rms = std::sqrt(mse.value);
  s.rms_p_diff = {rms, rms > 0 ? 0.5 / rms * mse.uncertainty : 0.0};
  const double top = static_cast<double>(same_top_) / n;
  s.same_top = {top, count_ > 1 ? std::sqrt(top * (1 - top) / (n - 1)) : 0.0};
  if (with_quantiles) {
    static constexpr double kKld[] = {1, .999, .99, .95, .9, .5, .1, .05, .01, .001, 0};
    static constexpr double kPDiff[] = {1, .999, .99, .95, .9, .75, .5, .25, .1, .05, .01, .001, 0};
    s.kld_quantiles = quantiles(kld_, kKld);
    s.p_diff_quantiles = quantiles(p_diff_, kPDiff);
  }
  return s;
}

}  // namespace folio::eval
