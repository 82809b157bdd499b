// tests/engine/fake_model_runner.h: a deterministic ModelRunner with no model.
//
// It plays the runner's side of the step contract for real (the KV side is
// tests/sched/fake_kv_store.h: tables from the plan's deltas, COW copies,
// (token, position) written into every computed position's slot), and for
// every logit row reads the sequence's history back *through its block
// table*. The fake model's next token is a hash of that history, with logits
// peaked on it (kPeak above a spread of small values), so greedy decoding
// follows fake_next() exactly and any bookkeeping bug (a shared block
// written in place, a wrong prefix hit, a lost copy, a stale table) changes
// the tokens. fail_on(k) makes the k-th execute() throw (a failed step);
// pause() holds execute() (a long step) until unpaused; set_step_seconds()
// makes it report forward times that grow with the rows. Its hidden state of
// a token is (token, position), so a pooled mean is checkable by hand.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "../sched/fake_kv_store.h"
#include "base/error.h"
#include "engine/model_runner.h"

namespace folio::engine::testing {

inline constexpr std::int32_t kFakeVocab = 512;
inline constexpr float kPeak = 8.0f;

// The fake model: the token after `history`.
inline TokenId fake_next(std::span<const TokenId> history) {
  std::uint64_t h = 1469598103934665603ull;
  for (TokenId t : history) {
    h ^= static_cast<std::uint64_t>(t);
    h *= 1099511628211ull;
  }
  return 1 + static_cast<TokenId>(h % static_cast<std::uint64_t>(kFakeVocab - 1));
}

// Greedy continuation computed straight from the tokens.
inline std::vector<TokenId> fake_greedy(std::vector<TokenId> history, std::int32_t n) {
  std::vector<TokenId> out;
  while (static_cast<std::int32_t>(out.size()) < n) {
    out.push_back(fake_next(history));
    history.push_back(out.back());
  }
  return out;
}

class FakeModelRunner final : public ModelRunner {
 public:
  explicit FakeModelRunner(std::int64_t context = 256) : context_(context) {}

  std::int32_t vocab_size() const override { return kFakeVocab; }
  std::int64_t context_length() const override { return context_; }
  std::int32_t hidden_size() const override { return 2; }
  std::int64_t kv_bytes_per_block(std::int32_t block_size, kernels::KvDtype) const override {
    return 1000 * std::int64_t{block_size};  // a round number for budgets in tests
  }
  std::int64_t init_kv(const KvLayout& layout) override {
    kv_.init(layout.num_blocks, layout.block_size);
    return kv_bytes_per_block(layout.block_size, layout.dtype) * layout.num_blocks;
  }

  RunnerOutput execute(const sched::SchedulerOutput& plan) override {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return !paused_; });
    }
    ++executes_;
    kv_.apply(plan);
    if (executes_ == fail_on_) throw Error("injected runner failure");
    logits_.clear();
    pooled_.clear();
    for (const sched::ScheduledRequest& s : plan.requests) {
      if (s.pool) {
        float tokens = 0, positions = 0;
        for (std::int32_t i = 0; i < s.num_tokens(); ++i) {
          tokens += static_cast<float>(s.tokens[static_cast<std::size_t>(i)]);
          positions += static_cast<float>(s.start_pos + i);
        }
        pooled_.push_back(tokens);
        pooled_.push_back(positions);
      }
      kv_.write_tokens(s);
      for (std::int32_t i = s.num_tokens() - s.num_logits; i < s.num_tokens(); ++i)
        push_row(kv_.history(s.id, s.start_pos + i), s.start_pos + i);
    }
    RunnerOutput out;
    out.logits = logits_;
    out.pooled = pooled_;
    if (step_seconds_ > 0)  // a machine where each row adds per_row of a one-row step
      out.times.ffn = step_seconds_ * (1 + per_row_ * (plan.total_tokens - 1));
    return out;
  }
  // Reports a forward of r rows as taking seconds * (1 + per_row * (r - 1))
  // (what the engine measures a verification row's cost from); by default
  // no time at all.
  void set_step_seconds(double seconds, double per_row) {
    step_seconds_ = seconds;
    per_row_ = per_row;
  }

  // Reports each draft forward as taking `seconds` (a call of runs of k
  // drafts: k forwards, what the engine measures a draft's cost from); by
  // default no time and no forwards counted.
  void set_draft_seconds(double seconds) { draft_seconds_ = seconds; }

  // A model drafter over the same KV: it reads the history through the
  // table, writes each input token into its slot (as a drafter writes K/V,
  // so the slots must be reserved), and proposes the fake model's own next
  // tokens, except at positions divisible by 3 (a wrong token).
  double draft(std::span<DraftRequest> requests) override {
    ++drafts_;
    std::int32_t rounds = 0;
    for (DraftRequest& r : requests) {
      if (draft_seconds_ > 0) r.rounds = r.k;
      rounds = std::max(rounds, r.k);
      std::vector<TokenId> h = kv_.history(r.seq, r.pos() - 1);
      h.push_back(r.last());
      r.out.clear();
      for (std::int32_t i = 0; i < r.k; ++i) {
        kv_.write(r.seq, r.pos() + i, h.back());
        TokenId t = fake_next(h);
        if ((r.pos() + i) % 3 == 0) t = t % (kFakeVocab - 2) + 1;
        r.out.push_back(t);
        h.push_back(t);
      }
    }
    return draft_seconds_ * rounds;
  }
  int drafts() const { return drafts_; }

  void fail_on(int execute_index) { fail_on_ = execute_index; }
  int executes() const { return executes_; }  // execute() calls so far
  // While paused, execute() waits (a step that takes as long as the test wants).
  void pause(bool p) {
    {
      std::lock_guard lock(mu_);
      paused_ = p;
    }
    cv_.notify_all();
  }
  const std::vector<std::string>& errors() const { return kv_.errors(); }

 private:
  // Logits after position `last`, from its history read through the table.
  void push_row(const std::vector<TokenId>& history, std::int32_t last) {
    const TokenId next = fake_next(history);
    const std::size_t base = logits_.size();
    logits_.resize(base + kFakeVocab);
    for (std::int32_t j = 0; j < kFakeVocab; ++j)  // a deterministic spread in [0, 1)
      logits_[base + static_cast<std::size_t>(j)] =
          static_cast<float>((j * 37 + last) % 101) / 101.0f;
    logits_[base + static_cast<std::size_t>(next)] = kPeak;
  }

  std::int64_t context_;
  sched::testing::FakeKvStore kv_;
  std::vector<float> logits_;
  std::vector<float> pooled_;
  int executes_ = 0;
  int drafts_ = 0;
  int fail_on_ = -1;
  double step_seconds_ = 0, per_row_ = 0;
  double draft_seconds_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool paused_ = false;
};

}  // namespace folio::engine::testing
