#include "cli/kl_divergence_report.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace folio::cli {

namespace {

// "Maximum", "99.9%", "Median", " 5.0%", "Minimum": llama.cpp's row labels.
std::string quantile_label(double fraction) {
  if (fraction >= 1) return "Maximum";
  if (fraction <= 0) return "Minimum";
  if (fraction == 0.5) return "Median";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%4.1f%%", 100 * fraction);
  return buf;
}

std::string quantile_key(double fraction) {
  if (fraction >= 1) return "max";
  if (fraction <= 0) return "min";
  if (fraction == 0.5) return "median";
  char buf[16];
  std::snprintf(buf, sizeof buf, "p%g", 100 * fraction);
  return buf;
}

nlohmann::ordered_json estimate(const eval::Estimate& e) {
  return {{"value", e.value}, {"uncertainty", e.uncertainty}};
}

// NaN has no JSON spelling: null.
nlohmann::ordered_json number(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json();
}

nlohmann::ordered_json quantiles(const std::vector<eval::Quantile>& q) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const eval::Quantile& x : q) out[quantile_key(x.fraction)] = x.value;
  return out;
}

}  // namespace

void print_kld_chunk_header() {
  std::printf(
      "\nchunk             PPL               ln(PPL(Q)/PPL(base))          KL Divergence"
      "              Δp RMS            Same top p\n");
}

void print_kld_chunk(std::size_t chunk, const eval::KldSummary& s) {
  std::printf(
      "%4zu    %9.4f ± %9.4f    %10.5f ± %10.5f    %10.5f ± %10.5f    %6.3f ± %6.3f %%"
      "    %6.3f ± %6.3f %%\n",
      chunk, s.ppl.value, s.ppl.uncertainty, s.log_ppl_ratio.value, s.log_ppl_ratio.uncertainty,
      s.kld.value, s.kld.uncertainty, 100 * s.rms_p_diff.value, 100 * s.rms_p_diff.uncertainty,
      100 * s.same_top.value, 100 * s.same_top.uncertainty);
  std::fflush(stdout);
}

void print_kld_summary(const eval::KldSummary& s) {
  std::printf("\n====== Perplexity statistics ======\n");
  std::printf("Mean PPL(Q)                   : %10.6f ± %10.6f\n", s.ppl.value, s.ppl.uncertainty);
  std::printf("Mean PPL(base)                : %10.6f ± %10.6f\n", s.ppl_base.value,
              s.ppl_base.uncertainty);
  std::printf("Cor(ln(PPL(Q)), ln(PPL(base))): %6.2f%%\n", 100 * s.log_ppl_correlation);
  std::printf("Mean ln(PPL(Q)/PPL(base))     : %10.6f ± %10.6f\n", s.log_ppl_ratio.value,
              s.log_ppl_ratio.uncertainty);
  std::printf("Mean PPL(Q)/PPL(base)         : %10.6f ± %10.6f\n", s.ppl_ratio.value,
              s.ppl_ratio.uncertainty);
  std::printf("Mean PPL(Q)-PPL(base)         : %10.6f ± %10.6f\n", s.ppl_diff.value,
              s.ppl_diff.uncertainty);

  std::printf("\n====== KL divergence statistics ======\n");
  std::printf("Mean    KLD: %10.6f ± %10.6f\n", s.kld.value, s.kld.uncertainty);
  for (const eval::Quantile& q : s.kld_quantiles)
    std::printf("%-7s KLD: %10.6f\n", quantile_label(q.fraction).c_str(), q.value);

  std::printf("\n====== Token probability statistics ======\n");
  std::printf("Mean    Δp: %6.3f ± %5.3f %%\n", 100 * s.p_diff.value, 100 * s.p_diff.uncertainty);
  for (const eval::Quantile& q : s.p_diff_quantiles)
    std::printf("%-7s Δp: %6.3f%%\n", quantile_label(q.fraction).c_str(), 100 * q.value);
  std::printf("RMS Δp    : %6.3f ± %5.3f %%\n", 100 * s.rms_p_diff.value,
              100 * s.rms_p_diff.uncertainty);
  std::printf("Same top p: %6.3f ± %5.3f %%\n", 100 * s.same_top.value,
              100 * s.same_top.uncertainty);
}

nlohmann::ordered_json kld_chunk_json(std::size_t chunk, const eval::KldSummary& s) {
  return {{"chunk", chunk},
          {"ppl", s.ppl.value},
          {"ln_ppl_ratio", s.log_ppl_ratio.value},
          {"kld", s.kld.value},
          {"rms_p_diff", s.rms_p_diff.value},
          {"same_top", s.same_top.value}};
}

nlohmann::ordered_json kld_summary_json(const eval::KldSummary& s) {
  nlohmann::ordered_json out;
  out["scored_tokens"] = s.count;
  out["ppl"] = estimate(s.ppl);
  out["ppl_base"] = estimate(s.ppl_base);
  out["ln_ppl_correlation"] = number(s.log_ppl_correlation);
  out["ln_ppl_ratio"] = estimate(s.log_ppl_ratio);
  out["ppl_ratio"] = estimate(s.ppl_ratio);
  out["ppl_diff"] = estimate(s.ppl_diff);
  out["kld"] = estimate(s.kld);
  out["kld_quantiles"] = quantiles(s.kld_quantiles);
  out["p_diff"] = estimate(s.p_diff);
  out["p_diff_quantiles"] = quantiles(s.p_diff_quantiles);
  out["rms_p_diff"] = estimate(s.rms_p_diff);
  out["same_top"] = estimate(s.same_top);
  return out;
}

}  // namespace folio::cli
