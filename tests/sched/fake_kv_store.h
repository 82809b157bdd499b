// tests/sched/fake_kv_store.h: the runner's side of the KV contract, played
// for real with no model: block tables kept from the plans' deltas, COW
// copies run, every computed position's (token, position) written into its
// slot, and histories read back *through the table*. With layer groups
// (kv/kv_groups.h) every group's table gets the writes, the history is read
// through group 0 and each sliding group's window is checked slot by slot
// (a released placeholder inside a window is an error). Both test runners use
// it: the scheduler's (tests/sched/fake_runner.h) and the engine's
// (tests/engine/fake_model_runner.h). Inconsistent plans are collected in
// errors() rather than crashing, so a test sees what went wrong.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sched/scheduler_output.h"

namespace folio::sched::testing {

class FakeKvStore {
 public:
  // `windows`: one per layer group (0: full attention); empty: one full group.
  void init(std::int32_t num_blocks, std::int32_t block_size,
            std::vector<std::int32_t> windows = {}) {
    bs_ = block_size;
    windows_ = windows.empty() ? std::vector<std::int32_t>{0} : std::move(windows);
    slots_.assign(static_cast<std::size_t>(num_blocks) * static_cast<std::size_t>(block_size), {});
  }

  // Drops finished / preempted tables, runs the COW copies, applies every
  // scheduled entry's table deltas (then its tokens with write_tokens()).
  void apply(const SchedulerOutput& plan) {
    for (SeqId id : plan.finished_ids) tables_.erase(id);
    for (SeqId id : plan.preempted_ids) tables_.erase(id);
    for (const kv::CowCopy& c : plan.cow_copies)
      for (std::int32_t i = 0; i < bs_; ++i) slot(c.dst, i) = slot(c.src, i);
    for (const ScheduledRequest& s : plan.requests) {
      auto& tables = tables_[s.id];
      tables.resize(windows_.size());
      if (s.tables.size() != windows_.size()) {
        errors_.push_back("plan has " + std::to_string(s.tables.size()) + " tables, not " +
                          std::to_string(windows_.size()));
        continue;
      }
      for (std::size_t g = 0; g < windows_.size(); ++g) {
        const kv::TableDelta& d = s.tables[g];
        auto& table = tables[g];
        if (d.blocks_from > static_cast<std::int32_t>(table.size())) {
          errors_.push_back("delta past the end of the runner's table of " + to_string(s.id));
          continue;
        }
        table.resize(static_cast<std::size_t>(d.blocks_from));
        table.insert(table.end(), d.block_ids.begin(), d.block_ids.end());
        if (d.num_skipped > static_cast<std::int32_t>(table.size())) {
          errors_.push_back("released blocks past the end of the table of " + to_string(s.id));
          continue;
        }
        std::fill_n(table.begin(), d.num_skipped, kv::kNoBlock);
      }
    }
  }

  // "Stores K/V" of the entry's tokens: (token, position) into their slots.
  void write_tokens(const ScheduledRequest& s) {
    for (std::int32_t i = 0; i < s.num_tokens(); ++i)
      write(s.id, s.start_pos + i, s.tokens[static_cast<std::size_t>(i)]);
  }

  // One position's "K/V" (in every group) outside a plan (a drafter's write).
  void write(SeqId seq, std::int32_t pos, TokenId token) {
    for (const auto& table : tables_[seq]) {
      if (pos / bs_ >= static_cast<std::int32_t>(table.size()) ||
          table[static_cast<std::size_t>(pos / bs_)] == kv::kNoBlock) {
        errors_.push_back("no slot for position " + std::to_string(pos));
        return;
      }
      at(table, pos) = {token, pos};
    }
  }

  // Positions 0..last of `seq`, read through group 0's table (from its
  // window's first position when group 0 slides); every other group's
  // window is checked too.
  std::vector<TokenId> history(SeqId seq, std::int32_t last) {
    const auto& tables = tables_[seq];
    std::vector<TokenId> out;
    for (std::size_t g = 0; g < windows_.size(); ++g) {
      if (g >= tables.size()) {
        errors_.push_back("no table of group " + std::to_string(g));
        break;
      }
      const std::int32_t w = windows_[g];
      for (std::int32_t pos = w > 0 ? std::max(0, last - w + 1) : 0; pos <= last; ++pos) {
        const auto& table = tables[g];
        if (pos / bs_ >= static_cast<std::int32_t>(table.size()) ||
            table[static_cast<std::size_t>(pos / bs_)] == kv::kNoBlock) {
          errors_.push_back("no slot to read position " + std::to_string(pos) + " in group " +
                            std::to_string(g));
          break;
        }
        const Slot& sl = at(table, pos);
        if (sl.pos != pos)
          errors_.push_back("slot for position " + std::to_string(pos) + " holds position " +
                            std::to_string(sl.pos) + " in group " + std::to_string(g));
        if (g == 0) out.push_back(sl.token);
      }
    }
    return out;
  }

  const std::vector<std::string>& errors() const { return errors_; }
  const std::vector<kv::BlockId>* table(SeqId id, std::size_t group = 0) const {
    auto it = tables_.find(id);
    return it == tables_.end() || group >= it->second.size() ? nullptr : &it->second[group];
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
  std::vector<std::int32_t> windows_{0};
  std::unordered_map<SeqId, std::vector<std::vector<kv::BlockId>>> tables_;
  std::vector<std::string> errors_;
};

}  // namespace folio::sched::testing
