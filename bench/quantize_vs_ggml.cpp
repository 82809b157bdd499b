// bench/quantize_vs_ggml.cpp: folio's quantizers against ggml's own, byte
// for byte, on random rows (Gaussian with outliers), with and without
// importances, for every type folio writes. Built and run by
// bench/quantize_vs_ggml.sh against llama.cpp's libggml-base.a (from
// bench/llama_cpp.sh); not part of the CMake build, since it links llama.cpp.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "quant/dequantize.h"
#include "quant/quantize.h"

// ggml's quantizers (ggml-quants.h): nrow rows of n_per_row, importances or null.
extern "C" {
std::size_t quantize_q4_0(const float*, void*, std::int64_t, std::int64_t, const float*);
std::size_t quantize_q4_1(const float*, void*, std::int64_t, std::int64_t, const float*);
std::size_t quantize_q5_0(const float*, void*, std::int64_t, std::int64_t, const float*);
std::size_t quantize_q5_1(const float*, void*, std::int64_t, std::int64_t, const float*);
std::size_t quantize_q8_0(const float*, void*, std::int64_t, std::int64_t, const float*);
std::size_t quantize_q4_K(const float*, void*, std::int64_t, std::int64_t, const float*);
std::size_t quantize_q5_K(const float*, void*, std::int64_t, std::int64_t, const float*);
std::size_t quantize_q6_K(const float*, void*, std::int64_t, std::int64_t, const float*);
}

namespace {

using QuantFn = std::size_t (*)(const float*, void*, std::int64_t, std::int64_t, const float*);
using folio::gguf::TensorType;

struct Case {
  TensorType type;
  QuantFn ggml;
  const char* name;
};

}  // namespace

int main() {
  const Case cases[] = {
      {TensorType::Q4_0, quantize_q4_0, "Q4_0"}, {TensorType::Q4_1, quantize_q4_1, "Q4_1"},
      {TensorType::Q5_0, quantize_q5_0, "Q5_0"}, {TensorType::Q5_1, quantize_q5_1, "Q5_1"},
      {TensorType::Q8_0, quantize_q8_0, "Q8_0"}, {TensorType::Q4_K, quantize_q4_K, "Q4_K"},
      {TensorType::Q5_K, quantize_q5_K, "Q5_K"}, {TensorType::Q6_K, quantize_q6_K, "Q6_K"}};
  const std::size_t n = 1536, rows = 64;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::exponential_distribution<float> expo(1.0f);
  std::vector<float> x(n * rows);
  for (float& v : x) v = normal(rng);
  for (std::size_t r = 0; r < rows; r += 7) {
    for (std::size_t i = 0; i < n; i += 97) x[r * n + i] *= 20.0f;  // outliers
  }
  std::vector<float> importance(n);
  for (float& v : importance) v = expo(rng) * expo(rng);
  int failures = 0;
  for (const Case& c : cases) {
    for (int weighted = 0; weighted < 2; ++weighted) {
      const std::size_t rb = folio::quant::quantized_bytes(c.type, n);
      std::vector<std::uint8_t> ours(rb * rows), theirs(rb * rows);
      const std::span<const float> imp =
          weighted ? std::span<const float>(importance) : std::span<const float>();
      for (std::size_t r = 0; r < rows; ++r) {
        folio::quant::quantize_row(c.type, std::span(x).subspan(r * n, n), imp,
                                   std::span(ours).subspan(r * rb, rb));
      }
      c.ggml(x.data(), theirs.data(), static_cast<std::int64_t>(rows), static_cast<std::int64_t>(n),
             weighted ? importance.data() : nullptr);
      int differ = 0;
      for (std::size_t r = 0; r < rows; ++r) {
        differ += std::memcmp(&ours[r * rb], &theirs[r * rb], rb) != 0 ? 1 : 0;
      }
      std::printf("%-5s %-10s %2d/%zu rows differ\n", c.name, weighted ? "importance" : "plain",
                  differ, rows);
      failures += differ;
    }
  }
  std::printf(failures == 0 ? "all identical\n" : "DIFFERENCES FOUND\n");
  return failures == 0 ? 0 : 1;
}
