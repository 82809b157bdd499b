// Randomized simulation of the scheduler + KV manager with the fake runner:
// thousands of steps of random arrivals (shared system prompts, n > 1
// forks, priorities) and aborts on a pool small enough to force
// preemption. Every step checks the invariants: budget and seat limits, no
// block leaked or double-owned, reference counts equal the number of tables
// holding a block, runner and scheduler tables agree, progress is made.
// At the end every request has finished, and every output equals the fake
// model's reference, hence is identical with and without prefix caching,
// with and without preemption, under FCFS and priority, and with a
// deliberately colliding block hash.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "harness.h"

namespace folio::sched::testing {
namespace {

struct Arrival {
  int step;
  RequestSpec spec;
};
struct AbortEvent {
  int step;
  int group;  // index into arrivals; a no-op if it already finished
};
struct Workload {
  std::vector<Arrival> arrivals;
  std::vector<AbortEvent> aborts;
  int steps;
};

constexpr std::int32_t kMaxModelLen = 64;

Workload make_workload(std::uint32_t seed, int steps) {
  std::mt19937 rng(seed);
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<std::vector<TokenId>> system(4);
  for (auto& s : system) {
    s.resize(static_cast<std::size_t>(uni(0, 24)));
    for (auto& t : s) t = uni(1, kVocab - 1);
  }
  Workload w{{}, {}, steps};
  for (int step = 0; step < steps; ++step) {
    if (uni(0, 99) < 30) {
      RequestSpec sp;
      sp.prompt = system[static_cast<std::size_t>(uni(0, 3))];
      for (int i = uni(1, 30); i > 0; --i) sp.prompt.push_back(uni(1, kVocab - 1));
      const int room = kMaxModelLen - static_cast<int>(sp.prompt.size());
      sp.max_tokens = uni(1, std::min(24, room));
      const int nr = uni(0, 9);
      sp.n = nr < 7 ? 1 : nr < 9 ? 2 : 3;
      sp.priority = uni(0, 3);
      sp.arrival_time = step;
      w.arrivals.push_back({step, sp});
    }
    if (!w.arrivals.empty() && uni(0, 99) < 3)
      w.aborts.push_back({step, uni(0, static_cast<int>(w.arrivals.size()) - 1)});
  }
  return w;
}

FinishReason stop_rule(TokenId t) {
  return t % 31 == 0 ? FinishReason::kStop : FinishReason::kNone;
}

kv::BlockHash weak_hash(const kv::BlockHash* parent, std::span<const TokenId> tokens,
                        std::uint64_t) {
  std::uint64_t s = parent != nullptr ? parent->lo : 0;
  for (TokenId t : tokens) s += static_cast<std::uint64_t>(t);
  return {s % 5, 0};  // collides constantly
}

struct SimParams {
  const char* name;
  bool caching;
  std::int32_t num_blocks;
  SchedulingPolicy policy;
  kv::BlockHashFn hash = nullptr;
  std::int32_t long_prefill = 0;         // --long-prefill-token-threshold
  std::vector<kv::KvGroup> groups = {};  // KV layer groups (empty: one full group)
};

// Output of one sequence, keyed by (arrival index, sample index).
using Key = std::pair<int, int>;
struct SimResult {
  std::map<Key, std::vector<TokenId>> outputs;
  std::set<int> aborted_groups;
  std::int64_t preemptions = 0;
  std::int64_t hit_tokens = 0;
  int steps = 0;
};

void check_invariants(const Harness& h, const SchedulerOutput& plan, const SchedulerConfig& sc) {
  const Scheduler& s = h.sched;
  ASSERT_LE(plan.total_tokens, sc.max_num_batched_tokens);
  std::int32_t sum = 0;
  for (const auto& r : plan.requests) {
    sum += r.num_tokens();
    if (sc.long_prefill_token_threshold > 0) {
      ASSERT_LE(r.num_tokens(), sc.long_prefill_token_threshold);
    }
  }
  ASSERT_EQ(sum, plan.total_tokens);
  ASSERT_LE(static_cast<std::int32_t>(plan.requests.size()), sc.max_num_seqs);
  ASSERT_LE(s.num_running(), sc.max_num_seqs);

  const kv::KvCacheManager& kv = s.kv();
  ASSERT_EQ(kv.pool().verify(), "");
  std::vector<std::int32_t> holders(static_cast<std::size_t>(kv.num_blocks()), 0);
  const std::int32_t bs = kv.block_size();
  kv.for_each_table([&](kv::SeqId id, std::int32_t g, const kv::BlockTable& t) {
    const auto live = t.blocks.begin() + t.num_skipped;
    EXPECT_TRUE(
        std::all_of(t.blocks.begin(), live, [](kv::BlockId b) { return b == kv::kNoBlock; }))
        << "released entries of " << id;
    std::set<kv::BlockId> seen(live, t.blocks.end());
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(t.blocks.end() - live))
        << "block twice in one table";
    EXPECT_EQ(seen.count(kv::kNoBlock), 0u) << "placeholder after the released ones";
    for (auto b = live; b != t.blocks.end(); ++b) ++holders[static_cast<std::size_t>(*b)];
    // A sliding group holds no block wholly before its window.
    const std::int32_t w = kv.groups()[static_cast<std::size_t>(g)].window;
    if (w > 0) {
      const Request* rq = s.find(id);
      ASSERT_NE(rq, nullptr);
      // Exactly what the window releases at the plan's first position when
      // planned this step; never more than at the current one otherwise.
      const bool planned = std::any_of(plan.requests.begin(), plan.requests.end(),
                                       [&](const ScheduledRequest& e) { return e.id == id; });
      const std::int32_t skip = kv::skipped_blocks(w, bs, rq->num_computed_tokens);
      if (planned) {
        EXPECT_EQ(t.num_skipped, skip) << "group " << g << " of " << id;
      } else {
        EXPECT_LE(t.num_skipped, skip) << "group " << g << " of " << id;
      }
    }
    const Request* r = s.find(id);
    ASSERT_NE(r, nullptr) << "table of a dead request " << id;
    EXPECT_EQ(r->status, RequestStatus::kRunning);
    EXPECT_EQ(t.size(), (t.num_slots + bs - 1) / bs);
    EXPECT_GE(t.num_slots, r->num_computed_tokens);
    const auto* rt = h.runner.table(id, static_cast<std::size_t>(g));
    if (rt != nullptr) {
      EXPECT_EQ(*rt, t.blocks) << "runner table of " << id;
    }
  });
  for (kv::BlockId b = 0; b < kv.num_blocks(); ++b)
    ASSERT_EQ(kv.pool().ref_count(b), holders[static_cast<std::size_t>(b)]) << "block " << b;
  ASSERT_EQ(kv.num_seqs(), s.num_running());
  for (const Request* r : s.running()) ASSERT_NE(kv.table(r->id), nullptr);
  for (const Request* r : s.waiting()) ASSERT_EQ(r->num_computed_tokens, 0);
}

SimResult simulate(const Workload& w, const SimParams& p) {
  const SchedulerConfig sc{32, 8, kMaxModelLen, p.policy, p.long_prefill};
  Harness h(sc, {p.num_blocks, 4, p.caching, p.hash, p.groups}, stop_rule);
  SimResult res;
  std::map<SeqId, int> group_of;  // sequence id -> arrival index
  std::map<int, std::vector<SeqId>> seqs_of;
  std::size_t next_arrival = 0, next_abort = 0;
  for (int step = 0; step < w.steps + 20000; ++step) {
    while (next_arrival < w.arrivals.size() && w.arrivals[next_arrival].step == step) {
      SeqId id = h.sched.add_request(w.arrivals[next_arrival].spec);
      group_of[id] = static_cast<int>(next_arrival);
      seqs_of[static_cast<int>(next_arrival)].push_back(id);
      ++next_arrival;
    }
    while (next_abort < w.aborts.size() && w.aborts[next_abort].step == step) {
      const int g = w.aborts[next_abort++].group;
      res.aborted_groups.insert(g);
      for (SeqId id : seqs_of[g]) h.sched.abort(id);
    }
    if (step >= w.steps && !h.sched.has_unfinished()) break;
    const bool busy = h.sched.has_unfinished();
    SchedulerOutput plan = h.sched.schedule();
    if (busy) {
      EXPECT_FALSE(plan.requests.empty()) << "no progress at step " << step;
    }
    ModelRunnerOutput out = h.runner.run(plan);
    check_invariants(h, plan, sc);
    if (::testing::Test::HasFatalFailure()) return res;
    for (const SequenceOutput& o : h.sched.update(plan, out)) {
      if (group_of.find(o.id) == group_of.end()) {  // a fork child
        const int g = group_of.at(o.parent_id);
        group_of[o.id] = g;
        seqs_of[g].push_back(o.id);
      }
      auto& tokens = res.outputs[{group_of[o.id], o.sample_index}];
      tokens.insert(tokens.end(), o.new_tokens.begin(), o.new_tokens.end());
    }
    res.steps = step + 1;
  }
  EXPECT_FALSE(h.sched.has_unfinished()) << p.name << ": requests never finished";
  EXPECT_TRUE(h.runner.errors().empty()) << p.name << ": " << h.runner.errors().front();
  EXPECT_EQ(h.sched.kv().stats().blocks_used, 0) << p.name << ": blocks leaked";
  res.preemptions = h.sched.num_preemptions();
  res.hit_tokens = h.sched.kv().stats().prefix_hit_tokens;
  return res;
}

// Every sequence's output equals the reference (a prefix of it when its
// group was aborted); every sample of a non-aborted group exists.
void check_against_reference(const Workload& w, const SimResult& r, const char* name) {
  for (std::size_t g = 0; g < w.arrivals.size(); ++g) {
    const RequestSpec& sp = w.arrivals[g].spec;
    const bool aborted = r.aborted_groups.count(static_cast<int>(g)) != 0;
    for (int k = 0; k < sp.n; ++k) {
      auto it = r.outputs.find({static_cast<int>(g), k});
      if (it == r.outputs.end()) {
        EXPECT_TRUE(aborted) << name << ": group " << g << " sample " << k << " missing";
        continue;
      }
      auto ref = reference_output(sp.prompt, sp.max_tokens, k, stop_rule);
      if (aborted) {
        ASSERT_LE(it->second.size(), ref.size());
        ref.resize(it->second.size());
      }
      ASSERT_EQ(it->second, ref) << name << ": group " << g << " sample " << k;
    }
  }
}

TEST(SchedulerSimulation, InvariantsHoldAndOutputsMatchAcrossConfigs) {
  const SimParams params[] = {
      {"caching, small pool", true, 24, SchedulingPolicy::kFcfs},
      {"no caching, small pool", false, 24, SchedulingPolicy::kFcfs},
      {"caching, large pool", true, 256, SchedulingPolicy::kFcfs},
      {"no caching, large pool", false, 256, SchedulingPolicy::kFcfs},
      {"priority, small pool", true, 24, SchedulingPolicy::kPriority},
      {"colliding hash, small pool", true, 24, SchedulingPolicy::kFcfs, &weak_hash},
      {"long-prefill threshold 3, small pool", true, 24, SchedulingPolicy::kFcfs, nullptr, 3},
      // Hybrid KV (kv/kv_groups.h): a full group and sliding windows of 6 and
      // 10 positions (not multiples of the block size) over one pool; a
      // sequence needs up to 16 + 10 + 11 blocks at once.
      {"hybrid windows, small pool",
       true,
       48,
       SchedulingPolicy::kFcfs,
       nullptr,
       0,
       {{0}, {6}, {10}}},
      {"hybrid windows, no caching",
       false,
       48,
       SchedulingPolicy::kFcfs,
       nullptr,
       0,
       {{0}, {6}, {10}}},
      {"hybrid windows, large pool",
       true,
       600,
       SchedulingPolicy::kFcfs,
       nullptr,
       0,
       {{0}, {6}, {10}}},
      {"hybrid windows, colliding hash, threshold 3",
       true,
       48,
       SchedulingPolicy::kFcfs,
       &weak_hash,
       3,
       {{0}, {6}, {10}}},
  };
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    const Workload w = make_workload(seed, 3000);
    std::vector<SimResult> results;
    for (const SimParams& p : params) {
      SCOPED_TRACE(std::string(p.name) + ", seed " + std::to_string(seed));
      results.push_back(simulate(w, p));
      ASSERT_FALSE(::testing::Test::HasFatalFailure());
      check_against_reference(w, results.back(), p.name);
      ASSERT_FALSE(::testing::Test::HasFatalFailure());
    }
    // The configurations really differ in what they exercise.
    EXPECT_GT(results[0].preemptions, 0);
    EXPECT_GT(results[0].hit_tokens, 0);
    EXPECT_EQ(results[1].hit_tokens, 0);
    EXPECT_EQ(results[2].preemptions, 0);
    EXPECT_GT(results[2].hit_tokens, 0);
    EXPECT_GT(results[7].preemptions, 0);
    EXPECT_GT(results[7].hit_tokens, 0);
    EXPECT_GT(results[9].hit_tokens, 0);
    // Non-aborted outputs are identical across all configurations.
    for (std::size_t i = 1; i < results.size(); ++i)
      for (const auto& [key, tokens] : results[0].outputs)
        if (results[0].aborted_groups.count(key.first) == 0) {
          ASSERT_EQ(results[i].outputs.at(key), tokens) << params[i].name;
        }
    std::printf(
        "seed %u: %zu requests, %d steps; preemptions %lld; hit tokens %lld (small "
        "pool) %lld (large pool); hybrid windows: preemptions %lld, hit tokens %lld (small "
        "pool) %lld (large pool)\n",
        seed, w.arrivals.size(), results[0].steps, static_cast<long long>(results[0].preemptions),
        static_cast<long long>(results[0].hit_tokens),
        static_cast<long long>(results[2].hit_tokens),
        static_cast<long long>(results[7].preemptions),
        static_cast<long long>(results[7].hit_tokens),
        static_cast<long long>(results[9].hit_tokens));
  }
}

}  // namespace
}  // namespace folio::sched::testing
