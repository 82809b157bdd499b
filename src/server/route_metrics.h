// server/route_metrics.h: /metrics series of the model router.
//
//   folio:route_decisions_total{virtual_model, model_name, reason}
//   folio:route_score (histogram, per virtual model): every decision's score
//   folio:route_cascade_escalations_total{virtual_model}
//   folio:route_cascade_wasted_tokens_total{virtual_model}: small-model
//     tokens generated for answers that were then rerun on the large model
//
// Thread-safe (one mutex).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "server/metrics.h"

namespace folio::server {

class RouteMetrics {
 public:
  void add_virtual(const std::string& virtual_model);  // lists its series at 0
  void record(const std::string& virtual_model, const std::string& model_name,
              const std::string& reason, double score);
  void cascade_escalated(const std::string& virtual_model, std::int64_t wasted_tokens);
  std::string render() const;  // "" when no virtual model exists

 private:
  struct PerVirtual {
    Histogram score;
    std::int64_t escalations = 0;
    std::int64_t wasted_tokens = 0;
  };
  PerVirtual& slot(const std::string& virtual_model);  // created on first use; mu_ held

  mutable std::mutex mu_;
  std::map<std::string, PerVirtual> virtuals_;
  std::map<std::tuple<std::string, std::string, std::string>, std::int64_t> decisions_;
};

}  // namespace folio::server
