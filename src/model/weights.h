// model/weights.h: a model's tensors, prepared once at load.
//
// Fast precision: a Linear is a kernels::WeightMatrix viewing the mmapped
// GGUF bytes in their stored type (the kernels may repack a copy once).
// Reference precision: every matrix is dequantized at load (quant/, exact)
// into an owned f32 buffer the WeightMatrix views, so products see exactly
// the values HF transformers sees after it dequantizes the same file.
// Vectors (norm weights, biases) are always dequantized to f32.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/matmul.h"
#include "model/batch.h"

namespace folio::model {

enum class Precision {
  kFast,  // quantized weights, kernels::matmul (may quantize activations)
  kRef,   // weights dequantized to f32 at load, f32 GEMM, scalar reference ops
};

// "fast" / "ref"; throws folio::Error listing the accepted names.
Precision parse_precision(std::string_view name);
std::string_view precision_name(Precision p);

// y[n x rows] = x[n x cols] . W^T (+ bias)
struct Linear {
  std::string name;  // the GGUF tensor ("blk.3.attn_q.weight"), for LinearInputObserver
  kernels::WeightMatrix w;
  std::vector<float> bias;               // empty: no bias
  std::shared_ptr<const float[]> owned;  // kRef: the f32 copy `w` views
};

// Token embedding rows, dequantized on lookup (exact in both precisions).
class Embedding {
 public:
  Embedding() = default;
  Embedding(const gguf::TensorInfo& t, std::size_t n_vocab, std::size_t n_embd);
  std::size_t n_embd() const { return n_embd_; }
  // out[n_embd] = row `id` (the caller validated id < n_vocab).
  void lookup(TokenId id, float* out) const;

 private:
  gguf::TensorType type_{};
  std::span<const std::uint8_t> data_;
  std::size_t row_bytes_ = 0, n_embd_ = 0;
};

// Looks tensors up by name in one file, checks their shapes, and prepares
// them for one precision. Errors name the tensor and the expected shape.
class WeightLoader {
 public:
  WeightLoader(const gguf::GgufFile& file, Precision precision);

  Precision precision() const { return precision_; }
  bool has(std::string_view name) const { return file_.find_tensor(name) != nullptr; }

  // A [rows x cols] matrix (GGUF dims {cols, rows}).
  Linear linear(const std::string& name, std::size_t rows, std::size_t cols) const;
  // An f32 copy of an n-element tensor (any supported type).
  std::vector<float> vector(const std::string& name, std::size_t n) const;
  Embedding embedding(const std::string& name, std::size_t n_vocab, std::size_t n_embd) const;

  // Matrices the kernels repacked at load, and the bytes of their repacked
  // copies (reported by `folio info`/`run`).
  std::size_t repacked() const { return repacked_; }
  std::size_t repacked_bytes() const { return repacked_bytes_; }

 private:
  const gguf::TensorInfo& require(const std::string& name, std::size_t cols,
                                  std::size_t rows) const;

  const gguf::GgufFile& file_;
  Precision precision_;
  mutable std::size_t repacked_ = 0;
  mutable std::size_t repacked_bytes_ = 0;
};

}  // namespace folio::model
