// tests/engine/draft_kv_cache_test.cpp: what the draft model's K/V holds,
// per block, as plans come (no model): fresh blocks start empty, prefix
// hits and forks keep what another sequence's draft wrote, COW copies carry
// it, tentative K/V counts only once the target computed the same tokens,
// and a finished sequence's record goes with it.
#include "engine/draft_kv_cache.h"

#include <gtest/gtest.h>

namespace folio::engine {
namespace {

model::ModelConfig tiny_config() {
  model::ModelConfig c;
  c.n_layer = 1;
  c.head_dim_k = c.head_dim_v = 4;
  c.layers = {{.n_head = 1, .n_head_kv = 1, .n_ff = 8, .sliding = false}};
  return c;
}

sched::ScheduledRequest entry(std::uint64_t seq, std::int32_t start, std::int32_t count,
                              std::vector<kv::BlockId> blocks, std::int32_t blocks_from) {
  sched::ScheduledRequest s;
  s.id = kv::SeqId{seq};
  s.start_pos = start;
  s.tokens.assign(static_cast<std::size_t>(count), 1);
  s.tables = {{0, blocks_from, std::move(blocks)}};
  s.num_logits = 1;
  return s;
}

std::vector<TokenId> iota_tokens(std::int32_t n) {
  std::vector<TokenId> t;
  for (std::int32_t i = 0; i < n; ++i) t.push_back(100 + i);
  return t;
}

constexpr kv::SeqId kA{1}, kB{2}, kC{3}, kD{4};

TEST(DraftKvCache, FollowsPlansBlockByBlock) {
  DraftKvCache d(tiny_config(), 8, 4, kernels::KvDtype::kF16);
  // A: 6 prompt tokens in blocks 0-1; the draft has nothing yet.
  sched::SchedulerOutput p1;
  p1.requests.push_back(entry(1, 0, 6, {0, 1}, 0));
  d.apply(p1);
  EXPECT_EQ(d.covered(kA), 0);
  // A drafts: catches up on 0-5 (final), writes 6-8 ahead (tentative).
  auto toks = iota_tokens(7);
  EXPECT_EQ(d.sync(kA, toks, 6), 0);
  d.mark(kA, 0, 6);
  d.record_ahead(kA, 6, std::vector<TokenId>{toks[6], 200, 201});
  EXPECT_EQ(d.covered(kA), 6);
  EXPECT_EQ(d.valid(0), 4);
  EXPECT_EQ(d.valid(1), 2);
  EXPECT_DEATH(d.mark(kA, 7, 8), "past a gap");

  // The verifying step grows A into block 2 (fresh); the target accepted
  // the first draft (200) and put its own token (300) at 8.
  sched::SchedulerOutput p2;
  p2.requests.push_back(entry(1, 6, 4, {2}, 2));
  d.apply(p2);
  toks.insert(toks.end(), {200, 300});
  EXPECT_EQ(d.sync(kA, toks, 8), 8);  // 6 (its newest then) and 7 (200) confirmed
  EXPECT_EQ(d.valid(1), 4);
  EXPECT_EQ(d.valid(2), 0);
  // A record is used once: a second sync finds nothing more.
  EXPECT_EQ(d.sync(kA, toks, 8), 8);

  // B hits A's first block in the prefix cache: keeps it; its new block 3
  // is fresh.
  sched::SchedulerOutput p3;
  p3.requests.push_back(entry(2, 4, 3, {0, 3}, 0));
  d.apply(p3);
  EXPECT_EQ(d.covered(kB), 4);

  // C forks from A (A's whole table, at A's computed length 8), then
  // copies block 2 before writing into it: valid travels with the copy.
  d.mark(kA, 8, 10);
  EXPECT_EQ(d.valid(2), 2);
  sched::SchedulerOutput p4;
  p4.requests.push_back(entry(3, 10, 1, {0, 1, 2}, 0));
  d.apply(p4);
  EXPECT_EQ(d.covered(kC), 10);
  sched::SchedulerOutput p5;
  p5.requests.push_back(entry(3, 10, 1, {4}, 2));
  p5.cow_copies.push_back({2, 4});
  d.apply(p5);
  EXPECT_EQ(d.valid(4), 2);
  EXPECT_EQ(d.covered(kC), 10);

  // Tentative K/V the target did not confirm (another token at 10) is not
  // marked.
  d.record_ahead(kC, 10, std::vector<TokenId>{50, 51});
  auto ctoks = iota_tokens(10);
  ctoks.insert(ctoks.end(), {49, 52});
  EXPECT_EQ(d.sync(kC, ctoks, 11), 10);

  // A finishes; its block 1 is reused by D from position 0: fresh.
  d.record_ahead(kA, 10, std::vector<TokenId>{1, 2});
  sched::SchedulerOutput p6;
  p6.finished_ids = {kA};
  p6.requests.push_back(entry(4, 0, 4, {1}, 0));
  d.apply(p6);
  EXPECT_EQ(d.valid(1), 0);
  EXPECT_EQ(d.covered(kD), 0);
  EXPECT_DEATH(d.covered(kA), "no block table");  // its table is gone
}

}  // namespace
}  // namespace folio::engine
