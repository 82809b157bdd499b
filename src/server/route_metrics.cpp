// server/route_metrics.cpp: the router's counters and score histogram.
#include "server/route_metrics.h"

#include <vector>

namespace folio::server {
namespace {

std::vector<double> score_buckets() {
  std::vector<double> b;
  for (int i = 1; i <= 20; ++i) b.push_back(i / 20.0);
  return b;
}

std::string label(const char* key, const std::string& value) {
  return std::string(key) + "=\"" + escape_label(value) + "\"";
}

}  // namespace

RouteMetrics::PerVirtual& RouteMetrics::slot(const std::string& virtual_model) {
  return virtuals_.try_emplace(virtual_model, PerVirtual{.score = Histogram(score_buckets())})
      .first->second;
}

void RouteMetrics::add_virtual(const std::string& virtual_model) {
  std::lock_guard l(mu_);
  slot(virtual_model);
}

void RouteMetrics::record(const std::string& virtual_model, const std::string& model_name,
                          const std::string& reason, double score) {
  std::lock_guard l(mu_);
  slot(virtual_model).score.observe(score);
  ++decisions_[{virtual_model, model_name, reason}];
}

void RouteMetrics::cascade_escalated(const std::string& virtual_model, std::int64_t wasted_tokens) {
  std::lock_guard l(mu_);
  PerVirtual& v = slot(virtual_model);
  ++v.escalations;
  v.wasted_tokens += wasted_tokens;
}

std::string RouteMetrics::render() const {
  std::lock_guard l(mu_);
  std::string out;
  if (virtuals_.empty()) return out;
  append_family(out, "folio:route_decisions_total", "counter",
                "Routing decisions of virtual models, by the model chosen and the reason.");
  for (const auto& [key, n] : decisions_) {
    const auto& [virt, model, reason] = key;
    out += "folio:route_decisions_total{" + label("virtual_model", virt) + "," +
           label("model_name", model) + "," + label("reason", reason) + "} " + std::to_string(n) +
           "\n";
  }
  append_family(out, "folio:route_score", "histogram",
                "Complexity scores of routed requests (0: easiest, 1: hardest).");
  for (const auto& [virt, v] : virtuals_)
    v.score.render(out, "folio:route_score", label("virtual_model", virt));
  append_family(out, "folio:route_cascade_escalations_total", "counter",
                "Cascaded requests rerun on the large model after a low-confidence small answer.");
  for (const auto& [virt, v] : virtuals_) {
    out += "folio:route_cascade_escalations_total{" + label("virtual_model", virt) + "} " +
           std::to_string(v.escalations) + "\n";
  }
  append_family(out, "folio:route_cascade_wasted_tokens_total", "counter",
                "Small-model tokens generated for cascaded answers that were then rerun.");
  for (const auto& [virt, v] : virtuals_) {
    out += "folio:route_cascade_wasted_tokens_total{" + label("virtual_model", virt) + "} " +
           std::to_string(v.wasted_tokens) + "\n";
  }
  return out;
}

}  // namespace folio::server
