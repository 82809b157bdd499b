// tests/sched/fake_runner.h: a deterministic stand-in for model + runner.
//
// It plays the runner's side of the step contract for real: it keeps its
// own block tables from the plan's deltas, executes COW copies, "stores
// K/V" by writing (token, position) into the slot of every computed
// position, and when a request samples it reads the whole history back
// *through its block table*. The fake model's next token is a hash of that
// history, so any bookkeeping bug (a shared block written in place, a wrong
// prefix hit, a lost copy, a stale table) changes the tokens, and the test
// sees outputs differ from the reference computed straight from the tokens.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

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
  FakeRunner(std::int32_t num_blocks, std::int32_t block_size, StopRule stop = never_stop)
      : bs_(block_size),
        slots_(static_cast<std::size_t>(num_blocks) * static_cast<std::size_t>(block_size)),
        stop_(std::move(stop)) {}

  // Errors seen so far (empty when the plans were consistent).
  const std::vector<std::string>& errors() const { return errors_; }
  const std::vector<kv::BlockId>* table(SeqId id) const {
    auto it = tables_.find(id);
    return it == tables_.end() ? nullptr : &it->second;
  }
  std::size_t num_tables() const { return tables_.size(); }

  ModelRunnerOutput run(const SchedulerOutput& plan) {
    for (SeqId id : plan.finished_ids) tables_.erase(id);
    for (SeqId id : plan.preempted_ids) tables_.erase(id);
    for (const kv::CowCopy& c : plan.cow_copies)
      for (std::int32_t i = 0; i < bs_; ++i) slot(c.dst, i) = slot(c.src, i);
    ModelRunnerOutput out;
    for (const ScheduledRequest& s : plan.requests) {
      auto& table = tables_[s.id];
      if (s.blocks_from > static_cast<std::int32_t>(table.size())) {
        errors_.push_back("delta past the end of the runner's table of " + to_string(s.id));
        continue;
      }
      table.resize(static_cast<std::size_t>(s.blocks_from));
      table.insert(table.end(), s.block_ids.begin(), s.block_ids.end());
      for (std::int32_t i = 0; i < s.num_tokens(); ++i) {
        std::int32_t pos = s.start_pos + i;
        if (pos / bs_ >= static_cast<std::int32_t>(table.size())) {
          errors_.push_back("no slot for position " + std::to_string(pos));
          break;
        }
        at(table, pos) = {s.tokens[static_cast<std::size_t>(i)], pos};
      }
      if (!s.sample()) continue;
      std::vector<TokenId> history;
      for (std::int32_t pos = 0; pos < s.start_pos + s.num_tokens(); ++pos) {
        const Slot& sl = at(table, pos);
        if (sl.pos != pos)
          errors_.push_back("slot for position " + std::to_string(pos) + " holds position " +
                            std::to_string(sl.pos));
        history.push_back(sl.token);
      }
      RequestResult r{s.id, {}};
      for (std::int32_t k = 0; k < s.num_samples; ++k) {
        TokenId t = fake_next(history, k);
        r.samples.push_back({t, stop_(t)});
      }
      out.results.push_back(std::move(r));
    }
    return out;
  }

 private:
  struct Slot {
    TokenId token = -1;
    std::int32_t pos = -1;
  };
  Slot& slot(kv::BlockId b, std::int32_t i) {
    return slots_[static_cast<std::size_t>(b) * static_cast<std::size_t>(bs_) +
                  static_cast<std::size_t>(i)];
  }
  Slot& at(const std::vector<kv::BlockId>& table, std::int32_t pos) {
    return slot(table[static_cast<std::size_t>(pos / bs_)], pos % bs_);
  }

  std::int32_t bs_;
  std::vector<Slot> slots_;
  StopRule stop_;
  std::unordered_map<SeqId, std::vector<kv::BlockId>> tables_;
  std::vector<std::string> errors_;
};

}  // namespace folio::sched::testing
