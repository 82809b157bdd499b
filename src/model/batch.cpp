#include "model/batch.h"

#include <string>

#include "base/error.h"

namespace folio::model {

void Batch::validate(std::size_t n_vocab) const {
  if (positions.size() != tokens.size() || seq_ids.size() != tokens.size()) {
    throw Error("batch: " + std::to_string(tokens.size()) + " tokens but " +
                std::to_string(positions.size()) + " positions and " +
                std::to_string(seq_ids.size()) + " sequence ids");
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || static_cast<std::size_t>(tokens[i]) >= n_vocab) {
      throw Error("batch: token id " + std::to_string(tokens[i]) + " at row " + std::to_string(i) +
                  " is outside the vocabulary of " + std::to_string(n_vocab) + " tokens");
    }
    if (positions[i] < 0 || seq_ids[i] < 0) {
      throw Error("batch: negative position or sequence id at row " + std::to_string(i));
    }
  }
  if (!windows.empty() && windows.size() != tokens.size()) {
    throw Error("batch: " + std::to_string(tokens.size()) + " tokens but " +
                std::to_string(windows.size()) + " attention windows");
  }
  for (std::size_t i = 0; i < windows.size(); ++i) {
    if (windows[i].window < 0 || windows[i].sinks < 0) {
      throw Error("batch: negative attention window or sinks at row " + std::to_string(i));
    }
  }
  for (std::size_t i = 0; i < logit_rows.size(); ++i) {
    const std::int32_t r = logit_rows[i];
    if (r < 0 || static_cast<std::size_t>(r) >= tokens.size() ||
        (i > 0 && r <= logit_rows[i - 1])) {
      throw Error("batch: logit row " + std::to_string(r) +
                  " is out of range or not in increasing order");
    }
  }
  for (const TokenRange& r : pools) {
    if (r.first < 0 || r.count < 1 ||
        static_cast<std::size_t>(r.first) + static_cast<std::size_t>(r.count) > tokens.size()) {
      throw Error("batch: pool range [" + std::to_string(r.first) + ", +" +
                  std::to_string(r.count) + ") is empty or outside the " +
                  std::to_string(tokens.size()) + " tokens");
    }
  }
}

}  // namespace folio::model
