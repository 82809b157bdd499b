// tests/sched/fake_kv_store.h: the runner's side of the KV contract, played
// for real with no model: block tables kept from the plans' deltas, COW
// copies run, every computed position's (token, position) written into its
// slot, and histories read back *through the table*. Both test runners use
// it: the scheduler's (tests/sched/fake_runner.h) and the engine's
// (tests/engine/fake_model_runner.h). Inconsistent plans are collected in
// errors() rather than crashing, so a test sees what went wrong.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sched/scheduler_output.h"

namespace folio::sched::testing {

class FakeKvStore {
 public:
  void init(std::int32_t num_blocks, std::int32_t block_size) {
    bs_ = block_size;
    slots_.assign(static_cast<std::size_t>(num_blocks) * static_cast<std::size_t>(block_size), {});
  }

  // Drops finished / preempted tables, runs the COW copies, applies every
  // scheduled entry's table delta (then its tokens with write_tokens()).
  void apply(const SchedulerOutput& plan) {
    for (SeqId id : plan.finished_ids) tables_.erase(id);
    for (SeqId id : plan.preempted_ids) tables_.erase(id);
    for (const kv::CowCopy& c : plan.cow_copies)
      for (std::int32_t i = 0; i < bs_; ++i) slot(c.dst, i) = slot(c.src, i);
    for (const ScheduledRequest& s : plan.requests) {
      auto& table = tables_[s.id];
      if (s.blocks_from > static_cast<std::int32_t>(table.size())) {
        errors_.push_back("delta past the end of the runner's table of " + to_string(s.id));
        continue;
      }
      table.resize(static_cast<std::size_t>(s.blocks_from));
      table.insert(table.end(), s.block_ids.begin(), s.block_ids.end());
    }
  }

  // "Stores K/V" of the entry's tokens: (token, position) into their slots.
  void write_tokens(const ScheduledRequest& s) {
    const auto& table = tables_[s.id];
    for (std::int32_t i = 0; i < s.num_tokens(); ++i) {
      const std::int32_t pos = s.start_pos + i;
      if (pos / bs_ >= static_cast<std::int32_t>(table.size())) {
        errors_.push_back("no slot for position " + std::to_string(pos));
        return;
      }
      at(table, pos) = {s.tokens[static_cast<std::size_t>(i)], pos};
    }
  }

  // One position's "K/V" outside a plan (a drafter's write).
  void write(SeqId seq, std::int32_t pos, TokenId token) {
    const auto& table = tables_[seq];
    if (pos / bs_ >= static_cast<std::int32_t>(table.size())) {
      errors_.push_back("no slot for draft position " + std::to_string(pos));
      return;
    }
    at(table, pos) = {token, pos};
  }

  // Positions 0..last of `seq`, read through its block table.
  std::vector<TokenId> history(SeqId seq, std::int32_t last) {
    const auto& table = tables_[seq];
    std::vector<TokenId> out;
    for (std::int32_t pos = 0; pos <= last; ++pos) {
      if (pos / bs_ >= static_cast<std::int32_t>(table.size())) {
        errors_.push_back("no slot to read position " + std::to_string(pos));
        break;
      }
      const Slot& sl = at(table, pos);
      if (sl.pos != pos)
        errors_.push_back("slot for position " + std::to_string(pos) + " holds position " +
                          std::to_string(sl.pos));
      out.push_back(sl.token);
    }
    return out;
  }

  const std::vector<std::string>& errors() const { return errors_; }
  const std::vector<kv::BlockId>* table(SeqId id) const {
    auto it = tables_.find(id);
    return it == tables_.end() ? nullptr : &it->second;
  }
  std::size_t num_tables() const { return tables_.size(); }

 private:
  struct Slot {
    TokenId token = -1;
    std::int32_t pos = -1;
  };
  Slot& slot(kv::BlockId b, std::int32_t i) {
    return slots_.at(static_cast<std::size_t>(b) * static_cast<std::size_t>(bs_) +
                     static_cast<std::size_t>(i));
  }
  Slot& at(const std::vector<kv::BlockId>& table, std::int32_t pos) {
    return slot(table.at(static_cast<std::size_t>(pos / bs_)), pos % bs_);
  }

  std::int32_t bs_ = 1;
  std::vector<Slot> slots_;
  std::unordered_map<SeqId, std::vector<kv::BlockId>> tables_;
  std::vector<std::string> errors_;
};

}  // namespace folio::sched::testing
