// bench/attention_bench.cpp: attention over a KV cache of `ctx` positions in
// 16-token f16 pages (the paged engine's layout), at the head shapes of
// SmolLM2-135M (9 query heads, 3 KV heads, head_dim 64) and Gemma 3 270M
// (4 / 1, head_dim 256). One thread, CPU time.
//   run:     one query token at position ctx - 1 (decode);
//   prefill: ctx query tokens at positions 0 .. ctx - 1 in one attention_rows
//            call (a whole prompt, causal);
//   batch:   a decode step of `seqs` sequences over 30 layers, every page at a
//            shuffled place in one pool (the K/V come mostly from DRAM, as in
//            the engine's batched decode); next:1 gives each call the next
//            call's rows to request (kv_prefetch.h), as the engine does.
//
//   GFLOP/s = 4 * n_heads * head_dim * keys read / time   (q.k and p.v, 2 flops per MAC)
//   GB/s    = K and V bytes read / time (decode)
//
// Run: [FOLIO_ISA=avx2] build/<dir>/bench/attention_bench [--benchmark_filter=smollm2]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/fp16.h"
#include "kernels/attention.h"
#include "kernels/cpu_features.h"
#include "kernels/kv_prefetch.h"

namespace {

using namespace folio::kernels;

// A cache of ctx random f16 positions in 16-token pages, and nq query rows.
struct Case {
  std::vector<std::uint16_t> k, v;
  std::vector<KvPage> pages;
  std::vector<float> q, out;
  AttentionShape shape;

  Case(std::size_t ctx, std::size_t nq, std::size_t heads, std::size_t kv_heads, std::size_t hd)
      : shape{heads,         kv_heads, hd,  1.0f / std::sqrt(static_cast<float>(hd)),
              KvDtype::kF16, 0,        0.0f} {
    const std::size_t row = kv_heads * hd, page = 16;
    std::mt19937 rng(1);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    k.resize(ctx * row);
    v.resize(ctx * row);
    for (auto& x : k) x = folio::f32_to_fp16(nd(rng));
    for (auto& x : v) x = folio::f32_to_fp16(nd(rng));
    for (std::size_t t = 0; t < ctx; t += page) {
      pages.push_back({k.data() + t * row, v.data() + t * row, std::min(page, ctx - t)});
    }
    q.resize(nq * heads * hd);
    out.resize(q.size());
    for (auto& x : q) x = nd(rng);
  }
};

void run(benchmark::State& state, std::size_t heads, std::size_t kv_heads, std::size_t hd) {
  const auto ctx = static_cast<std::size_t>(state.range(0));
  Case c(ctx, 1, heads, kv_heads, hd);
  for (auto _ : state) {
    attention(c.q.data(), ctx - 1, c.pages, c.shape, c.out.data());
    benchmark::DoNotOptimize(c.out.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(4.0 * static_cast<double>(heads * hd * ctx) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  state.SetBytesProcessed(
      static_cast<std::int64_t>(state.iterations() * 2 * ctx * kv_heads * hd * 2));
}

void prefill(benchmark::State& state, std::size_t heads, std::size_t kv_heads, std::size_t hd) {
  const auto ctx = static_cast<std::size_t>(state.range(0));
  Case c(ctx, ctx, heads, kv_heads, hd);
  for (auto _ : state) {
    attention_rows(c.q.data(), ctx, 0, c.pages, c.shape, c.out.data());
    benchmark::DoNotOptimize(c.out.data());
  }
  const double keys = static_cast<double>(ctx) * static_cast<double>(ctx + 1) / 2.0;
  state.counters["GFLOP/s"] =
      benchmark::Counter(4.0 * static_cast<double>(heads * hd) * keys * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate);
}

// Batched decode as the engine runs it: `seqs` sequences of ctx positions in
// 30 layers, every 16-token page a block of one pool (K then V) at a shuffled
// place (141 MB at 32 x 192, mostly beyond the caches); one query token per
// sequence and layer.
void batch(benchmark::State& state, std::size_t heads, std::size_t kv_heads, std::size_t hd) {
  const auto seqs = static_cast<std::size_t>(state.range(0));
  const auto ctx = static_cast<std::size_t>(state.range(1));
  const bool overlap = state.range(2) != 0;
  const std::size_t layers = 30, page = 16, row = kv_heads * hd;
  const std::size_t per_seq = (ctx + page - 1) / page, blocks = layers * seqs * per_seq;
  std::vector<std::uint16_t> pool(blocks * 2 * page * row);
  std::uint32_t x = 1;
  for (auto& h : pool) {  // values in [0, 4) from an LCG
    x = x * 1664525u + 1013904223u;
    h = folio::f32_to_fp16(static_cast<float>(static_cast<std::int32_t>(x >> 8) % 4096) / 1024.0f);
  }
  std::vector<std::size_t> order(blocks);
  for (std::size_t b = 0; b < blocks; ++b) order[b] = b;
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  std::vector<std::vector<KvPage>> pages(layers * seqs);
  for (std::size_t i = 0; i < layers * seqs; ++i) {
    for (std::size_t p = 0; p < per_seq; ++p) {
      const std::uint16_t* b = pool.data() + order[i * per_seq + p] * 2 * page * row;
      pages[i].push_back({b, b + page * row, std::min(page, ctx - p * page)});
    }
  }
  Case c(page, 1, heads, kv_heads, hd);  // the query and output rows
  for (auto _ : state) {
    for (std::size_t l = 0; l < layers; ++l) {
      for (std::size_t s = 0; s < seqs; ++s) {
        KvPrefetch next;
        if (overlap && s + 1 < seqs) next = KvPrefetch(pages[l * seqs + s + 1], 0, ctx, row * 2);
        attention_rows_heads(c.q.data(), 1, ctx - 1, pages[l * seqs + s], c.shape, c.out.data(),
                             nullptr, 0, kv_heads, &next);
        benchmark::DoNotOptimize(c.out.data());
      }
    }
  }
  state.SetBytesProcessed(
      static_cast<std::int64_t>(state.iterations() * layers * seqs * 2 * ctx * row * 2));
}

}  // namespace

BENCHMARK_CAPTURE(batch, smollm2, 9, 3, 64)
    ->Args({32, 192, 0})
    ->Args({32, 192, 1})
    ->ArgNames({"seqs", "ctx", "next"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run, smollm2, 9, 3, 64)->Arg(128)->Arg(512)->Arg(2048)->ArgName("ctx");
BENCHMARK_CAPTURE(run, gemma3, 4, 1, 256)->Arg(128)->Arg(512)->Arg(2048)->ArgName("ctx");
BENCHMARK_CAPTURE(prefill, smollm2, 9, 3, 64)->Arg(512)->ArgName("ctx");
BENCHMARK_CAPTURE(prefill, gemma3, 4, 1, 256)->Arg(512)->ArgName("ctx");

int main(int argc, char** argv) {
  folio::kernels::configure_isa_from_env();  // FOLIO_ISA=avx2 compares the levels
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
