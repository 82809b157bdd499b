// loadgen/arrivals.h: when each request of an open-loop benchmark is sent.
//
// `vllm bench serve` semantics: requests arrive at --request-rate R per second
// with gamma-distributed gaps of shape B (--burstiness) and mean 1/R, so B = 1
// is a Poisson process, B < 1 is burstier and B > 1 more regular (the
// coefficient of variation of a gap is 1/sqrt(B)). R = inf sends everything at
// once. The schedule is a pure function of (n, R, B, seed): reruns and the two
// servers of a comparison see the same arrival times.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

namespace folio::loadgen {

struct ArrivalConfig {
  double request_rate = std::numeric_limits<double>::infinity();  // requests/s; inf: burst
  double burstiness = 1.0;                                        // gamma shape
  std::uint64_t seed = 0;
};

// Throws folio::Error unless the rate is > 0 (inf allowed) and the burstiness
// is finite and > 0.
void validate(const ArrivalConfig& c);

// Parses --request-rate: "inf" (any case) or a positive number.
double parse_request_rate(std::string_view text);

// n gaps in seconds; gap i separates request i from request i+1 (the last one
// is unused by the runner but kept so n gaps describe n requests). All zeros
// for an infinite rate.
std::vector<double> inter_arrival_times(std::size_t n, const ArrivalConfig& c);

// Send time of each of n requests relative to the start: request 0 at 0, then
// the running sum of the gaps.
std::vector<double> arrival_offsets(std::size_t n, const ArrivalConfig& c);

}  // namespace folio::loadgen
