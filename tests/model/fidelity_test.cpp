// Fidelity of the forward pass against HF transformers (tools/gen_reference_logits.py),
// on each model scripts/setup fetches: SmolLM2-135M (llama) and Gemma 3 270M
// (gemma3: QK-norm, sandwich norms, GeGLU, 5 sliding-window layers of 512 to 1
// global, two prompts longer than 1,500 tokens).
//
// For every golden case, folio runs the prompt as one prefill (logits at every
// prompt position), then 64 decode steps in one ragged batch holding all cases
// (one token per sequence per step), feeding HF's greedy tokens. Because the
// forward pass is deterministic, folio's own greedy continuation equals HF's
// exactly when folio's argmax equals HF's token at every one of those steps,
// which is what the greedy check does. Statistics over all positions:
//   reference precision: greedy identical, top-1 everywhere, max |dlogit| <= kRefMaxAbs
//   fast precision:      top-1 agreement and mean KL(ref || folio) within the bounds below
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "golden.h"
#include "kernels/thread_pool.h"
#include "model/contiguous_kv_cache.h"
#include "model/model.h"

namespace folio {
namespace {

// What each model's goldens are held to in reference precision.
struct ModelCase {
  const char* golden;  // tests/data/model/<golden>.{json,bin}
  const char* file;    // models/<file>
  // Reference precision: max |folio - HF| over every stored logit.
  //   SmolLM2: measured 6.5e-5 over 1109 positions (logits O(10-40); fp32
  //     noise through 30 layers summed in another order than torch). ~6x
  //     headroom, below half the smallest top-1/top-2 gap (8.5e-4), so no
  //     argmax can flip.
  //   Gemma 3: measured 0.058 over 5093 positions (mean KL 2e-8, top-1 100 %):
  //     Gemma's residual stream reaches the thousands, so fp32 noise is larger
  //     in absolute terms; 2.6x headroom. The argmax guarantee comes from the
  //     greedy check instead (its smallest HF margin is 0.0019).
  double ref_max_abs;
};

const ModelCase kCases[] = {
    {"SmolLM2-135M-Instruct.Q4_1", test::kDefaultModel, 4e-4},
    {"gemma-3-270m-q4_k_m", test::kGemmaModel, 0.15},
};

// Fast precision quantizes activations to 16-bit blocks of 32 before each
// matmul (kernels::ActivationBits::k16, the default; see kernels/matmul.h).
// Measured on SmolLM2-135M Q4_1: top-1 100%, mean KL 6.3e-8, max KL 2e-6,
// max |dlogit| 0.012; on Gemma 3 270M Q4_K_M: top-1 100 % (5093 positions),
// mean KL 3.7e-8, max |dlogit| 0.12 (with llama.cpp's 8-bit activations for
// its Q4_K / Q6_K matrices it was 97.6 % and 1.3e-3). The bounds are issue #3's targets (top-1 >=
// 99%, mean KL <= 1e-3). llama.cpp-style 8-bit activations (ActivationBits::k8) give top-1 97.6%
// and mean KL 2.2e-3 and would fail them.
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

// Prompt positions per forward: every one wants logits, and Gemma's rows are
// 1 MiB each.
constexpr std::size_t kPrefillChunk = 256;

// Runs every case as described above in one precision.
RunResult run(const ModelCase& mc, const test::Golden& g, model::Precision precision,
              kernels::KvDtype kv_dtype) {
  const model::Model& m = test::shared_model(precision, mc.file);
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
    for (std::size_t p0 = 0; p0 < c.prompt.size(); p0 += kPrefillChunk) {
      const std::size_t p1 = std::min(c.prompt.size(), p0 + kPrefillChunk);
      model::Batch b;
      for (std::size_t p = p0; p < p1; ++p) {
        b.add(c.prompt[p], static_cast<std::int32_t>(p), static_cast<std::int32_t>(i), true);
      }
      const auto logits = m.forward(b, kv, ws, pool);
      for (std::size_t p = p0; p < p1; ++p) {
        r.cases[i].stats.push_back(test::compare_position(g, c, p, &logits[(p - p0) * g.vocab]));
      }
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

class ModelFidelity : public ::testing::TestWithParam<ModelCase> {
 protected:
  const ModelCase& mc() const { return GetParam(); }

  const test::Golden& golden() const {
    static std::map<std::string, test::Golden> cache;
    auto it = cache.find(mc().golden);
    if (it == cache.end()) it = cache.emplace(mc().golden, test::load_golden(mc().golden)).first;
    return it->second;
  }

  const RunResult& result(model::Precision p, kernels::KvDtype kv = kernels::KvDtype::kF32) const {
    using Key = std::tuple<std::string, model::Precision, kernels::KvDtype>;
    static std::map<Key, RunResult> cache;
    const Key key{mc().golden, p, kv};
    auto it = cache.find(key);
    if (it == cache.end()) it = cache.emplace(key, run(mc(), golden(), p, kv)).first;
    return it->second;
  }
};

struct Summary {
  double max_abs = 0, mean_kl = 0, max_kl = 0;
  std::size_t n = 0, top1 = 0;
};

// Over the cases whose name passes `keep` (all by default).
template <class Keep>
Summary summarize(const test::Golden& g, const RunResult& r, Keep keep) {
  Summary s;
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    if (!keep(g.cases[i].name)) continue;
    for (const auto& p : r.cases[i].stats) {
      s.max_abs = std::max(s.max_abs, p.max_abs_diff);
      s.mean_kl += p.kl;
      s.max_kl = std::max(s.max_kl, p.kl);
      s.top1 += p.top1_agrees ? 1 : 0;
      ++s.n;
    }
  }
  if (s.n != 0) s.mean_kl /= static_cast<double>(s.n);
  return s;
}

Summary summarize(const test::Golden& g, const RunResult& r) {
  return summarize(g, r, [](const std::string&) { return true; });
}

void report(const test::Golden& g, const char* what, const Summary& s) {
  std::printf(
      "[fidelity] %s %s: %zu positions, max|dlogit| %.3g, top-1 %zu/%zu (%.2f%%), "
      "mean KL %.3g, max KL %.3g\n",
      g.model.c_str(), what, s.n, s.max_abs, s.top1, s.n,
      100.0 * static_cast<double>(s.top1) / static_cast<double>(s.n), s.mean_kl, s.max_kl);
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

// One test for both checks of the reference run: CTest runs every test in a process of its
// own, so two tests would each redo the run (Gemma 3: ~3 minutes of the unit tests' 7).
TEST_P(ModelFidelity, ReferencePrecisionIsGreedyIdenticalAndWithinFp32NoiseOfHF) {
  expect_greedy_identical(golden(), result(model::Precision::kRef));
  const Summary s = summarize(golden(), result(model::Precision::kRef));
  report(golden(), "ref ", s);
  EXPECT_LE(s.max_abs, mc().ref_max_abs);
  EXPECT_EQ(s.top1, s.n);
}

TEST_P(ModelFidelity, FastPrecisionMatchesHFInDistribution) {
  const Summary s = summarize(golden(), result(model::Precision::kFast));
  report(golden(), "fast", s);
  const double top1 = static_cast<double>(s.top1) / static_cast<double>(s.n);
  std::printf("[fidelity] issue target (top-1 >= %.0f%%, mean KL <= %.0e): %s\n", 100 * kTargetTop1,
              kTargetMeanKl, top1 >= kTargetTop1 && s.mean_kl <= kTargetMeanKl ? "met" : "NOT met");
  EXPECT_GE(top1, kFastMinTop1);
  EXPECT_LE(s.mean_kl, kFastMaxMeanKl);
  // Beyond the window: the long prompts alone meet the same bounds.
  const Summary lng = summarize(golden(), result(model::Precision::kFast),
                                [](const std::string& name) { return name.starts_with("long_"); });
  if (lng.n != 0) {
    report(golden(), "fast, prompts > 1,500 tokens", lng);
    EXPECT_GE(static_cast<double>(lng.top1) / static_cast<double>(lng.n), kFastMinTop1);
    EXPECT_LE(lng.mean_kl, kFastMaxMeanKl);
  }
}

// The KV cache element types the engine offers (--kv-cache-dtype), on the
// default fast path. Measured on SmolLM2-135M Q4_1 (AVX2):
//   f16 KV (the engine's default): top-1 100 %, mean KL 4.4e-7, max |dlogit| 0.03
//   int8 KV (fp16 scale per 32 values, opt-in): top-1 99.1 % (1099/1109),
//     mean KL 4.4e-4, max KL 0.012
// and on Gemma 3 270M Q4_K_M (5093 positions, 4040 of them in prompts longer
// than the window):
//   f16 KV: top-1 99.94 % (3 near-ties flip), mean KL 3.1e-7
//   int8 KV: top-1 98.8 %, mean KL 3.8e-4, max KL 0.05
// int4 KV (Hadamard-rotated head rows, fp16 scale per 32 values, opt-in):
//   SmolLM2: top-1 90.3 %, mean KL 0.044, max KL 2.9 (unrotated: 82.2 %, 0.155)
//   Gemma 3: top-1 84.0 %, mean KL 0.079, max KL 3.4 (unrotated: 87.0 %, 0.078;
//   its QK-norm leaves no outlier channels for the rotation to spread)
// held to top-1 >= 80 % and mean KL <= 0.1: a lossy option, measured, never
// the default.
// f16 must stay at reference grade (top-1 >= 99.9 %, mean KL <= 1e-5); int8
// must keep the mean-KL bound, and its top-1 (near-ties flip first) is held to
// 98.5 % so that a different ISA's rounding cannot fail a correct build.
TEST_P(ModelFidelity, QuantizedKvCachesStayWithinTheFastPathBounds) {
  const Summary f16 = summarize(golden(), result(model::Precision::kFast, kernels::KvDtype::kF16));
  report(golden(), "fast, f16 KV ", f16);
  EXPECT_GE(static_cast<double>(f16.top1) / static_cast<double>(f16.n), 0.999);
  EXPECT_LE(f16.mean_kl, 1e-5);
  const Summary i8 = summarize(golden(), result(model::Precision::kFast, kernels::KvDtype::kI8));
  report(golden(), "fast, int8 KV", i8);
  EXPECT_GE(static_cast<double>(i8.top1) / static_cast<double>(i8.n), 0.985);
  EXPECT_LE(i8.mean_kl, kFastMaxMeanKl);
  const Summary i4 = summarize(golden(), result(model::Precision::kFast, kernels::KvDtype::kI4));
  report(golden(), "fast, int4 KV", i4);
  EXPECT_GE(static_cast<double>(i4.top1) / static_cast<double>(i4.n), 0.80);
  EXPECT_LE(i4.mean_kl, 0.1);
}

TEST_P(ModelFidelity, GoldenCoversTheRequiredPrompts) {
  const auto& g = golden();
  EXPECT_GE(g.cases.size(), 8u);
  std::vector<std::string> names = {"english_long", "code_python", "chinese", "chatml"};
  const std::size_t window =
      test::shared_model(model::Precision::kFast, mc().file).config().sliding_window;
  if (window != 0) {
    names.insert(names.end(), {"long_ledger", "long_chat"});
  }
  for (const std::string& name : names) {
    const auto it = std::find_if(g.cases.begin(), g.cases.end(),
                                 [&](const test::GoldenCase& c) { return c.name == name; });
    ASSERT_NE(it, g.cases.end()) << name;
    if (name.starts_with("long_")) {
      EXPECT_GE(it->prompt.size(), std::max<std::size_t>(1500, 2 * window));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ModelFidelity, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<ModelCase>& i) {
                           return std::string(i.param.file).starts_with("gemma") ? "Gemma3"
                                                                                 : "SmolLM2";
                         });

}  // namespace
}  // namespace folio
