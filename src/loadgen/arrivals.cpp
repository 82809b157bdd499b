// loadgen/arrivals.cpp: gamma-distributed inter-arrival gaps (see arrivals.h).
#include "loadgen/arrivals.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <random>
#include <string>

#include "base/error.h"

namespace folio::loadgen {

void validate(const ArrivalConfig& c) {
  if (std::isnan(c.request_rate) || c.request_rate <= 0)
    throw Error("--request-rate must be > 0 requests/s or 'inf'");
  if (!std::isfinite(c.burstiness) || c.burstiness <= 0)
    throw Error("--burstiness must be a finite number > 0 (1 = Poisson arrivals)");
}

double parse_request_rate(std::string_view text) {
  std::string lower(text);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower == "inf" || lower == "infinity") return std::numeric_limits<double>::infinity();
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(v) || v <= 0)
    throw Error("--request-rate: '" + std::string(text) +
                "' is not a positive number of requests/s or 'inf'");
  return v;
}

std::vector<double> inter_arrival_times(std::size_t n, const ArrivalConfig& c) {
  validate(c);
  std::vector<double> gaps(n, 0.0);
  if (std::isinf(c.request_rate)) return gaps;
  // Gamma(shape k, scale theta) has mean k*theta: theta = 1/(R*k) gives mean 1/R.
  const double theta = 1.0 / (c.request_rate * c.burstiness);
  std::mt19937_64 rng(c.seed);
  std::gamma_distribution<double> gamma(c.burstiness, theta);
  for (double& g : gaps) g = gamma(rng);
  return gaps;
}

std::vector<double> arrival_offsets(std::size_t n, const ArrivalConfig& c) {
  const std::vector<double> gaps = inter_arrival_times(n, c);
  std::vector<double> at(n, 0.0);
  for (std::size_t i = 1; i < n; ++i) at[i] = at[i - 1] + gaps[i - 1];
  return at;
}

}  // namespace folio::loadgen
