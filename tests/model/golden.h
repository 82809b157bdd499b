// tests/model/golden.h: reference logits written by tools/gen_reference_logits.py
// (HF transformers + torch, fp32, on the same GGUF), and the statistics the
// fidelity tests compute against them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"

namespace folio::test {

inline constexpr const char* kDefaultModel = "SmolLM2-135M-Instruct.Q4_1.gguf";

struct GoldenCase {
  std::string name;
  std::vector<std::int32_t> prompt;  // ids from the HF tokenizer
  std::vector<std::int32_t> greedy;  // HF's greedy continuation
  double min_margin = 0;             // smallest top1-top2 logit gap along it
  // Per position of prompt + greedy: top-K ids and logits (descending), log-sum-exp.
  std::vector<std::int32_t> topk_ids;
  std::vector<float> topk_logits;
  std::vector<float> lse;
  struct FullRow {
    std::size_t pos;
    std::vector<float> logits;  // n_vocab
  };
  std::vector<FullRow> full_rows;

  std::size_t n_positions() const { return prompt.size() + greedy.size(); }
  // The whole sequence the logits were computed on.
  std::vector<std::int32_t> sequence() const;
};

struct Golden {
  std::string model;
  std::size_t vocab = 0;
  std::size_t top_k = 0;
  std::vector<GoldenCase> cases;
};

// Loads tests/data/model/<stem>.{json,bin}; fails the calling test (throws)
// with a message naming the file when absent or inconsistent.
Golden load_golden(const std::string& stem);

// Path of a model in $FOLIO_SOURCE_DIR/models; throws, saying to run
// scripts/setup, when it is missing.
std::string model_path(const std::string& file);

inline constexpr const char* kGemmaModel = "gemma-3-270m-q4_k_m.gguf";

// A model of models/ (the default one unless named), loaded once per file and
// precision for the whole test binary.
const model::Model& shared_model(model::Precision precision,
                                 const std::string& file = kDefaultModel);

// Comparison of one folio logits row with the reference at one position.
struct PositionStats {
  double max_abs_diff;  // over the reference's top-K entries (and full row if stored)
  double kl;            // KL(ref || folio): exact with a full row, else top-K + tail bucket
  bool top1_agrees;     // folio's argmax is the reference's argmax
  std::int32_t argmax;  // folio's argmax
};

PositionStats compare_position(const Golden& g, const GoldenCase& c, std::size_t pos,
                               const float* folio_logits);

}  // namespace folio::test
