// Fidelity of the forward pass against HF transformers (tools/gen_reference_logits.py).
//
// For every golden case, folio runs the prompt as one prefill (logits at every
// prompt position), then 64 decode steps in one ragged batch holding all cases
// (one token per sequence per step), feeding HF's greedy tokens. Because the
// forward pass is deterministic, folio's own greedy continuation equals HF's
// exactly when folio's argmax equals HF's token at every one of those steps,
// which is what the greedy test checks. Statistics over all positions:
//   reference precision: greedy identical, top-1 everywhere, max |dlogit| <= kRefMaxAbs
//   fast precision:      top-1 agreement and mean KL(ref || folio) within the bounds below
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "golden.h"
#include "kernels/thread_pool.h"
#include "model/contiguous_kv_cache.h"
#include "model/model.h"

namespace folio {
namespace {

constexpr const char* kGolden = "SmolLM2-135M-Instruct.Q4_1";
// Reference precision: measured max |folio - HF| = 6.5e-5 over all 1109
// positions (logits are O(10-40); fp32 noise through 30 layers summed in a
// different order than torch). The bound keeps ~6x headroom and is below half
// the smallest top-1/top-2 gap in the goldens (8.5e-4), so it also
// guarantees that no argmax can flip.
constexpr double kRefMaxAbs = 4e-4;

// Fast precision quantizes activations to 16-bit blocks of 32 before each
// matmul (kernels::ActivationBits::k16, the default; see kernels/matmul.h).
// Measured on SmolLM2-135M Q4_1: top-1 100%, mean KL 6.3e-8, max KL 2e-6,
// max |dlogit| 0.012. The bounds are issue #3's targets (top-1 >= 99%, mean
// KL <= 1e-3). llama.cpp-style 8-bit activations (ActivationBits::k8) give
// top-1 97.6% and mean KL 2.2e-3 and would fail them.
constexpr double kFastMinTop1 = 0.99;
constexpr double kFastMaxMeanKl = 1e-3;
constexpr double kTargetTop1 = 0.99;
constexpr double kTargetMeanKl = 1e-3;

struct CaseResult {
  std::vector<test::PositionStats> stats;  // per position of prompt + greedy
};

struct RunResult {
  std::vector<CaseResult> cases;
};

// Runs every case as described above in one precision.
RunResult run(const test::Golden& g, model::Precision precision,
              kernels::KvDtype kv_dtype = kernels::KvDtype::kF32) {
  const model::Model& m = test::shared_model(precision);
  EXPECT_EQ(m.n_vocab(), g.vocab);
  kernels::ThreadPool pool(2);
  model::Workspace ws;
  std::size_t max_len = 0;
  for (const auto& c : g.cases) max_len = std::max(max_len, c.n_positions());
  model::ContiguousKvCache kv(m.config(), g.cases.size(), max_len, kv_dtype);

  RunResult r;
  r.cases.resize(g.cases.size());
  for (std::size_t i = 0; i < g.cases.size(); ++i) {
    const auto& c = g.cases[i];
    model::Batch b;
    for (std::size_t p = 0; p < c.prompt.size(); ++p) {
      b.add(c.prompt[p], static_cast<std::int32_t>(p), static_cast<std::int32_t>(i), true);
    }
    const auto logits = m.forward(b, kv, ws, pool);
    for (std::size_t p = 0; p < c.prompt.size(); ++p) {
      r.cases[i].stats.push_back(test::compare_position(g, c, p, &logits[p * g.vocab]));
    }
  }
  const std::size_t n_gen = g.cases[0].greedy.size();
  for (std::size_t step = 0; step < n_gen; ++step) {
    model::Batch b;
    for (std::size_t i = 0; i < g.cases.size(); ++i) {
      const auto& c = g.cases[i];
      b.add(c.greedy[step], static_cast<std::int32_t>(c.prompt.size() + step),
            static_cast<std::int32_t>(i), true);
    }
    const auto logits = m.forward(b, kv, ws, pool);
    for (std::size_t i = 0; i < g.cases.size(); ++i) {
      const auto& c = g.cases[i];
      r.cases[i].stats.push_back(
          test::compare_position(g, c, c.prompt.size() + step, &logits[i * g.vocab]));
    }
  }
  return r;
}

const test::Golden& golden() {
  static const test::Golden g = test::load_golden(kGolden);
  return g;
}

const RunResult& result(model::Precision p, kernels::KvDtype kv = kernels::KvDtype::kF32) {
  static std::map<std::pair<model::Precision, kernels::KvDtype>, RunResult> cache;
  auto it = cache.find({p, kv});
  if (it == cache.end()) it = cache.emplace(std::pair{p, kv}, run(golden(), p, kv)).first;
  return it->second;
}

struct Summary {
  double max_abs = 0, mean_kl = 0, max_kl = 0;
  std::size_t n = 0, top1 = 0;
};

Summary summarize(const RunResult& r) {
  Summary s;
  for (const auto& c : r.cases) {
    for (const auto& p : c.stats) {
      s.max_abs = std::max(s.max_abs, p.max_abs_diff);
      s.mean_kl += p.kl;
      s.max_kl = std::max(s.max_kl, p.kl);
      s.top1 += p.top1_agrees ? 1 : 0;
      ++s.n;
    }
  }
  s.mean_kl /= static_cast<double>(s.n);
  return s;
}

void report(const char* what, const Summary& s) {
  std::printf(
      "[fidelity] %s: %zu positions, max|dlogit| %.3g, top-1 %zu/%zu (%.2f%%), "
      "mean KL %.3g, max KL %.3g\n",
      what, s.n, s.max_abs, s.top1, s.n, 100.0 * static_cast<double>(s.top1) / s.n, s.mean_kl,
      s.max_kl);
}

// Folio's argmax at the positions that choose the greedy tokens equals HF's tokens.
void expect_greedy_identical(const test::Golden& g, const RunResult& r) {
  for (std::size_t i = 0; i < g.cases.size(); ++i) {
    const auto& c = g.cases[i];
    std::size_t first_diff = c.greedy.size();
    for (std::size_t s = 0; s < c.greedy.size() && first_diff == c.greedy.size(); ++s) {
      if (r.cases[i].stats[c.prompt.size() - 1 + s].argmax != c.greedy[s]) first_diff = s;
    }
    EXPECT_EQ(first_diff, c.greedy.size())
        << c.name << ": greedy continuation differs from HF at generated token " << first_diff
        << " (HF min top-2 margin along it: " << c.min_margin << ")";
  }
}

TEST(ModelFidelity, ReferencePrecisionGreedyIsTokenIdenticalToHF) {
  expect_greedy_identical(golden(), result(model::Precision::kRef));
}

TEST(ModelFidelity, ReferencePrecisionLogitsMatchHFToFp32Noise) {
  const Summary s = summarize(result(model::Precision::kRef));
  report("ref ", s);
  EXPECT_LE(s.max_abs, kRefMaxAbs);
  EXPECT_EQ(s.top1, s.n);
}

TEST(ModelFidelity, FastPrecisionMatchesHFInDistribution) {
  const Summary s = summarize(result(model::Precision::kFast));
  report("fast", s);
  const double top1 = static_cast<double>(s.top1) / static_cast<double>(s.n);
  std::printf("[fidelity] issue target (top-1 >= %.0f%%, mean KL <= %.0e): %s\n", 100 * kTargetTop1,
              kTargetMeanKl, top1 >= kTargetTop1 && s.mean_kl <= kTargetMeanKl ? "met" : "NOT met");
  EXPECT_GE(top1, kFastMinTop1);
  EXPECT_LE(s.mean_kl, kFastMaxMeanKl);
}

// The KV cache element types the engine offers (--kv-cache-dtype), on the
// default fast path. Measured on SmolLM2-135M Q4_1 (AVX2):
//   f16 KV (the engine's default): top-1 100 %, mean KL 4.4e-7, max |dlogit| 0.03
//   int8 KV (fp16 scale per 32 values, opt-in): top-1 99.1 % (1099/1109),
//     mean KL 4.4e-4, max KL 0.012
// f16 must stay at reference grade; int8 must keep the mean-KL bound, and its
// top-1 (near-ties flip first) is held to 98.5 % so that a different ISA's
// rounding cannot fail a correct build.
TEST(ModelFidelity, QuantizedKvCachesStayWithinTheFastPathBounds) {
  const Summary f16 = summarize(result(model::Precision::kFast, kernels::KvDtype::kF16));
  report("fast, f16 KV ", f16);
  EXPECT_EQ(f16.top1, f16.n);
  EXPECT_LE(f16.mean_kl, 1e-5);
  const Summary i8 = summarize(result(model::Precision::kFast, kernels::KvDtype::kI8));
  report("fast, int8 KV", i8);
  EXPECT_GE(static_cast<double>(i8.top1) / static_cast<double>(i8.n), 0.985);
  EXPECT_LE(i8.mean_kl, kFastMaxMeanKl);
}

TEST(ModelFidelity, GoldenCoversTheRequiredPrompts) {
  const auto& g = golden();
  EXPECT_GE(g.cases.size(), 8u);
  for (const char* name : {"english_long", "code_python", "chinese", "chatml"}) {
    EXPECT_TRUE(std::any_of(g.cases.begin(), g.cases.end(), [&](const test::GoldenCase& c) {
      return c.name == name;
    })) << name;
  }
}

}  // namespace
}  // namespace folio
