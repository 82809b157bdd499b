// tests/sched/fake_runner.h: a deterministic stand-in for model + runner.
//
// It plays the runner's side of the step contract for real (the KV side is
// fake_kv_store.h: tables from the plan's deltas, COW copies, (token,
// position) written into the slot of every computed position), and when a
// request samples it reads the whole history back *through its block table*. The fake model's next
// token is a hash of that history, so any bookkeeping bug (a shared block written in place, a wrong
// prefix hit, a lost copy, a stale table) changes the tokens, and the test
// sees outputs differ from the reference computed straight from the tokens.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "fake_kv_store.h"
#include "sched/scheduler_output.h"

namespace folio::sched::testing {

inline constexpr TokenId kVocab = 1000;

// The fake model: next token after `history` for sample `k`.
inline TokenId fake_next(std::span<const TokenId> history, std::int32_t k) {
  std::uint64_t h = 1469598103934665603ull ^ static_cast<std::uint64_t>(k) * 0x9E3779B97F4A7C15ull;
  for (TokenId t : history) {
    h ^= static_cast<std::uint64_t>(t);
    h *= 1099511628211ull;
  }
  return 1 + static_cast<TokenId>(h % static_cast<std::uint64_t>(kVocab - 1));
}

using StopRule = std::function<FinishReason(TokenId)>;
inline FinishReason never_stop(TokenId) {
  return FinishReason::kNone;
}

// Reference output of a sequence computed straight from its prompt:
// `first_k` is the sample index of its first token (its fork index).
inline std::vector<TokenId> reference_output(std::vector<TokenId> history, std::int32_t max_tokens,
                                             std::int32_t first_k, const StopRule& stop) {
  std::vector<TokenId> out;
  while (static_cast<std::int32_t>(out.size()) < max_tokens) {
    TokenId t = fake_next(history, out.empty() ? first_k : 0);
    out.push_back(t);
    history.push_back(t);
    if (stop(t) != FinishReason::kNone) break;
  }
  return out;
}

class FakeRunner {
 public:
  // `windows`: the KV layer groups' windows (FakeKvStore::init).
  FakeRunner(std::int32_t num_blocks, std::int32_t block_size, StopRule stop = never_stop,
             std::vector<std::int32_t> windows = {})
      : stop_(std::move(stop)) {
    kv_.init(num_blocks, block_size, std::move(windows));
  }

  // Errors seen so far (empty when the plans were consistent).
  const std::vector<std::string>& errors() const { return kv_.errors(); }
  const std::vector<kv::BlockId>* table(SeqId id, std::size_t group = 0) const {
    return kv_.table(id, group);
  }
  std::size_t num_tables() const { return kv_.num_tables(); }

  ModelRunnerOutput run(const SchedulerOutput& plan) {
    kv_.apply(plan);
    ModelRunnerOutput out;
    for (const ScheduledRequest& s : plan.requests) {
      kv_.write_tokens(s);
      if (!s.sample()) continue;
      RequestResult r{s.id, {}, 0};
      if (s.num_spec > 0) {
        verify_greedy(s, r);
        out.results.push_back(std::move(r));
        continue;
      }
      const std::vector<TokenId> history = kv_.history(s.id, s.start_pos + s.num_tokens() - 1);
      for (std::int32_t k = 0; k < s.num_samples; ++k) {
        TokenId t = fake_next(history, k);
        r.samples.push_back({t, stop_(t)});
      }
      out.results.push_back(std::move(r));
    }
    return out;
  }

 private:
  // Greedy verification of drafts: the row after position p (read back
  // through the table, drafts included) decides the draft at p + 1.
  void verify_greedy(const ScheduledRequest& s, RequestResult& r) {
    const std::int32_t last = s.start_pos + s.num_tokens() - s.num_spec - 1;
    const auto drafts = s.drafts();
    for (std::int32_t i = 0; i <= s.num_spec; ++i) {
      const TokenId t = fake_next(kv_.history(s.id, last + i), 0);
      const FinishReason f = stop_(t);
      r.samples.push_back({t, f});
      const bool accepted = i < s.num_spec && t == drafts[static_cast<std::size_t>(i)];
      if (accepted) ++r.num_accepted;
      if (!accepted || f != FinishReason::kNone) break;
    }
  }

  FakeKvStore kv_;
  StopRule stop_;
};

}  // namespace folio::sched::testing
