#include "engine/draft_kv_cache.h"

#include <algorithm>

#include "base/error.h"

namespace folio::engine {

DraftKvCache::DraftKvCache(const model::ModelConfig& draft, std::int32_t num_blocks,
                           std::int32_t block_size, kernels::KvDtype dtype)
    : cache_(draft, num_blocks, block_size, dtype, /*windowed=*/false),
      valid_(static_cast<std::size_t>(num_blocks)) {}

const std::vector<kv::BlockId>& DraftKvCache::table(sched::SeqId seq) const {
  const std::vector<kv::BlockId>* t = cache_.table(seq);
  FOLIO_CHECK(t != nullptr, "draft K/V: no block table for sequence " + to_string(seq));
  return *t;
}

void DraftKvCache::apply(const sched::SchedulerOutput& plan) {
  cache_.apply(plan);
  for (sched::SeqId id : plan.finished_ids) ahead_.erase(id);
  for (sched::SeqId id : plan.preempted_ids) ahead_.erase(id);
  const std::int32_t bs = cache_.block_size();
  for (const sched::ScheduledRequest& s : plan.requests) {
    const auto& t = table(s.id);
    for (auto i = static_cast<std::size_t>(s.tables.front().blocks_from); i < t.size(); ++i)
      if (static_cast<std::int64_t>(i) * bs >= s.start_pos)
        valid_[static_cast<std::size_t>(t[i])] = 0;
  }
  for (const kv::CowCopy& c : plan.cow_copies)
    valid_[static_cast<std::size_t>(c.dst)] = valid_[static_cast<std::size_t>(c.src)];
}

std::int32_t DraftKvCache::covered(sched::SeqId seq) const {
  const std::int32_t bs = cache_.block_size();
  std::int32_t c = 0;
  for (kv::BlockId b : table(seq)) {
    const std::int32_t v = valid_[static_cast<std::size_t>(b)];
    c += v;
    if (v < bs) break;
  }
  return c;
}

void DraftKvCache::mark(sched::SeqId seq, std::int32_t from, std::int32_t to) {
  if (to <= from) return;
  FOLIO_CHECK(from >= 0 && from <= covered(seq), "draft K/V marked past a gap");
  const auto& t = table(seq);
  const std::int32_t bs = cache_.block_size();
  FOLIO_CHECK(static_cast<std::int64_t>(t.size()) * bs >= to, "draft K/V marked past the table");
  for (std::int32_t i = from / bs; i * bs < to; ++i) {
    std::int32_t& v = valid_[static_cast<std::size_t>(t[static_cast<std::size_t>(i)])];
    v = std::max(v, std::min(to - i * bs, bs));
  }
}

void DraftKvCache::record_ahead(sched::SeqId seq, std::int32_t pos,
                                std::span<const TokenId> tokens) {
  ahead_[seq] = {pos, {tokens.begin(), tokens.end()}};
}

std::int32_t DraftKvCache::sync(sched::SeqId seq, std::span<const TokenId> tokens,
                                std::int32_t computed) {
  std::int32_t c = std::min(covered(seq), computed);
  auto it = ahead_.find(seq);
  if (it == ahead_.end()) return c;
  const Ahead& a = it->second;
  if (a.pos == c) {
    const auto first = static_cast<std::size_t>(c);
    const std::size_t end = std::min(static_cast<std::size_t>(computed), tokens.size());
    std::size_t n = 0;
    while (first + n < end && n < a.tokens.size() && tokens[first + n] == a.tokens[n]) ++n;
    mark(seq, c, c + static_cast<std::int32_t>(n));
    c += static_cast<std::int32_t>(n);
  }
  ahead_.erase(it);
  return c;
}

}  // namespace folio::engine
