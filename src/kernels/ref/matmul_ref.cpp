// kernels/ref/matmul_ref.cpp: the matmul oracle. Each weight row is
// dequantized exactly (quant::dequantize_row, bit-exact with gguf-py) and
// dotted with every activation row in f64.
#include <vector>

#include "kernels/matmul.h"
#include "quant/dequantize.h"

namespace folio::kernels {

void matmul_ref(const WeightMatrix& w, const float* x, std::size_t n, float* y) {
  const std::size_t rows = w.rows(), cols = w.cols();
  const std::size_t row_bytes = w.file_bytes().size() / rows;
  std::vector<float> row(cols);
  for (std::size_t r = 0; r < rows; ++r) {
    quant::dequantize_row(w.type(), w.file_bytes().subspan(r * row_bytes, row_bytes), row);
    for (std::size_t c = 0; c < n; ++c) {
      double acc = 0.0;
      for (std::size_t j = 0; j < cols; ++j) {
        acc += static_cast<double>(row[j]) * static_cast<double>(x[c * cols + j]);
      }
      y[c * rows + r] = static_cast<float>(acc);
    }
  }
}

}  // namespace folio::kernels
