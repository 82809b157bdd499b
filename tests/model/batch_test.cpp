// Batch invariance of the forward pass (DESIGN.md: a request's tokens do not
// depend on what else is in the batch): sequences forwarded together in one
// ragged batch, or a prompt fed in chunks, give the same logits as each
// sequence alone in one piece. Checked bit for bit in both precisions, on
// SmolLM2 and on Gemma 3 with a prompt longer than its 512-token window (the
// chunks cross it, so sliding layers see different tile grids per chunk).
#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"
#include "golden.h"
#include "kernels/thread_pool.h"
#include "model/contiguous_kv_cache.h"
#include "model/model.h"

namespace folio {
namespace {

using Tokens = std::vector<TokenId>;

// Two prompts of different lengths (ids from the SmolLM2 vocabulary) and
// the tokens fed after them.
const Tokens kSmolA = {504,  1345, 3458, 282, 1249, 314, 253,  1867, 2618, 30,  378, 1345, 8, 216,
                       1084, 32,   2564, 11,  1070, 253, 2565, 28,   2221, 282, 260, 1250, 28};
const Tokens kSmolB = {19556, 28, 940, 359, 346, 47};
const Tokens kSmolNextA = {339, 5277, 30, 1040};
const Tokens kSmolNextB = {314, 1345, 2810, 28};

// Gemma 3: a 700-token prompt of pseudo-random ids (an LCG over ordinary
// vocabulary entries), and a short one.
Tokens gemma_prompt(std::size_t n, std::uint32_t seed) {
  Tokens t = {2};  // <bos>
  std::uint32_t x = seed;
  while (t.size() < n) {
    x = x * 1664525u + 1013904223u;
    t.push_back(static_cast<TokenId>(1000 + (x >> 8) % 200000));
  }
  return t;
}

struct Prompts {
  const char* file;
  Tokens a, b, next_a, next_b;
  std::size_t chunk;  // A's chunked prefill
};

const Prompts& smollm2() {
  static const Prompts p{test::kDefaultModel, kSmolA, kSmolB, kSmolNextA, kSmolNextB, 5};
  return p;
}

const Prompts& gemma3() {
  static const Prompts p{test::kGemmaModel,        gemma_prompt(700, 1),      gemma_prompt(9, 2),
                         {236761, 4521, 107, 818}, {563, 1806, 236764, 2269}, 128};
  return p;
}

struct Fixture {
  const model::Model& m;
  kernels::ThreadPool pool{2};
  model::Workspace ws;
  explicit Fixture(model::Precision p, const char* file = test::kDefaultModel)
      : m(test::shared_model(p, file)) {}

  model::ContiguousKvCache cache(std::size_t n_seq) { return {m.config(), n_seq, 768}; }
};

// Logits rows of `b` copied out of the workspace.
std::vector<std::vector<float>> forward(Fixture& f, const model::Batch& b, model::KvCache& kv) {
  const auto logits = f.m.forward(b, kv, f.ws, f.pool);
  std::vector<std::vector<float>> rows;
  for (std::size_t i = 0; i < b.logit_rows.size(); ++i) {
    rows.emplace_back(logits.begin() + static_cast<std::ptrdiff_t>(i * f.m.n_vocab()),
                      logits.begin() + static_cast<std::ptrdiff_t>((i + 1) * f.m.n_vocab()));
  }
  return rows;
}

// Logits after the prompt and after each next token, one sequence alone
// (prompt fed in chunks of `chunk` tokens).
std::vector<std::vector<float>> alone(Fixture& f, const Tokens& prompt, const Tokens& next,
                                      std::size_t chunk) {
  auto kv = f.cache(1);
  std::vector<std::vector<float>> out;
  for (std::size_t p0 = 0; p0 < prompt.size(); p0 += chunk) {
    model::Batch b;
    const std::size_t p1 = std::min(prompt.size(), p0 + chunk);
    for (std::size_t p = p0; p < p1; ++p) {
      b.add(prompt[p], static_cast<std::int32_t>(p), 0, p + 1 == prompt.size());
    }
    for (auto& r : forward(f, b, kv)) out.push_back(std::move(r));
  }
  for (std::size_t s = 0; s < next.size(); ++s) {
    model::Batch b;
    b.add(next[s], static_cast<std::int32_t>(prompt.size() + s), 0, true);
    out.push_back(forward(f, b, kv)[0]);
  }
  return out;
}

void check_precision(model::Precision precision, const Prompts& pr) {
  Fixture f(precision, pr.file);
  const Tokens &kA = pr.a, &kB = pr.b, &kNextA = pr.next_a, &kNextB = pr.next_b;
  const auto a_alone = alone(f, kA, kNextA, kA.size());
  const auto b_alone = alone(f, kB, kNextB, kB.size());
  ASSERT_EQ(a_alone.size(), 1 + kNextA.size());

  // Chunked prefill of A (the last chunk short) changes nothing.
  EXPECT_EQ(alone(f, kA, kNextA, pr.chunk), a_alone) << "chunked prefill differs";

  // Step 1: A's whole prompt and B's first 2 tokens; step 2: B's rest.
  // Steps 3..: one decode token of each, B's sequence id first.
  auto kv = f.cache(3);  // sequence ids 2 (A) and 0 (B); 1 unused
  model::Batch b;
  for (std::size_t p = 0; p < kA.size(); ++p) {
    b.add(kA[p], static_cast<std::int32_t>(p), 2, p + 1 == kA.size());
  }
  b.add(kB[0], 0, 0, false);
  b.add(kB[1], 1, 0, false);
  const auto step1 = forward(f, b, kv);
  b.clear();
  for (std::size_t p = 2; p < kB.size(); ++p) {
    b.add(kB[p], static_cast<std::int32_t>(p), 0, p + 1 == kB.size());
  }
  const auto step2 = forward(f, b, kv);
  EXPECT_EQ(step1[0], a_alone[0]) << "A's prompt logits differ when batched with B";
  EXPECT_EQ(step2[0], b_alone[0]) << "B's prompt logits differ after a shared step";
  for (std::size_t s = 0; s < kNextA.size(); ++s) {
    b.clear();
    b.add(kNextB[s], static_cast<std::int32_t>(kB.size() + s), 0, true);
    b.add(kNextA[s], static_cast<std::int32_t>(kA.size() + s), 2, true);
    const auto rows = forward(f, b, kv);
    EXPECT_EQ(rows[0], b_alone[s + 1]) << "B decode step " << s;
    EXPECT_EQ(rows[1], a_alone[s + 1]) << "A decode step " << s;
  }
}

TEST(ModelBatch, FastSequencesTogetherEqualEachAlone) {
  check_precision(model::Precision::kFast, smollm2());
}

TEST(ModelBatch, RefSequencesTogetherEqualEachAlone) {
  check_precision(model::Precision::kRef, smollm2());
}

TEST(ModelBatch, Gemma3FastSequencesTogetherEqualEachAloneAcrossTheWindow) {
  check_precision(model::Precision::kFast, gemma3());
}

TEST(ModelBatch, Gemma3RefSequencesTogetherEqualEachAloneAcrossTheWindow) {
  check_precision(model::Precision::kRef, gemma3());
}

TEST(ModelBatch, MalformedBatchIsRejectedBeforeTouchingTheCache) {
  Fixture f(model::Precision::kFast);
  auto kv = f.cache(1);
  model::Batch b;
  b.add(1, 0, 0, true);
  b.tokens[0] = static_cast<TokenId>(f.m.n_vocab());  // out of vocabulary
  EXPECT_THROW(f.m.forward(b, kv, f.ws, f.pool), Error);
  b.tokens[0] = 1;
  b.positions[0] = 3;  // gap: the sequence is empty
  EXPECT_THROW(f.m.forward(b, kv, f.ws, f.pool), Error);
  b.positions[0] = 0;
  b.seq_ids[0] = 1;  // no such sequence
  EXPECT_THROW(f.m.forward(b, kv, f.ws, f.pool), Error);
  EXPECT_EQ(kv.length(0), 0u);
}

}  // namespace
}  // namespace folio
