// calib/calibration.h: running calibration text through a model with an
// observer attached, as llama-imatrix reads its text: chunks of `ctx`
// tokens, each chunk's first token replaced by BOS (when the model uses
// one), each chunk from an empty cache, every row observed. Progress
// (chunk, tokens/s, ETA) goes to stderr.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "base/token_id.h"
#include "model/model.h"

namespace folio::calib {

struct CalibrationOptions {
  std::size_t ctx = 512;    // tokens per chunk
  std::size_t chunks = 0;   // at most this many (0: every whole chunk)
  std::size_t batch = 512;  // tokens per forward step
  int threads = 1;
};

// The chunks `tokens` yields under `o` (throws folio::Error when not even one).
std::size_t calibration_chunks(std::size_t n_tokens, const CalibrationOptions& o,
                               const std::string& what);

// Runs the chunks through `m` with `observer` attached; `bos` < 0: keep each
// chunk's first token. `label` prefixes the progress line.
void run_calibration(const model::Model& m, std::span<const TokenId> tokens, TokenId bos,
                     const CalibrationOptions& o, model::LinearInputObserver& observer,
                     const std::string& label);

// XXH64 of the calibration text, recorded in quantized files.
std::uint64_t text_hash(std::string_view text);

}  // namespace folio::calib
