// tests/sched/harness.h: a Scheduler wired to a FakeRunner, stepping the
// plan -> run -> update loop and collecting each sequence's outputs.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <numeric>

#include "fake_runner.h"
#include "sched/scheduler.h"

namespace folio::sched::testing {

struct Collected {
  SeqId parent_id;
  std::int32_t sample_index = 0;
  std::vector<TokenId> tokens;
  FinishReason finish = FinishReason::kNone;
};

// Drafts for a caught-up sequence's next step, from its tokens (empty: none).
using DraftRule = std::function<std::vector<TokenId>(const Request&)>;

struct Harness {
  Harness(const SchedulerConfig& sc, const kv::KvCacheConfig& kc, StopRule stop = never_stop)
      : sched(sc, kc), runner(kc.num_blocks, kc.block_size, std::move(stop), windows(kc)) {}

  static std::vector<std::int32_t> windows(const kv::KvCacheConfig& kc) {
    std::vector<std::int32_t> w;
    for (const kv::KvGroup& g : kc.groups) w.push_back(g.window);
    return w;
  }

  // One engine step; returns the plan.
  SchedulerOutput step() {
    SchedulerOutput plan = sched.schedule();
    ModelRunnerOutput res = runner.run(plan);
    for (const SequenceOutput& o : sched.update(plan, res)) {
      Collected& c = out[o.id];
      c.parent_id = o.parent_id;
      c.sample_index = o.sample_index;
      c.tokens.insert(c.tokens.end(), o.new_tokens.begin(), o.new_tokens.end());
      c.finish = o.finish;
    }
    EXPECT_TRUE(runner.errors().empty()) << runner.errors().front();
    if (drafts) {
      for (const Request* r : sched.running()) {
        auto d = drafts(*r);
        if (!d.empty()) sched.set_spec_tokens(r->id, std::move(d));
      }
    }
    return plan;
  }
  void run_to_completion(int max_steps = 10000) {
    for (int i = 0; i < max_steps && sched.has_unfinished(); ++i) step();
    ASSERT_FALSE(sched.has_unfinished()) << "requests still live after " << max_steps << " steps";
  }

  Scheduler sched;
  FakeRunner runner;
  std::map<SeqId, Collected> out;
  DraftRule drafts;  // set to speculate
};

inline std::vector<TokenId> prompt_of(TokenId first, int n) {
  std::vector<TokenId> t(static_cast<std::size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

inline RequestSpec spec(std::vector<TokenId> prompt, std::int32_t max_tokens, double arrival = 0,
                        std::int32_t priority = 0, std::int32_t n = 1) {
  RequestSpec s;
  s.prompt = std::move(prompt);
  s.max_tokens = max_tokens;
  s.arrival_time = arrival;
  s.priority = priority;
  s.n = n;
  return s;
}

}  // namespace folio::sched::testing
