// tests/engine/paged_model_runner_test.cpp: the real ModelRunner on a tiny
// real model (tests/data/model/qwen2-tiny, from tools/gen_qwen2_tiny.py),
// against HF transformers' fp32 logits: a plan entry asks for several logit
// rows (num_logits > 1, as speculative verification will), entries of one
// plan come back in plan order, a chunk continues over the paged blocks of
// an earlier step, and an entry with num_logits = 0 returns no row. With a
// draft model (the same tiny model), its drafts are the model's own greedy
// continuation (contiguous-cache reference) after catching up on the
// prompt, after accepted drafts, and after a rejected one. Pooled entries'
// hidden-state sums add up over chunks and come back in plan order.
#include "engine/paged_model_runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "greedy_reference.h"
#include "kernels/kv_row.h"
#include "model/contiguous_kv_cache.h"

namespace folio::engine {
namespace {

// Same bound as tests/model/qwen2_test.cpp (measured 1.1e-5 at fast precision).
constexpr double kMaxAbs = 5e-5;

std::string data_path(const std::string& file) {
  const char* env = std::getenv("FOLIO_SOURCE_DIR");
  return std::string(env != nullptr && *env != '\0' ? env : FOLIO_SOURCE_DIR) +
         "/tests/data/model/" + file;
}

struct Case {
  std::vector<TokenId> ids;
  std::vector<std::vector<float>> logits;  // per position, HF fp32
};

std::vector<Case> hf_cases() {
  std::ifstream in(data_path("qwen2-tiny.json"));
  const nlohmann::json j = nlohmann::json::parse(in);
  std::vector<Case> out;
  for (const auto& jc : j.at("cases"))
    out.push_back({jc.at("ids").get<std::vector<TokenId>>(),
                   jc.at("logits").get<std::vector<std::vector<float>>>()});
  return out;
}

sched::ScheduledRequest entry(std::uint64_t seq, const std::vector<TokenId>& ids,
                              std::int32_t start, std::int32_t count, std::int32_t num_logits,
                              std::vector<kv::BlockId> blocks, std::int32_t blocks_from) {
  sched::ScheduledRequest s;
  s.id = kv::SeqId{seq};
  s.start_pos = start;
  s.tokens.assign(ids.begin() + start, ids.begin() + start + count);
  s.tables = {{0, blocks_from, std::move(blocks)}};
  s.num_logits = num_logits;
  s.num_samples = num_logits > 0 ? 1 : 0;
  return s;
}

// Compares `rows` logit rows starting at `at` with HF's rows for `first`.. of `c`.
void expect_rows(std::span<const float> logits, std::size_t at, const Case& c, std::size_t first,
                 std::size_t rows) {
  const std::size_t vocab = c.logits[0].size();
  double worst = 0;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t v = 0; v < vocab; ++v)
      worst =
          std::max(worst, std::abs(double{logits[(at + r) * vocab + v]} - c.logits[first + r][v]));
  EXPECT_LT(worst, kMaxAbs) << "rows " << first << ".." << first + rows - 1;
}

TEST(PagedModelRunner, SeveralLogitRowsPerEntryMatchHf) {
  const auto cases = hf_cases();
  const Case& a = cases.at(0);  // 24 tokens
  const Case& b = cases.at(2);  // 7 tokens
  ASSERT_EQ(a.ids.size(), 24u);
  ASSERT_EQ(b.ids.size(), 7u);
  const auto file = gguf::GgufFile::open(data_path("qwen2-tiny.gguf"));
  const model::Model m = model::Model::load(file);
  PagedModelRunner runner(m, 2);
  EXPECT_EQ(runner.vocab_size(), static_cast<std::int32_t>(a.logits[0].size()));
  EXPECT_EQ(runner.init_kv({16, 4, kernels::KvDtype::kF32}),
            16 * runner.kv_bytes_per_block(4, kernels::KvDtype::kF32));

  // Step 1, one plan: a's first 16 positions (blocks 0-3) with rows for the
  // last 4; all of b with a row per position; a 5-token chunk of b as a
  // third sequence with no rows.
  sched::SchedulerOutput p1;
  p1.step = 1;
  p1.requests.push_back(entry(1, a.ids, 0, 16, 4, {0, 1, 2, 3}, 0));
  p1.requests.push_back(entry(2, b.ids, 0, 7, 7, {4, 5}, 0));
  p1.requests.push_back(entry(3, b.ids, 0, 5, 0, {6, 7}, 0));
  const RunnerOutput o1 = runner.execute(p1);
  ASSERT_EQ(o1.logits.size(), (4 + 7) * a.logits[0].size());
  expect_rows(o1.logits, 0, a, 12, 4);
  expect_rows(o1.logits, 4, b, 0, 7);

  // Step 2: a continues over its blocks with two more (delta from 4): 8
  // tokens, all 8 rows; sequence 2 finished, sequence 3 continues (no rows).
  sched::SchedulerOutput p2;
  p2.step = 2;
  p2.finished_ids = {kv::SeqId{2}};
  p2.requests.push_back(entry(1, a.ids, 16, 8, 8, {8, 9}, 4));
  p2.requests.push_back(entry(3, b.ids, 5, 2, 1, {}, 2));
  const RunnerOutput o2 = runner.execute(p2);
  ASSERT_EQ(o2.logits.size(), (8 + 1) * a.logits[0].size());
  expect_rows(o2.logits, 0, a, 16, 8);
  expect_rows(o2.logits, 8, b, 6, 1);
  ASSERT_NE(runner.cache(), nullptr);
  EXPECT_EQ(runner.cache()->table(kv::SeqId{2}), nullptr);  // its table is gone
  EXPECT_EQ(runner.cache()->table(kv::SeqId{1})->size(), 6u);
}

// Mean pooling: a prompt pooled in two chunks (beside another pooled
// sequence and one that is not) sums to what it pools in one step, and
// pooling leaves the logits as they were.
TEST(PagedModelRunner, PooledSumsAddUpOverChunksInPlanOrder) {
  const auto cases = hf_cases();
  const Case& a = cases.at(0);  // 24 tokens
  const Case& b = cases.at(2);  // 7 tokens
  const auto file = gguf::GgufFile::open(data_path("qwen2-tiny.gguf"));
  const model::Model m = model::Model::load(file);
  PagedModelRunner runner(m, 2);
  const auto width = static_cast<std::size_t>(runner.hidden_size());
  ASSERT_EQ(width, m.config().n_embd);
  runner.init_kv({32, 4, kernels::KvDtype::kF32});

  sched::SchedulerOutput p1;
  p1.requests.push_back(entry(1, a.ids, 0, 24, 1, {0, 1, 2, 3, 4, 5}, 0));
  p1.requests.back().pool = true;
  const RunnerOutput o1 = runner.execute(p1);
  ASSERT_EQ(o1.pooled.size(), width);
  expect_rows(o1.logits, 0, a, 23, 1);
  const std::vector<float> whole(o1.pooled.begin(), o1.pooled.end());

  sched::SchedulerOutput p2;
  p2.step = 1;
  p2.requests.push_back(entry(2, a.ids, 0, 10, 0, {6, 7, 8}, 0));
  p2.requests.back().pool = true;
  p2.requests.push_back(entry(3, b.ids, 0, 7, 1, {9, 10}, 0));
  p2.requests.push_back(entry(4, b.ids, 0, 7, 1, {11, 12}, 0));
  p2.requests.back().pool = true;
  const RunnerOutput o2 = runner.execute(p2);
  ASSERT_EQ(o2.pooled.size(), 2 * width);
  const std::vector<float> first(o2.pooled.begin(), o2.pooled.begin() + static_cast<long>(width));
  double b_norm = 0;
  for (std::size_t c = 0; c < width; ++c) b_norm += std::abs(o2.pooled[width + c]);
  EXPECT_GT(b_norm, 0);

  sched::SchedulerOutput p3;
  p3.step = 2;
  p3.requests.push_back(entry(2, a.ids, 10, 14, 1, {13, 14, 15}, 3));
  p3.requests.back().pool = true;
  const RunnerOutput o3 = runner.execute(p3);
  ASSERT_EQ(o3.pooled.size(), width);
  expect_rows(o3.logits, 0, a, 23, 1);
  double worst = 0, scale = 0;
  for (std::size_t c = 0; c < width; ++c) {
    worst = std::max(worst, std::abs(double{first[c]} + o3.pooled[c] - whole[c]));
    scale = std::max(scale, std::abs(double{whole[c]}));
  }
  EXPECT_LT(worst, 1e-4 * std::max(scale, 1.0)) << "largest |value| " << scale;
}

// The largest difference between the K rows (layer 0) `cache` holds for
// `seq` at positions [0, n) and those the model computes for tokens[0, n)
// in one forward through a contiguous f16 cache.
double k_rows_error(const model::Model& m, const PagedKvCache& cache, kv::SeqId seq,
                    const std::vector<TokenId>& tokens, std::size_t n) {
  model::ContiguousKvCache ref(m.config(), 1, n, kernels::KvDtype::kF16);
  model::Workspace ws;
  kernels::ThreadPool pool(1);
  model::Batch b;
  for (std::size_t i = 0; i < n; ++i) b.add(tokens[i], static_cast<std::int32_t>(i), 0, i + 1 == n);
  m.forward(b, ref, ws, pool);
  std::vector<kernels::KvPage> pages;
  ref.pages(0, 0, n, pages);
  const std::size_t heads = m.config().layers[0].n_head_kv;
  const std::size_t dim = m.config().head_dim_k;
  const std::size_t head_bytes = kernels::kv_head_bytes(kernels::KvDtype::kF16, dim);
  double worst = 0;
  std::vector<float> want(heads * dim);
  for (std::size_t p = 0; p < n; ++p) {
    const auto* row = static_cast<const std::byte*>(pages[0].k) + p * heads * head_bytes;
    for (std::size_t h = 0; h < heads; ++h)
      kernels::kv_load_head(kernels::KvDtype::kF16, row + h * head_bytes, dim, &want[h * dim]);
    const std::vector<float> got = cache.k_row(0, seq, p);
    for (std::size_t i = 0; i < want.size(); ++i)
      worst = std::max(worst, std::abs(double{got[i]} - want[i]));
  }
  return worst;
}

// `catch_up_rows`: the draft's catch-up chunk (5: round 1's 16 positions
// catch up as 0-4, 5-9, then 10-15 with the first draft).
void expect_draft_model_drafts_greedily(std::int32_t catch_up_rows) {
  SCOPED_TRACE("catch-up chunk " + std::to_string(catch_up_rows));
  const auto cases = hf_cases();
  const Case& a = cases.at(0);  // 24 tokens
  const auto file = gguf::GgufFile::open(data_path("qwen2-tiny.gguf"));
  const model::Model m = model::Model::load(file);
  const model::Model draft = model::Model::load(file);
  PagedModelRunner runner(m, 2);
  const std::int64_t target_block = runner.kv_bytes_per_block(4, kernels::KvDtype::kF16);
  runner.enable_draft_model(draft, 0, catch_up_rows);
  EXPECT_EQ(runner.kv_bytes_per_block(4, kernels::KvDtype::kF16), 2 * target_block);
  EXPECT_EQ(runner.init_kv({16, 4, kernels::KvDtype::kF16}), 16 * 2 * target_block);

  // The target computes positions 0-15; blocks 0-7 leave room for drafts.
  sched::SchedulerOutput p1;
  p1.requests.push_back(entry(1, a.ids, 0, 16, 1, {0, 1, 2, 3, 4, 5, 6, 7}, 0));
  runner.execute(p1);
  const DraftKvCache& dkv = *runner.draft_cache();
  const kv::SeqId id{1};
  EXPECT_EQ(dkv.covered(id), 0);  // lazily: nothing until it drafts

  std::vector<TokenId> seq(a.ids.begin(), a.ids.begin() + 17);
  // Drafts k tokens after seq (its newest token has no K/V) and checks them
  // against the model's own greedy continuation.
  auto expect_drafts = [&](std::int32_t k) {
    DraftRequest r{id, seq, k, {}, 0};
    runner.draft(std::span<DraftRequest>(&r, 1));
    EXPECT_EQ(r.out, testing::greedy_after(m, seq, k)) << "after " << seq.size() << " tokens";
    EXPECT_EQ(dkv.covered(id), static_cast<std::int32_t>(seq.size()) - 1);
    // What the draft counts as its K/V is that of these tokens.
    EXPECT_LT(k_rows_error(draft, dkv.kv(), id, seq, seq.size() - 1), 1e-2)
        << "after " << seq.size() << " tokens";
    return r.out;
  };
  // Round 1: the newest token a[16] at 16; the draft catches up on 0-15.
  const auto d1 = expect_drafts(3);
  // Round 2: two drafts accepted, then the target's own token at 19; the
  // draft's K/V at 16-18 (a[16], d1[0], d1[1]) becomes final.
  seq.insert(seq.end(), {d1[0], d1[1], 7});
  const auto d2 = expect_drafts(3);
  // Round 3: all three accepted, then a bonus token: the draft never had
  // K/V for its last draft (22), so it catches up on it.
  seq.insert(seq.end(), {d2[0], d2[1], d2[2], 9});
  const auto d3 = expect_drafts(3);
  // Round 4: the tokens differ from the drafts below the computed length
  // (at 25): the draft's K/V there is not taken.
  seq.insert(seq.end(), {d3[0], d3[1] == 5 ? 6 : 5, 11});
  ASSERT_NE(seq[25], d3[1]);
  expect_drafts(3);
}

TEST(PagedModelRunner, DraftModelCatchesUpAndDraftsGreedily) {
  expect_draft_model_drafts_greedily(PagedModelRunner::kDefaultCatchUpRows);
  expect_draft_model_drafts_greedily(5);
}

// A draft token's cost against a target step, resolved from weight bytes:
// the same model as its own draft costs a whole step; one of its two layers
// costs the head plus that layer.
TEST(PagedModelRunner, SpeculationResolvesTheDraftCost) {
  const auto file = gguf::GgufFile::open(data_path("qwen2-tiny.gguf"));
  const model::Model m = model::Model::load(file);
  const std::size_t all = m.forward_weight_bytes();
  const std::size_t one = m.forward_weight_bytes(std::vector<std::size_t>{0});
  ASSERT_GT(all, one);
  PagedModelRunner a(m, 1);
  auto c = a.configure_speculation(
      spec::parse_speculative_config(R"({"method": "draft_model", "model": "x",)"
                                     R"( "num_speculative_tokens": 2})"),
      &m);
  EXPECT_FLOAT_EQ(c.draft_cost, 1.0f);
  PagedModelRunner b(m, 1);
  c = b.configure_speculation(spec::parse_speculative_config(
      R"({"method": "layer_skip", "num_layers": 1, "num_speculative_tokens": 2})"));
  EXPECT_FLOAT_EQ(c.draft_cost, static_cast<float>(static_cast<double>(one) / all));
  PagedModelRunner d(m, 1);
  c = d.configure_speculation(spec::parse_speculative_config(
      R"({"method": "layer_skip", "num_speculative_tokens": 2, "draft_cost": 0.25})"));
  EXPECT_FLOAT_EQ(c.draft_cost, 0.25f);  // given: kept
}

}  // namespace
}  // namespace folio::engine
