// loadgen/report.h: the human-readable result table of `folio bench serve`,
// laid out like `vllm bench serve`'s so the two read side by side.
#pragma once

#include <string>

#include "loadgen/latency_stats.h"

namespace folio::loadgen {

struct ReportContext {
  std::string request_rate;     // "inf" or the number
  std::string max_concurrency;  // "unlimited" or the number
};

std::string format_table(const Summary& s, const ReportContext& ctx);

}  // namespace folio::loadgen
