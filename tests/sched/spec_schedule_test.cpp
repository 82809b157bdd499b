// Speculative tokens in the one scheduling rule, step by step: drafts ride on
// a decode (budget, KV slots, logit rows), the accepted ones advance
// num_computed_tokens and the rejected ones give their blocks back; the
// budget and max_tokens trim them; a stop inside an accepted run ends the
// output there; unverified tokens never enter the prefix cache; and under
// preemption and prefix hits, outputs with drafts (right or wrong) equal the
// fake model's greedy reference.
#include <gtest/gtest.h>

#include <random>

#include "harness.h"

namespace folio::sched::testing {
namespace {

using V = std::vector<kv::BlockId>;

SchedulerConfig cfg(std::int32_t budget, std::int32_t seqs = 8, std::int32_t max_len = 64) {
  return {budget, seqs, max_len, SchedulingPolicy::kFcfs};
}

// The fake model's next `n` greedy tokens after `tokens`.
std::vector<TokenId> future(std::vector<TokenId> tokens, int n) {
  std::vector<TokenId> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(fake_next(tokens, 0));
    tokens.push_back(out.back());
  }
  return out;
}

TEST(SpecSchedule, AcceptedDraftsAdvanceAndRejectedOnesReleaseTheirBlocks) {
  Harness h(cfg(16), {32, 4, true, nullptr});
  const auto prompt = prompt_of(1, 6);
  const SeqId a = h.sched.add_request(spec(prompt, 10));
  h.step();  // prefill: 6 positions, the first output
  const Request* r = h.sched.find(a);
  ASSERT_EQ(r->num_tokens(), 7);
  auto d = future(r->tokens, 3);
  d[1] += 1;  // the second draft is wrong
  ASSERT_TRUE(h.sched.set_spec_tokens(a, d));

  const SchedulerOutput p = h.step();
  ASSERT_EQ(p.requests.size(), 1u);
  const ScheduledRequest& s = p.requests[0];
  EXPECT_EQ(s.start_pos, 6);
  EXPECT_EQ(s.num_tokens(), 4);  // the last output + 3 drafts
  EXPECT_EQ(s.num_spec, 3);
  EXPECT_EQ(s.num_logits, 4);
  EXPECT_EQ(p.total_tokens, 4);
  EXPECT_EQ(s.tables[0].block_ids,
            (V{2}));  // positions 6..9: block 1 has room for 6, 7; block 2 is new
  // One draft accepted + the target's correction: 3 outputs, 8 computed,
  // and block 2 (positions 8..11, drafts only) is free again.
  EXPECT_EQ(r->num_output_tokens(), 3);
  EXPECT_EQ(r->num_computed_tokens, 8);
  EXPECT_EQ(h.sched.kv().table(a)->blocks, (V{0, 1}));
  EXPECT_EQ(h.sched.kv().stats().blocks_used, 2);
  EXPECT_TRUE(r->spec_tokens.empty());

  h.run_to_completion();
  EXPECT_EQ(h.out[a].tokens, reference_output(prompt, 10, 0, never_stop));
  EXPECT_EQ(h.out[a].finish, FinishReason::kLength);
}

TEST(SpecSchedule, BudgetAndMaxTokensTrimTheDrafts) {
  Harness h(cfg(3), {32, 4, true, nullptr});
  const SeqId a = h.sched.add_request(spec(prompt_of(1, 3), 4));
  h.step();
  const Request* r = h.sched.find(a);
  ASSERT_TRUE(h.sched.set_spec_tokens(a, future(r->tokens, 5)));
  auto p = h.step();  // budget 3: the decode + 2 drafts
  EXPECT_EQ(p.requests[0].num_spec, 2);
  // All accepted + the target's token: 1 + 3 = max_tokens, so the request finished (and is gone).
  EXPECT_EQ(h.sched.find(a), nullptr);
  EXPECT_EQ(h.out[a].tokens, reference_output(prompt_of(1, 3), 4, 0, never_stop));
  EXPECT_EQ(h.out[a].finish, FinishReason::kLength);

  Harness g(cfg(16), {32, 4, true, nullptr});
  const SeqId b = g.sched.add_request(spec(prompt_of(1, 3), 3));
  g.step();
  ASSERT_TRUE(g.sched.set_spec_tokens(b, future(g.sched.find(b)->tokens, 5)));
  p = g.step();  // 2 outputs left: one draft, whose row yields the last token
  EXPECT_EQ(p.requests[0].num_spec, 1);
  EXPECT_EQ(g.out[b].tokens, reference_output(prompt_of(1, 3), 3, 0, never_stop));
  EXPECT_EQ(g.out[b].finish, FinishReason::kLength);
}

TEST(SpecSchedule, AStopInsideAnAcceptedRunEndsTheOutputThere) {
  const auto prompt = prompt_of(1, 5);
  const auto ref = reference_output(prompt, 8, 0, never_stop);
  const TokenId stop_at = ref[2];  // the second draft below
  Harness h(cfg(16), {32, 4, true, nullptr},
            [&](TokenId t) { return t == stop_at ? FinishReason::kStop : FinishReason::kNone; });
  const SeqId a = h.sched.add_request(spec(prompt, 8));
  h.step();
  ASSERT_TRUE(h.sched.set_spec_tokens(a, future(h.sched.find(a)->tokens, 4)));
  const auto p = h.step();
  EXPECT_EQ(p.requests[0].num_spec, 4);
  EXPECT_EQ(h.out[a].tokens, (std::vector<TokenId>{ref[0], ref[1], ref[2]}));
  EXPECT_EQ(h.out[a].finish, FinishReason::kStop);
  EXPECT_EQ(h.sched.find(a), nullptr);
  EXPECT_EQ(h.sched.kv().stats().blocks_used, 0);
}

TEST(SpecSchedule, UnverifiedTokensNeverEnterThePrefixCache) {
  Harness h(cfg(16), {32, 4, true, nullptr});
  const auto prompt = prompt_of(1, 4);
  const SeqId a = h.sched.add_request(spec(prompt, 6));
  h.step();  // block 0 full and cached; the first output at position 4
  const Request* r = h.sched.find(a);
  std::vector<TokenId> wrong = future(r->tokens, 4);
  for (TokenId& t : wrong) t = t % (kVocab - 2) + 1 == t ? t + 1 : t % (kVocab - 2) + 1;
  ASSERT_NE(wrong[0], future(r->tokens, 1)[0]);
  ASSERT_TRUE(h.sched.set_spec_tokens(a, wrong));
  h.step();  // positions 4..8 written (block 1 filled with o1 + 3 drafts), none accepted
  EXPECT_EQ(r->num_computed_tokens, 5);
  // A prompt equal to what block 1 holds must hit block 0 only.
  std::vector<TokenId> probe = prompt;
  probe.push_back(r->tokens[4]);
  probe.insert(probe.end(), wrong.begin(), wrong.begin() + 3);
  probe.push_back(7);
  const SeqId b = h.sched.add_request(spec(probe, 1));
  h.step();
  EXPECT_EQ(h.out[b].tokens.size(), 1u);
  EXPECT_EQ(h.sched.kv().stats().prefix_hit_tokens, 4);
  h.run_to_completion();
  EXPECT_EQ(h.out[a].tokens, reference_output(prompt, 6, 0, never_stop));
}

TEST(SpecSchedule, DraftsOnlyForCaughtUpSingleSampleSequences) {
  Harness h(cfg(4), {32, 4, true, nullptr});
  const SeqId a = h.sched.add_request(spec(prompt_of(1, 9), 4));
  EXPECT_FALSE(h.sched.set_spec_tokens(a, {1, 2}));  // waiting
  h.step();                                          // a chunk of the prompt
  EXPECT_FALSE(h.sched.set_spec_tokens(a, {1, 2}));  // not caught up
  const SeqId b = h.sched.add_request(spec(prompt_of(50, 2), 4, 0, 0, /*n=*/2));
  h.run_to_completion();
  EXPECT_FALSE(h.sched.set_spec_tokens(b, {1}));  // finished
}

// Many requests through a small pool (preemption), with shared prefixes
// (prefix hits) and n = 2 forks, every caught-up sequence speculating with
// drafts that are right most of the time: every output is the reference.
TEST(SpecSchedule, RandomDraftsUnderPreemptionMatchTheReference) {
  for (int trial = 0; trial < 4; ++trial) {
    Harness h(cfg(12, 6, 64), {10, 4, true, nullptr});
    std::mt19937 rng(static_cast<unsigned>(trial));
    h.drafts = [&](const Request& r) {
      auto d = future(r.tokens, 1 + static_cast<int>(rng() % 5));
      for (TokenId& t : d)
        if (rng() % 4 == 0) t = t % (kVocab - 2) + 1;  // wrong (a different id)
      return d;
    };
    struct Job {
      SeqId id;
      std::vector<TokenId> prompt;
      std::int32_t max_tokens, n;
    };
    std::vector<Job> jobs;
    const auto shared = prompt_of(300, 6);
    for (int i = 0; i < 14; ++i) {
      std::vector<TokenId> p = i % 2 == 0 ? shared : std::vector<TokenId>{};
      const auto tail = prompt_of(static_cast<TokenId>(10 + 20 * i), 3 + i % 4);
      p.insert(p.end(), tail.begin(), tail.end());
      const std::int32_t max_tokens = 6 + i % 9, n = i % 5 == 0 ? 2 : 1;
      jobs.push_back({h.sched.add_request(spec(p, max_tokens, i, 0, n)), p, max_tokens, n});
      if (i % 3 == 2) h.step();
    }
    h.run_to_completion();
    for (const Job& j : jobs) {
      EXPECT_EQ(h.out[j.id].tokens, reference_output(j.prompt, j.max_tokens, 0, never_stop));
      if (j.n == 2) {
        bool found = false;
        for (const auto& [id, c] : h.out) {
          if (c.parent_id != j.id || id == j.id) continue;
          found = true;
          EXPECT_EQ(c.tokens, reference_output(j.prompt, j.max_tokens, 1, never_stop));
        }
        EXPECT_TRUE(found);
      }
    }
    EXPECT_GT(h.sched.num_preemptions(), 0) << "trial " << trial << ": the pool was never short";
    EXPECT_EQ(h.sched.kv().stats().blocks_used, 0);
    EXPECT_EQ(h.sched.kv().stats().live_tokens, 0);
  }
}

}  // namespace
}  // namespace folio::sched::testing

namespace folio::sched::testing {
namespace {

// num_lookahead_tokens: a caught-up request keeps that many slots reserved
// past its tokens (a model drafter writes there); rejected drafts shrink the
// table back to verified + lookahead; a fork's child does not share the
// parent's lookahead blocks; lookahead is dropped before anyone is preempted.
TEST(SpecSchedule, LookaheadSlotsForAModelDrafter) {
  SchedulerConfig c = cfg(16);
  c.num_lookahead_tokens = 3;
  Harness h(c, {32, 4, true, nullptr});
  const SeqId a = h.sched.add_request(spec(prompt_of(1, 6), 10));
  h.step();  // prefill 6 + lookahead 3: 9 slots
  EXPECT_EQ(h.sched.kv().table(a)->num_slots, 9);
  EXPECT_EQ(h.sched.kv().table(a)->blocks, (V{0, 1, 2}));
  auto d = future(h.sched.find(a)->tokens, 3);
  d[0] += 1;  // rejected at once
  ASSERT_TRUE(h.sched.set_spec_tokens(a, d));
  h.step();  // positions 6..9 + 3 ahead reserved, then back to 7 + 3
  EXPECT_EQ(h.sched.find(a)->num_computed_tokens, 7);
  EXPECT_EQ(h.sched.kv().table(a)->num_slots, 10);
  EXPECT_EQ(h.sched.kv().table(a)->blocks.size(), 3u);

  const SeqId b = h.sched.add_request(spec(prompt_of(40, 4), 4, 1, 0, /*n=*/2));
  h.step();  // b's prompt: 4 + 3 ahead (blocks x, y), then the fork
  SeqId child;
  for (const auto& [id, col] : h.out)
    if (col.parent_id == b && id != b) child = id;
  ASSERT_TRUE(child.valid());
  EXPECT_EQ(h.sched.kv().table(child)->num_slots, 4);  // computed only
  ASSERT_EQ(h.sched.kv().table(child)->blocks.size(), 1u);
  ASSERT_EQ(h.sched.kv().table(b)->blocks.size(), 2u);
  EXPECT_EQ(h.sched.kv().pool().ref_count(h.sched.kv().table(b)->blocks[1]), 1);
  h.run_to_completion();
  EXPECT_EQ(h.out[a].tokens, reference_output(prompt_of(1, 6), 10, 0, never_stop));
  EXPECT_EQ(h.sched.kv().stats().blocks_used, 0);

  // A pool with room for the tokens but not the lookahead: no preemption.
  Harness g(c, {2, 4, true, nullptr});
  g.sched.add_request(spec(prompt_of(1, 7), 2));
  g.run_to_completion();
  EXPECT_EQ(g.sched.num_preemptions(), 0);
}

}  // namespace
}  // namespace folio::sched::testing
