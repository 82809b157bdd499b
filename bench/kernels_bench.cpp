// bench/kernels_bench.cpp: matmul throughput per weight type at SmolLM2-135M
// shapes (rows x cols = out x in: 576x576 q/o, 192x576 k/v, 1536x576
// gate/up, 576x1536 down, 49152x576 output head).
//
//   matvec (n = 1): bytes_per_second counts weight bytes, to compare with the
//                   memory bandwidth (decode streams every weight once);
//   matmul16 (n = 16, batched decode) and matmul512 (n = 512, prefill):
//                   GFLOP/s = 2 * rows * cols * n / time.
// With threads:1 the rates use CPU time (meaningful on a loaded machine);
// with threads:2 they use wall time (the caller's CPU time would undercount).
// k-quants need cols % 256 == 0, so for them 576 columns become 512.
// Types with 32-value blocks run with the default 16-bit activations and, as
// ".../act8", with 8-bit ones (ActivationBits::k8), to show the cost of the
// higher precision in the same run.
//   quantize/FORM/LEVEL: the activation quantizers (f32 rows to ActQ8Block,
//                   ActQ16Block, ActI16Block) at every level the CPU has, on
//                   512 rows of 576; bytes_per_second counts the f32 input.
//
// Run: [FOLIO_ISA=avx2] build/<dir>/bench/kernels_bench [--benchmark_filter=Q4_1]
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/gemm_avx2.h"
#include "kernels/cpu/gemm_kernel.h"
#include "kernels/cpu_features.h"
#include "kernels/matmul.h"
#include "kernels/thread_pool.h"
#include "quant/traits.h"
#include "random_weights.h"

namespace {

using folio::gguf::TensorType;
using namespace folio::kernels;

struct Setup {
  std::vector<std::uint8_t> bytes;
  WeightMatrix w;
  std::vector<float> x;
  std::vector<float> y;
};

Setup make(TensorType t, std::size_t rows, std::size_t cols, std::size_t n) {
  std::mt19937 rng(42);
  Setup s;
  s.bytes = testing::random_weights(t, rows, cols, rng);
  s.w = WeightMatrix::prepare(t, s.bytes, rows, cols);
  s.x = testing::random_activations(n * cols, rng);
  s.y.resize(n * rows);
  return s;
}

void run(benchmark::State& state, TensorType t, std::size_t rows, std::size_t cols, std::size_t n,
         ActivationBits bits) {
  const int threads = static_cast<int>(state.range(0));
  ThreadPool pool(threads);
  Setup s = make(t, rows, cols, n);
  for (auto _ : state) {
    matmul(s.w, s.x.data(), n, s.y.data(), pool, bits);
    benchmark::DoNotOptimize(s.y.data());
  }
  if (n == 1) {
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * s.bytes.size()));
  } else {
    state.counters["GFLOP/s"] =
        benchmark::Counter(2.0 * static_cast<double>(rows * cols * n) * 1e-9,
                           benchmark::Counter::kIsIterationInvariantRate);
  }
}

void run_quantize(benchmark::State& state, cpu::QuantizeRowFn quantize, std::size_t block_bytes) {
  constexpr std::size_t kRows = 512, kCols = 576;
  std::mt19937 rng(42);
  const std::vector<float> x = testing::random_activations(kRows * kCols, rng);
  std::vector<std::uint8_t> out(kRows * kCols / 32 * block_bytes);
  for (auto _ : state) {
    for (std::size_t r = 0; r < kRows; ++r)
      quantize(x.data() + r * kCols, kCols, out.data() + r * kCols / 32 * block_bytes);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * x.size() * sizeof(float)));
}

void register_quantizers() {
  struct Form {
    const char* name;
    std::size_t block_bytes;
    cpu::QuantizeRowFn scalar, avx2, avx512;
  };
  const Form forms[] = {{"q8_32", sizeof(cpu::ActQ8Block), cpu::quantize_row_q8_32,
                         cpu::avx2::quantize_row_q8_32, cpu::avx512::quantize_row_q8_32},
                        {"q16_32", sizeof(cpu::ActQ16Block), cpu::quantize_row_q16_32,
                         cpu::avx2::quantize_row_q16_32, cpu::avx512::quantize_row_q16_32},
                        {"i16_32", sizeof(cpu::ActI16Block), cpu::quantize_row_i16_32,
                         cpu::avx2::quantize_row_i16_32, cpu::avx512::quantize_row_i16_32}};
  for (const Form& f : forms) {
    const std::pair<const char*, cpu::QuantizeRowFn> levels[] = {
        {"scalar", f.scalar},
        {"avx2", active_isa() >= Isa::kAvx2 ? f.avx2 : nullptr},
        {"avx512", active_isa() >= Isa::kAvx512 ? f.avx512 : nullptr}};
    for (const auto& [level, fn] : levels) {
      if (fn == nullptr) continue;
      const cpu::QuantizeRowFn q = fn;
      const std::size_t bytes = f.block_bytes;
      benchmark::RegisterBenchmark((std::string("quantize/") + f.name + "/" + level).c_str(),
                                   [=](benchmark::State& st) { run_quantize(st, q, bytes); })
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

void register_all() {
  const TensorType types[] = {TensorType::Q4_1, TensorType::Q4_0, TensorType::Q5_0,
                              TensorType::Q8_0, TensorType::Q4_K, TensorType::Q6_K,
                              TensorType::F16};
  const std::pair<std::size_t, std::size_t> shapes[] = {
      {576, 576}, {192, 576}, {1536, 576}, {576, 1536}, {49152, 576}};
  for (TensorType t : types) {
    const bool k = folio::quant::traits(t).block_elems == 256;
    const std::string name(folio::quant::traits(t).name);
    for (const auto& [shape_rows, cols] : shapes) {
      const std::size_t rows = shape_rows;  // a variable: clang < 16 cannot capture a binding
      const std::size_t c = k && cols % 256 != 0 ? 512 : cols;
      const std::string shape = std::to_string(rows) + "x" + std::to_string(c);
      for (std::size_t n : {1, 16, 512}) {
        if (n == 512 && rows > 1536) continue;
        const std::string kind = n == 1 ? "matvec/" : "matmul" + std::to_string(n) + "/";
        for (ActivationBits bits : {ActivationBits::k16, ActivationBits::k8}) {
          if (bits == ActivationBits::k8 && folio::quant::traits(t).block_elems != 32) continue;
          const std::string suffix = bits == ActivationBits::k8 ? "/act8" : "";
          for (int threads : {1, 2}) {
            auto* b = benchmark::RegisterBenchmark(
                          (kind + name + "/" + shape + suffix).c_str(),
                          [=](benchmark::State& st) { run(st, t, rows, c, n, bits); })
                          ->Arg(threads)
                          ->ArgName("threads");
            if (threads > 1) b->UseRealTime();
            if (n == 512) b->Unit(benchmark::kMillisecond);
          }
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  configure_isa_from_env();  // FOLIO_ISA=avx2 etc. to A/B the levels on one machine
  benchmark::AddCustomContext("folio_isa", std::string(isa_name(active_isa())));
  register_all();
  register_quantizers();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
