#include "model/weights.h"

#include <string>

#include "base/error.h"
#include "quant/dequantize.h"

namespace folio::model {

Precision parse_precision(std::string_view name) {
  if (name == "fast") return Precision::kFast;
  if (name == "ref") return Precision::kRef;
  throw Error("unknown precision '" + std::string(name) + "' (expected fast or ref)");
}

std::string_view precision_name(Precision p) {
  return p == Precision::kRef ? "ref" : "fast";
}

Embedding::Embedding(const gguf::TensorInfo& t, std::size_t n_vocab, std::size_t n_embd)
    : type_(t.type), data_(t.data), row_bytes_(t.n_bytes / n_vocab), n_embd_(n_embd) {
  FOLIO_CHECK(row_bytes_ * n_vocab == t.n_bytes, "embedding rows are not whole");
  (void)quant::quantized_bytes(type_, n_embd);  // throws for unsupported types
}

void Embedding::lookup(TokenId id, float* out) const {
  const auto row = static_cast<std::size_t>(id);
  quant::dequantize_row(type_, data_.subspan(row * row_bytes_, row_bytes_), {out, n_embd_});
}

WeightLoader::WeightLoader(const gguf::GgufFile& file, Precision precision)
    : file_(file), precision_(precision) {}

const gguf::TensorInfo& WeightLoader::require(const std::string& name, std::size_t cols,
                                              std::size_t rows) const {
  const gguf::TensorInfo* t = file_.find_tensor(name);
  const std::string want = rows == 1
                               ? "[" + std::to_string(cols) + "]"
                               : "[" + std::to_string(cols) + ", " + std::to_string(rows) + "]";
  if (t == nullptr) {
    throw Error("GGUF file '" + file_.source() + "': tensor '" + name + "' " + want +
                " is missing");
  }
  const bool ok = rows == 1 ? t->n_elements == cols && t->dims[0] == cols
                            : t->dims.size() == 2 && t->dims[0] == cols && t->dims[1] == rows;
  if (!ok) {
    std::string got;
    for (std::uint64_t d : t->dims) got += (got.empty() ? "" : ", ") + std::to_string(d);
    throw Error("GGUF file '" + file_.source() + "': tensor '" + name + "' has shape [" + got +
                "], expected " + want);
  }
  return *t;
}

Linear WeightLoader::linear(const std::string& name, std::size_t rows, std::size_t cols) const {
  const gguf::TensorInfo& t = require(name, cols, rows);
  Linear out;
  out.name = name;
  if (precision_ == Precision::kFast) {
    out.w = kernels::WeightMatrix::prepare(t.type, t.data, rows, cols);
    if (out.w.repacked()) {
      ++repacked_;
      repacked_bytes_ += out.w.bytes().size();
    }
    return out;
  }
  std::shared_ptr<float[]> f32(new float[rows * cols]);
  const std::size_t row_bytes = t.n_bytes / rows;
  for (std::size_t r = 0; r < rows; ++r) {
    quant::dequantize_row(t.type, t.data.subspan(r * row_bytes, row_bytes),
                          {f32.get() + r * cols, cols});
  }
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(f32.get());
  out.w = kernels::WeightMatrix::prepare(gguf::TensorType::F32,
                                         {bytes, rows * cols * sizeof(float)}, rows, cols);
  out.owned = std::move(f32);
  return out;
}

std::vector<float> WeightLoader::vector(const std::string& name, std::size_t n) const {
  const gguf::TensorInfo& t = require(name, n, 1);
  std::vector<float> out(n);
  quant::dequantize_row(t.type, t.data, out);
  return out;
}

Embedding WeightLoader::embedding(const std::string& name, std::size_t n_vocab,
                                  std::size_t n_embd) const {
  return Embedding(require(name, n_embd, n_vocab), n_vocab, n_embd);
}

}  // namespace folio::model
