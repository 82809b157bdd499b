// bench/attention_bench.cpp: attention for one query token over a KV cache of
// `ctx` positions in 16-token f16 pages (the paged engine's layout), at the
// head shapes of SmolLM2-135M (9 query heads, 3 KV heads, head_dim 64) and
// Gemma 3 270M (4 / 1, head_dim 256). One thread, CPU time.
//
//   GFLOP/s = 4 * n_heads * head_dim * ctx / time   (q.k and p.v, 2 flops per MAC)
//   GB/s    = K and V bytes read / time
//
// Run: build/<dir>/bench/attention_bench [--benchmark_filter=smollm2]
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "base/fp16.h"
#include "kernels/attention.h"

namespace {

using namespace folio::kernels;

void run(benchmark::State& state, std::size_t heads, std::size_t kv_heads, std::size_t hd) {
  const auto ctx = static_cast<std::size_t>(state.range(0));
  const std::size_t row = kv_heads * hd, page = 16;
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<std::uint16_t> k(ctx * row), v(ctx * row);
  for (auto& x : k) x = folio::f32_to_fp16(nd(rng));
  for (auto& x : v) x = folio::f32_to_fp16(nd(rng));
  std::vector<KvPage> pages;
  for (std::size_t t = 0; t < ctx; t += page) {
    pages.push_back({k.data() + t * row, v.data() + t * row, std::min(page, ctx - t)});
  }
  std::vector<float> q(heads * hd), out(heads * hd);
  for (auto& x : q) x = nd(rng);
  const AttentionShape shape{heads,         kv_heads, hd,  1.0f / std::sqrt(static_cast<float>(hd)),
                             KvDtype::kF16, 0,        0.0f};
  for (auto _ : state) {
    attention(q.data(), ctx - 1, pages, shape, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(4.0 * static_cast<double>(heads * hd * ctx) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * 2 * ctx * row * 2));
}

}  // namespace

BENCHMARK_CAPTURE(run, smollm2, 9, 3, 64)->Arg(128)->Arg(512)->Arg(2048)->ArgName("ctx");
BENCHMARK_CAPTURE(run, gemma3, 4, 1, 256)->Arg(128)->Arg(512)->Arg(2048)->ArgName("ctx");

BENCHMARK_MAIN();
