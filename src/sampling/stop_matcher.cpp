// sampling/stop_matcher.cpp: earliest-match search plus prefix hold-back.
#include "sampling/stop_matcher.h"

#include <algorithm>

namespace folio::sampling {
namespace {

// Length of the longest suffix of `text` that is a proper prefix of `stop`.
std::size_t prefix_overlap(std::string_view text, std::string_view stop) {
  const std::size_t max = std::min(text.size(), stop.size() - 1);
  for (std::size_t len = max; len > 0; --len) {
    if (text.substr(text.size() - len) == stop.substr(0, len)) return len;
  }
  return 0;
}

}  // namespace

StopMatcher::StopMatcher(std::vector<std::string> stops, bool include_stop_str)
    : stops_(std::move(stops)), include_stop_(include_stop_str) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

StopMatcher::Result StopMatcher::feed(std::string_view delta) {
  Result out;
  if (stopped_) return out;
  pending_.append(delta);
  // Earliest match wins; at equal positions, the first listed stop string.
  std::size_t best_pos = std::string::npos;
  std::size_t best = 0;
  for (std::size_t i = 0; i < stops_.size(); ++i) {
    const std::size_t pos = pending_.find(stops_[i]);
    if (pos < best_pos) {
      best_pos = pos;
      best = i;
    }
  }
  if (best_pos != std::string::npos) {
    out.text = pending_.substr(0, best_pos);
    if (include_stop_) out.text += stops_[best];
    out.stop = best;
    stopped_ = true;
    pending_.clear();
    return out;
  }
  std::size_t hold = 0;
  for (const std::string& s : stops_) hold = std::max(hold, prefix_overlap(pending_, s));
  out.text = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return out;
}

std::string StopMatcher::flush() {
  std::string out = std::move(pending_);
  pending_.clear();
  return out;
}

}  // namespace folio::sampling
