// calib/imatrix.h: an importance matrix: for every linear of the decoder
// blocks, the sum over calibration rows of each input column's squared
// activation, and how many rows were seen (llama-imatrix's data). Column j's
// importance is sum_j / count: the diagonal of the input second-moment
// matrix E[x x^T], which is what the importance-weighted quantizers
// (quant/quantize.h) weigh each column's error by.
//
// Collected as a model::LinearInputObserver during forward passes; read and
// written in llama.cpp's imatrix GGUF format, so folio and llama.cpp can use
// each other's files:
//   tensors  "<weight>.in_sum2"  F32 [n_cols]   sums of squares
//            "<weight>.counts"   F32 [1]        rows seen
//   metadata general.type = "imatrix", imatrix.datasets (string array),
//            imatrix.chunk_count (u32), imatrix.chunk_size (u32)
// (llama.cpp's per-expert rows of MoE models are not produced or accepted:
// folio runs dense models.)
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

namespace folio::calib {

struct ImatrixEntry {
  std::vector<double> sums;  // per input column: sum of x^2 (double: millions of rows)
  std::uint64_t count = 0;   // rows seen
};

class Imatrix : public model::LinearInputObserver {
 public:
  // Adds sum of x^2 per column over `rows` rows. Throws folio::Error when a
  // weight's width changes between calls.
  void observe(std::string_view weight_name, const float* x, std::size_t rows,
               std::size_t cols) override;

  // Per-column importances (sums / count) of `weight_name`; empty when it
  // has no entry or saw no rows.
  std::vector<float> importance(std::string_view weight_name) const;

  const std::map<std::string, ImatrixEntry, std::less<>>& entries() const { return entries_; }

  // Provenance, kept in the file.
  std::vector<std::string> datasets;  // e.g. the calibration file's name
  std::uint32_t chunk_count = 0;      // chunks of text run
  std::uint32_t chunk_size = 0;       // tokens per chunk

  // llama.cpp's imatrix GGUF. read() throws folio::Error naming the file and
  // what is wrong (not an imatrix, a sums tensor without its counts, a type
  // other than F32, per-expert data, non-finite or negative values).
  static Imatrix read(const std::string& path);
  void write(const std::string& path) const;

 private:
  std::map<std::string, ImatrixEntry, std::less<>> entries_;
};

}  // namespace folio::calib
