// Scheduler unit tests, step by step with exact token counts and block ids:
// chunked prefill, decode-first budgeting, prefix hits on admission,
// preemption by recompute and resumption, the priority policy, aborts,
// n > 1 forks with copy-on-write, seat accounting and rejection of requests
// that can never run. Outputs are checked against the fake model's
// reference computed straight from the tokens.
#include <gtest/gtest.h>

#include "base/error.h"
#include "harness.h"

namespace folio::sched::testing {
namespace {

using V = std::vector<kv::BlockId>;

struct Entry {
  SeqId id;
  std::int32_t start;
  std::int32_t n;
  bool sample;
  bool operator==(const Entry&) const = default;
};
std::vector<Entry> entries(const SchedulerOutput& p) {
  std::vector<Entry> e;
  for (const auto& s : p.requests) e.push_back({s.id, s.start_pos, s.num_tokens(), s.sample()});
  return e;
}
std::ostream& operator<<(std::ostream& os, const Entry& e) {
  return os << "{" << e.id << " @" << e.start << " +" << e.n << (e.sample ? " S" : "") << "}";
}

SchedulerConfig cfg(std::int32_t budget, std::int32_t seqs = 8, std::int32_t max_len = 64,
                    SchedulingPolicy policy = SchedulingPolicy::kFcfs) {
  return {budget, seqs, max_len, policy};
}
kv::KvCacheConfig kvc(std::int32_t blocks, std::int32_t bs = 4, bool caching = true) {
  return {blocks, bs, caching, nullptr};
}

TEST(Scheduler, ChunkedPrefillTokenCountsStepByStep) {
  Harness h(cfg(8), kvc(32));
  const auto pa = prompt_of(1, 20);
  SeqId a = h.sched.add_request(spec(pa, 3, 0));
  auto p1 = h.step();
  EXPECT_EQ(entries(p1), (std::vector<Entry>{{a, 0, 8, false}}));
  EXPECT_EQ(p1.requests[0].tables[0].block_ids, (V{0, 1}));
  auto p2 = h.step();
  EXPECT_EQ(entries(p2), (std::vector<Entry>{{a, 8, 8, false}}));
  EXPECT_EQ(p2.requests[0].tables[0].blocks_from, 2);
  EXPECT_EQ(p2.requests[0].tables[0].block_ids, (V{2, 3}));

  const auto pb = prompt_of(100, 10);
  SeqId b = h.sched.add_request(spec(pb, 2, 1));
  auto p3 = h.step();  // A's last chunk, then B's first chunk in the rest of the budget
  EXPECT_EQ(entries(p3), (std::vector<Entry>{{a, 16, 4, true}, {b, 0, 4, false}}));
  EXPECT_EQ(p3.requests[0].tables[0].block_ids, (V{4}));
  EXPECT_EQ(p3.requests[1].tables[0].block_ids, (V{5}));
  EXPECT_EQ(p3.total_tokens, 8);
  auto p4 = h.step();  // A decodes, B finishes its prompt
  EXPECT_EQ(entries(p4), (std::vector<Entry>{{a, 20, 1, true}, {b, 4, 6, true}}));
  auto p5 = h.step();
  EXPECT_EQ(entries(p5), (std::vector<Entry>{{a, 21, 1, true}, {b, 10, 1, true}}));
  EXPECT_FALSE(h.sched.has_unfinished());
  EXPECT_EQ(h.out[a].tokens, reference_output(pa, 3, 0, never_stop));
  EXPECT_EQ(h.out[a].finish, FinishReason::kLength);
  EXPECT_EQ(h.out[b].tokens, reference_output(pb, 2, 0, never_stop));
  auto p6 = h.step();
  EXPECT_TRUE(p6.requests.empty());
  EXPECT_EQ(p6.finished_ids, (std::vector<SeqId>{a, b}));
  EXPECT_EQ(h.sched.kv().stats().blocks_used, 0);
}

TEST(Scheduler, DecodesKeepFlowingWhileAnOlderPromptIsChunked) {
  Harness h(cfg(8), kvc(32));
  SeqId a = h.sched.add_request(spec(prompt_of(1, 3), 10, 5.0));
  h.step();
  // C arrived earlier (ranks before A) but A, decoding, is served first.
  SeqId c = h.sched.add_request(spec(prompt_of(200, 40), 2, 1.0));
  auto p2 = h.step();
  EXPECT_EQ(entries(p2), (std::vector<Entry>{{a, 3, 1, true}, {c, 0, 7, false}}));
  for (int i = 0; i < 4; ++i) {
    auto p = h.step();
    ASSERT_EQ(p.requests.size(), 2u);
    EXPECT_EQ(p.requests[0].id, a);
    EXPECT_EQ(p.requests[0].num_tokens(), 1);
    EXPECT_EQ(p.requests[1].id, c);
    EXPECT_EQ(p.requests[1].num_tokens(), 7);
    EXPECT_LE(p.total_tokens, 8);
  }
  h.run_to_completion();
  EXPECT_EQ(h.out[c].tokens, reference_output(prompt_of(200, 40), 2, 0, never_stop));
}

// --long-prefill-token-threshold: each prompt computes at most 5 tokens per
// step even with budget to spare, decodes are unaffected, and the outputs
// are those of the unchunked run.
TEST(Scheduler, LongPrefillThresholdCapsEachPromptsChunk) {
  SchedulerConfig c = cfg(64);
  c.long_prefill_token_threshold = 5;
  Harness h(c, kvc(32));
  const auto pa = prompt_of(1, 12), pb = prompt_of(50, 3);
  SeqId a = h.sched.add_request(spec(pa, 3, 0));
  SeqId b = h.sched.add_request(spec(pb, 4, 1));
  EXPECT_EQ(entries(h.step()), (std::vector<Entry>{{a, 0, 5, false}, {b, 0, 3, true}}));
  EXPECT_EQ(entries(h.step()), (std::vector<Entry>{{b, 3, 1, true}, {a, 5, 5, false}}));
  EXPECT_EQ(entries(h.step()), (std::vector<Entry>{{b, 4, 1, true}, {a, 10, 2, true}}));
  h.run_to_completion();
  EXPECT_EQ(h.out[a].tokens, reference_output(pa, 3, 0, never_stop));
  EXPECT_EQ(h.out[b].tokens, reference_output(pb, 4, 0, never_stop));
  SchedulerConfig bad = cfg(8);
  bad.long_prefill_token_threshold = -1;
  EXPECT_THROW(Scheduler(bad, kvc(8)), Error);
}

TEST(Scheduler, PrefixHitsCountAsComputedOnAdmission) {
  for (bool caching : {true, false}) {
    Harness h(cfg(64), kvc(32, 4, caching));
    SeqId a = h.sched.add_request(spec(prompt_of(1, 12), 1, 0));
    h.step();  // computes 12 tokens, samples once, finishes
    EXPECT_FALSE(h.sched.has_unfinished());
    auto pb = prompt_of(1, 10);
    pb.push_back(500);
    pb.push_back(501);
    SeqId b = h.sched.add_request(spec(pb, 2, 1));
    auto p = h.step();
    ASSERT_EQ(p.requests.size(), 1u);
    if (caching) {
      EXPECT_EQ(entries(p), (std::vector<Entry>{{b, 8, 4, true}}));
      EXPECT_EQ(p.requests[0].tables[0].block_ids, (V{0, 1, 3}));
      EXPECT_EQ(h.sched.kv().stats().prefix_query_tokens, 24);
      EXPECT_EQ(h.sched.kv().stats().prefix_hit_tokens, 8);
    } else {
      EXPECT_EQ(entries(p), (std::vector<Entry>{{b, 0, 12, true}}));
      EXPECT_EQ(h.sched.kv().stats().prefix_hit_tokens, 0);
    }
    h.run_to_completion();
    EXPECT_EQ(h.out[a].tokens, reference_output(prompt_of(1, 12), 1, 0, never_stop));
    EXPECT_EQ(h.out[b].tokens, reference_output(pb, 2, 0, never_stop));
  }
}

TEST(Scheduler, PreemptsLatestArrivalAndResumesWithPrefixHit) {
  Harness h(cfg(64, 8, 16), kvc(4));
  const auto pa = prompt_of(1, 7), pb = prompt_of(50, 7);
  // A needs 7 + 6 - 1 = 12 positions (3 blocks), B 14 (4 blocks).
  SeqId a = h.sched.add_request(spec(pa, 6, 0));
  SeqId b = h.sched.add_request(spec(pb, 8, 1));
  auto p1 = h.step();
  EXPECT_EQ(p1.requests[0].tables[0].block_ids, (V{0, 1}));
  EXPECT_EQ(p1.requests[1].tables[0].block_ids, (V{2, 3}));
  h.step();            // both write position 7, filling their second blocks
  auto p3 = h.step();  // A needs a third block: B (latest arrival) gives its blocks back
  EXPECT_EQ(p3.preempted_ids, (std::vector<SeqId>{b}));
  EXPECT_EQ(entries(p3), (std::vector<Entry>{{a, 8, 1, true}}));
  EXPECT_EQ(p3.requests[0].tables[0].blocks_from, 2);
  EXPECT_EQ(p3.requests[0].tables[0].block_ids, (V{3}));  // B's tail block, evicted first
  EXPECT_EQ(h.sched.find(b)->status, RequestStatus::kPreempted);
  EXPECT_EQ(h.sched.find(b)->num_computed_tokens, 0);
  EXPECT_EQ(h.sched.num_preemptions(), 1);
  // B cannot come back until A is done (it needs 3 blocks, 1 is free).
  SchedulerOutput p;
  do {
    p = h.step();
  } while (p.requests.size() == 1 && p.requests[0].id == a);
  ASSERT_EQ(p.requests.size(), 1u);
  EXPECT_EQ(p.finished_ids, (std::vector<SeqId>{a}));
  // B resumes from its cached first block: 9 tokens (7 prompt + 2 outputs),
  // 4 hit, 5 recomputed, then it samples its third token.
  EXPECT_EQ(entries(p), (std::vector<Entry>{{b, 4, 5, true}}));
  EXPECT_EQ(p.requests[0].tables[0].block_ids, (V{2, 3, 1}));
  h.run_to_completion();
  EXPECT_EQ(h.out[a].tokens, reference_output(pa, 6, 0, never_stop));
  EXPECT_EQ(h.out[b].tokens, reference_output(pb, 8, 0, never_stop));
  EXPECT_EQ(h.sched.num_preemptions(), 1);
  EXPECT_EQ(h.sched.kv().stats().prefix_hit_tokens, 4);
}

TEST(Scheduler, PriorityPolicyOrdersAdmissionAndPicksVictims) {
  for (auto policy : {SchedulingPolicy::kFcfs, SchedulingPolicy::kPriority}) {
    Harness h(cfg(64, 1, 64, policy), kvc(16));
    SeqId lo = h.sched.add_request(spec(prompt_of(1, 4), 2, 0, /*priority=*/1));
    SeqId hi = h.sched.add_request(spec(prompt_of(9, 4), 2, 1, /*priority=*/0));
    auto p = h.step();
    ASSERT_EQ(p.requests.size(), 1u);  // one seat
    EXPECT_EQ(p.requests[0].id, policy == SchedulingPolicy::kPriority ? hi : lo);
    h.run_to_completion();
  }
  for (auto policy : {SchedulingPolicy::kFcfs, SchedulingPolicy::kPriority}) {
    Harness h(cfg(64, 8, 16, policy), kvc(4));
    SeqId lo = h.sched.add_request(spec(prompt_of(1, 7), 8, 0, 5));   // earlier, low priority
    SeqId hi = h.sched.add_request(spec(prompt_of(50, 7), 8, 1, 0));  // later, high priority
    h.step();
    h.step();
    auto p3 = h.step();
    const SeqId victim = policy == SchedulingPolicy::kPriority ? lo : hi;
    EXPECT_EQ(p3.preempted_ids, (std::vector<SeqId>{victim}));
    h.run_to_completion();
    EXPECT_EQ(h.out[lo].tokens, reference_output(prompt_of(1, 7), 8, 0, never_stop));
    EXPECT_EQ(h.out[hi].tokens, reference_output(prompt_of(50, 7), 8, 0, never_stop));
  }
}

TEST(Scheduler, AbortFreesBlocksInTheSameStep) {
  Harness h(cfg(64), kvc(16));
  SeqId a = h.sched.add_request(spec(prompt_of(1, 10), 20, 0));
  h.step();
  EXPECT_EQ(h.sched.kv().stats().blocks_used, 3);
  EXPECT_TRUE(h.sched.abort(a));
  EXPECT_EQ(h.sched.kv().stats().blocks_used, 0);
  EXPECT_EQ(h.sched.find(a), nullptr);
  EXPECT_FALSE(h.sched.abort(a));

  SeqId b = h.sched.add_request(spec(prompt_of(1, 5), 5, 1));
  EXPECT_TRUE(h.sched.abort(b));  // still waiting
  auto p = h.step();
  EXPECT_TRUE(p.requests.empty());
  EXPECT_EQ(p.finished_ids, (std::vector<SeqId>{a, b}));
  EXPECT_EQ(h.runner.num_tables(), 0u);

  // Aborted between schedule() and update(): its result is ignored.
  SeqId c = h.sched.add_request(spec(prompt_of(1, 5), 5, 2));
  auto plan = h.sched.schedule();
  auto res = h.runner.run(plan);
  EXPECT_TRUE(h.sched.abort(c));
  EXPECT_EQ(h.sched.kv().stats().blocks_used, 0);
  EXPECT_TRUE(h.sched.update(plan, res).empty());
  EXPECT_FALSE(h.sched.has_unfinished());
}

TEST(Scheduler, CallerStopVerdictFinishesAndFreesAtOnce) {
  const auto pa = prompt_of(1, 6);
  const TokenId third = reference_output(pa, 3, 0, never_stop)[2];
  auto stop_on_third = [third](TokenId t) {
    return t == third ? FinishReason::kStop : FinishReason::kNone;
  };
  Harness h(cfg(64), kvc(16), stop_on_third);
  SeqId a = h.sched.add_request(spec(pa, 50, 0));
  for (int i = 0; i < 3; ++i) h.step();
  EXPECT_FALSE(h.sched.has_unfinished());
  EXPECT_EQ(h.out[a].finish, FinishReason::kStop);
  EXPECT_EQ(h.out[a].tokens.size(), 3u);
  EXPECT_EQ(h.sched.kv().stats().blocks_used, 0);
}

TEST(Scheduler, ForkedSamplesShareThePromptAndCopyOnWrite) {
  Harness h(cfg(64), kvc(16));
  const auto pa = prompt_of(1, 6);
  SeqId a = h.sched.add_request(spec(pa, 3, 0, 0, /*n=*/3));
  auto p1 = h.step();
  ASSERT_EQ(p1.requests.size(), 1u);
  EXPECT_EQ(p1.requests[0].num_samples, 3);
  ASSERT_EQ(h.out.size(), 3u);  // parent + children a+1, a+2
  const SeqId c1{a.value() + 1}, c2{a.value() + 2};
  EXPECT_EQ(h.out[c1].parent_id, a);
  EXPECT_EQ(h.out[c2].sample_index, 2);
  EXPECT_EQ(h.sched.kv().pool().ref_count(1), 3);

  auto p2 = h.step();  // all three write position 6 inside shared block 1
  EXPECT_EQ(p2.cow_copies, (std::vector<kv::CowCopy>{{1, 2}, {1, 3}}));
  ASSERT_EQ(p2.requests.size(), 3u);
  EXPECT_EQ(p2.requests[0].tables[0].blocks_from, 1);
  EXPECT_EQ(p2.requests[0].tables[0].block_ids, (V{2}));
  EXPECT_EQ(p2.requests[1].tables[0].blocks_from, 0);  // a child's first plan: whole table
  EXPECT_EQ(p2.requests[1].tables[0].block_ids, (V{0, 3}));
  EXPECT_EQ(p2.requests[2].tables[0].block_ids, (V{0, 1}));  // last holder writes in place
  h.run_to_completion();
  for (std::int32_t k = 0; k < 3; ++k)
    EXPECT_EQ(h.out[SeqId{a.value() + static_cast<std::uint64_t>(k)}].tokens,
              reference_output(pa, 3, k, never_stop))
        << k;
  EXPECT_NE(h.out[a].tokens, h.out[c1].tokens);
}

TEST(Scheduler, MaxNumSeqsReservesSeatsForForks) {
  Harness h(cfg(64, 3), kvc(32));
  SeqId a = h.sched.add_request(spec(prompt_of(1, 4), 4, 0, 0, 3));
  SeqId b = h.sched.add_request(spec(prompt_of(9, 4), 4, 1));
  auto p1 = h.step();
  EXPECT_EQ(entries(p1), (std::vector<Entry>{{a, 0, 4, true}}));
  for (int i = 0; i < 3; ++i) {
    auto p = h.step();
    EXPECT_EQ(p.requests.size(), 3u);
    EXPECT_LE(h.sched.num_running(), 3);
  }
  h.run_to_completion();
  EXPECT_EQ(h.out[b].tokens, reference_output(prompt_of(9, 4), 4, 0, never_stop));
}

// Requests that can never run are refused before the scheduler, by the
// engine's RequestLimits (tests/engine/request_limits_test.cpp); here a
// request that fills the whole pool exactly (16 positions) runs to its end.
TEST(Scheduler, RequestFillingThePoolExactlyRuns) {
  Harness h(cfg(64, 4, 32), kvc(4));  // 4 blocks x 4 = 16 positions
  SeqId a = h.sched.add_request(spec(prompt_of(1, 10), 7));
  h.run_to_completion(100);
  EXPECT_EQ(h.out[a].tokens, reference_output(prompt_of(1, 10), 7, 0, never_stop));
  EXPECT_THROW(Scheduler(cfg(0), kvc(4)), Error);
}

TEST(Request, StateMachineNamesAndOrder) {
  Request r;
  EXPECT_EQ(r.status, RequestStatus::kWaiting);
  transition(r, RequestStatus::kRunning);
  transition(r, RequestStatus::kPreempted);
  transition(r, RequestStatus::kRunning);
  transition(r, finished_status(FinishReason::kLength));
  EXPECT_TRUE(is_finished(r.status));
  EXPECT_STREQ(status_name(r.status), "FINISHED_LENGTH");
  EXPECT_STREQ(finish_reason_name(FinishReason::kStop), "stop");
  Request a, b;
  a.id = SeqId{1};
  b.id = SeqId{2};
  a.arrival_time = 2;
  b.arrival_time = 1;
  b.priority = 3;
  EXPECT_TRUE(served_before(b, a, SchedulingPolicy::kFcfs));
  EXPECT_TRUE(served_before(a, b, SchedulingPolicy::kPriority));
}

}  // namespace
}  // namespace folio::sched::testing
