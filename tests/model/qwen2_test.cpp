// The `qwen2` family (src/model/qwen2.cpp: Q/K/V biases, NeoX RoPE on
// unpermuted Q/K rows) against HF transformers' Qwen2ForCausalLM.
//
// tests/data/model/qwen2-tiny.{gguf,json} come from tools/gen_qwen2_tiny.py:
// a 2-layer random model (vocab 128, d 64, ff 96, 4 heads, 2 KV heads, F16
// matrices, nonzero random q/k/v biases, norms around 1) and HF's fp32 logits
// at every position of four random id sequences (24, 40, 7 and 120 tokens). HF
// ran on the same f16-rounded weights, so only arithmetic differs. A missing
// bias, the llama (adjacent-pair) RoPE convention or permuted Q/K rows move the
// logits by O(1), far outside the bounds below. qwen2-yarn-tiny is the same
// model and ids with YaRN RoPE scaling (factor 4, original context 64), which
// checks folio's YaRN frequency table and cos/sin scaling against HF's. The
// tests run in milliseconds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/thread_pool.h"
#include "model/contiguous_kv_cache.h"
#include "model/model.h"

namespace folio {
namespace {

// Measured (x86-64 AVX2, Release, pool of 2) over all 191 x 128 logits, whose
// magnitude is up to 9.7 (10.3 with YaRN), and which the JSON stores to 7
// significant digits (<= 5e-7 rounding):
//   reference precision (f32 weights, scalar f64-accumulating ops): 1.03e-5, YaRN 1.14e-5
//   fast precision (F16 weights x f32 activations via F16C, SIMD ops): 1.07e-5, YaRN 1.31e-5
// i.e. ~1e-6 relative, fp32 noise. The bounds keep ~4x headroom. YaRN
// computed with f64 frequencies instead of HF's f32 operations gave 2.5e-5;
// YaRN without its cos/sin scaling, 2.98. For scale
// (HF on modified weights): dropping the q, k or v bias moves the logits by
// 4.5, 3.2, 8.4; llama's adjacent-pair RoPE on these rows by 9.4.
constexpr double kRefMaxAbs = 5e-5;
constexpr double kFastMaxAbs = 5e-5;

std::string source_dir() {
  const char* env = std::getenv("FOLIO_SOURCE_DIR");
  return env != nullptr && *env != '\0' ? env : FOLIO_SOURCE_DIR;
}

std::string data_path(const std::string& file) {
  return source_dir() + "/tests/data/model/" + file;
}

struct Case {
  std::string name;
  std::vector<TokenId> ids;
  std::vector<float> logits;  // [ids.size() x vocab], HF fp32
};

struct Reference {
  std::size_t vocab = 0;
  std::vector<Case> cases;
};

constexpr const char* kPlain = "qwen2-tiny";
constexpr const char* kYarn = "qwen2-yarn-tiny";

Reference read_reference(const std::string& stem) {
  const std::string path = data_path(stem + ".json");
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path + " (run tools/gen_qwen2_tiny.py)");
  const nlohmann::json j = nlohmann::json::parse(in);
  Reference out;
  out.vocab = j.at("vocab_size");
  for (const auto& jc : j.at("cases")) {
    Case c;
    c.name = jc.at("name");
    c.ids = jc.at("ids").get<std::vector<TokenId>>();
    for (const auto& row : jc.at("logits")) {
      const auto v = row.get<std::vector<float>>();
      if (v.size() != out.vocab)
        throw std::runtime_error(c.name + ": logits row is not vocab-sized");
      c.logits.insert(c.logits.end(), v.begin(), v.end());
    }
    if (c.logits.size() != c.ids.size() * out.vocab) {
      throw std::runtime_error(c.name + ": one logits row per id expected");
    }
    out.cases.push_back(std::move(c));
  }
  return out;
}

const Reference& reference(const std::string& stem = kPlain) {
  static const Reference plain = read_reference(kPlain), yarn = read_reference(kYarn);
  return stem == kPlain ? plain : yarn;
}

const gguf::GgufFile& file(const std::string& stem = kPlain) {
  static const gguf::GgufFile plain =
      gguf::GgufFile::open(data_path(std::string(kPlain) + ".gguf"));
  static const gguf::GgufFile yarn = gguf::GgufFile::open(data_path(std::string(kYarn) + ".gguf"));
  return stem == kPlain ? plain : yarn;
}

// Every position's logits of each case, each case alone as one prefill batch.
std::vector<std::vector<float>> run_alone(const model::Model& m, const std::string& stem = kPlain) {
  kernels::ThreadPool pool(2);
  model::Workspace ws;
  std::vector<std::vector<float>> out;
  for (const Case& c : reference(stem).cases) {
    model::ContiguousKvCache kv(m.config(), 1, c.ids.size());
    model::Batch b;
    for (std::size_t p = 0; p < c.ids.size(); ++p)
      b.add(c.ids[p], static_cast<std::int32_t>(p), 0, true);
    const auto logits = m.forward(b, kv, ws, pool);
    out.emplace_back(logits.begin(), logits.end());
  }
  return out;
}

// Max |folio - HF| over all logits of all cases; prints it with max |HF logit|.
double max_abs_diff(const std::vector<std::vector<float>>& folio_logits, const char* what,
                    const std::string& stem = kPlain) {
  const Reference& r = reference(stem);
  double diff = 0, mag = 0;
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    const auto& ref = r.cases[i].logits;
    EXPECT_EQ(folio_logits[i].size(), ref.size()) << r.cases[i].name;
    if (folio_logits[i].size() != ref.size()) return INFINITY;
    for (std::size_t k = 0; k < ref.size(); ++k) {
      diff = std::max(diff, std::abs(double{folio_logits[i][k]} - ref[k]));
      mag = std::max(mag, std::abs(double{ref[k]}));
    }
  }
  std::printf("[qwen2] %s: max |dlogit| %.3g (max |logit| %.3g, relative %.3g)\n", what, diff, mag,
              diff / mag);
  return diff;
}

model::Model load(model::Precision p, const std::string& stem = kPlain) {
  return model::Model::load(file(stem), {.precision = p});
}

TEST(Qwen2Tiny, ConfigIsReadAndTraitsAreQwen2) {
  const model::Model m = load(model::Precision::kRef);
  const model::ModelConfig& c = m.config();
  EXPECT_EQ(c.arch, "qwen2");
  EXPECT_EQ(c.n_vocab, reference().vocab);
  EXPECT_EQ(c.n_layer, 2u);
  EXPECT_EQ(c.n_embd, 64u);
  EXPECT_EQ(c.n_ff, 96u);
  EXPECT_EQ(c.n_head, 4u);
  EXPECT_EQ(c.n_head_kv, 2u);
  EXPECT_EQ(c.head_dim_k, 16u);
  EXPECT_EQ(c.n_rot, 16u);
  EXPECT_EQ(c.n_ctx_train, 256u);
  EXPECT_DOUBLE_EQ(c.rope_freq_base, 10000.0);
  EXPECT_NEAR(c.norm_eps, 1e-6, 1e-12);
  EXPECT_TRUE(c.norm_is_rms);
  EXPECT_EQ(c.sliding_window, 0u);
  EXPECT_EQ(m.traits().family, "qwen2");
  EXPECT_TRUE(m.traits().rope_neox);
}

TEST(Qwen2Tiny, ReferencePrecisionMatchesHF) {
  const model::Model m = load(model::Precision::kRef);
  EXPECT_LE(max_abs_diff(run_alone(m), "ref "), kRefMaxAbs);
}

TEST(Qwen2Tiny, FastPrecisionMatchesHF) {
  const model::Model m = load(model::Precision::kFast);
  EXPECT_LE(max_abs_diff(run_alone(m), "fast"), kFastMaxAbs);
}

// All cases in one ragged prefill batch (sequence ids 0, 1, 2) give the same
// logits, bit for bit, as each case alone.
void expect_batch_invariant(model::Precision p) {
  const model::Model m = load(p);
  const auto alone = run_alone(m);
  const Reference& r = reference();
  std::size_t total = 0;
  for (const Case& c : r.cases) total += c.ids.size();

  kernels::ThreadPool pool(2);
  model::Workspace ws;
  model::ContiguousKvCache kv(m.config(), r.cases.size(), total);
  model::Batch b;
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    const auto& ids = r.cases[i].ids;
    for (std::size_t t = 0; t < ids.size(); ++t) {
      b.add(ids[t], static_cast<std::int32_t>(t), static_cast<std::int32_t>(i), true);
    }
  }
  const auto logits = m.forward(b, kv, ws, pool);
  ASSERT_EQ(logits.size(), total * r.vocab);
  std::size_t row = 0;
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    const std::size_t n = alone[i].size();
    const std::vector<float> together(logits.begin() + static_cast<std::ptrdiff_t>(row),
                                      logits.begin() + static_cast<std::ptrdiff_t>(row + n));
    EXPECT_EQ(together, alone[i]) << r.cases[i].name << " differs in the ragged batch";
    row += n;
  }
}

TEST(Qwen2Tiny, RefRaggedBatchEqualsEachAlone) {
  expect_batch_invariant(model::Precision::kRef);
}

TEST(Qwen2Tiny, FastRaggedBatchEqualsEachAlone) {
  expect_batch_invariant(model::Precision::kFast);
}

TEST(Qwen2YarnTiny, ConfigReadsTheScaling) {
  const model::Model m = load(model::Precision::kRef, kYarn);
  const model::ModelConfig& c = m.config();
  EXPECT_EQ(c.rope_scaling.type, "yarn");
  EXPECT_DOUBLE_EQ(c.rope_scaling.factor, 4.0);
  EXPECT_EQ(c.rope_scaling.original_context, 64u);
  EXPECT_DOUBLE_EQ(c.rope_scaling.beta_fast, 32.0);
  EXPECT_DOUBLE_EQ(c.rope_scaling.beta_slow, 1.0);
}

// The check has teeth: with the same weights and ids, YaRN moves HF's logits
// by far more than the bounds (folio without YaRN would be that far off).
TEST(Qwen2YarnTiny, YarnChangesTheLogitsFarBeyondTheBound) {
  const Reference& plain = reference(kPlain);
  const Reference& yarn = reference(kYarn);
  ASSERT_EQ(plain.cases.size(), yarn.cases.size());
  double diff = 0;
  for (std::size_t i = 0; i < plain.cases.size(); ++i) {
    ASSERT_EQ(plain.cases[i].ids, yarn.cases[i].ids);
    for (std::size_t k = 0; k < plain.cases[i].logits.size(); ++k) {
      diff = std::max(diff, std::abs(double{plain.cases[i].logits[k]} - yarn.cases[i].logits[k]));
    }
  }
  std::printf("[qwen2] HF logits, YaRN vs none: max |dlogit| %.3g\n", diff);
  EXPECT_GT(diff, 100 * kFastMaxAbs);
}

TEST(Qwen2YarnTiny, ReferencePrecisionMatchesHF) {
  const model::Model m = load(model::Precision::kRef, kYarn);
  EXPECT_LE(max_abs_diff(run_alone(m, kYarn), "yarn ref ", kYarn), kRefMaxAbs);
}

TEST(Qwen2YarnTiny, FastPrecisionMatchesHF) {
  const model::Model m = load(model::Precision::kFast, kYarn);
  EXPECT_LE(max_abs_diff(run_alone(m, kYarn), "yarn fast", kYarn), kFastMaxAbs);
}

}  // namespace
}  // namespace folio
