#include "kv/kv_cache_manager.h"

#include <algorithm>

#include "base/error.h"
#include "kv/pool_transaction.h"

namespace folio::kv {

KvCacheManager::KvCacheManager(const KvCacheConfig& config)
    : pool_(config.num_blocks, config.block_size),
      caching_(config.enable_prefix_caching),
      hash_fn_(config.hash_fn != nullptr ? config.hash_fn : &hash_block) {}

void KvCacheManager::set_prefix_caching(bool enabled) {
  if (enabled == caching_) return;
  if (!enabled) pool_.clear_cache();
  caching_ = enabled;
  // Blocks computed while disabled are never offered later: start each
  // live sequence's caching after what it already holds.
  for (auto& [id, s] : seqs_) {
    s.num_cached_blocks = s.table.size();
    s.cache_broken = true;
  }
}

void KvCacheManager::ensure_hashes(std::span<const TokenId> tokens, std::int32_t num_full,
                                   std::uint64_t extra_key, std::vector<BlockHash>& hashes) const {
  const auto bs = static_cast<std::size_t>(pool_.block_size());
  for (auto k = hashes.size(); k < static_cast<std::size_t>(num_full); ++k) {
    const BlockHash* parent = k == 0 ? nullptr : &hashes[k - 1];
    hashes.push_back(hash_fn_(parent, tokens.subspan(k * bs, bs), extra_key));
  }
}

PrefixHit KvCacheManager::find_longest_prefix(std::span<const TokenId> tokens,
                                              std::uint64_t extra_key,
                                              std::vector<BlockHash>& hashes) const {
  PrefixHit hit;
  if (!caching_) return hit;
  const std::int32_t bs = pool_.block_size();
  const auto num_full = static_cast<std::int32_t>(tokens.size() / static_cast<std::size_t>(bs));
  ensure_hashes(tokens, num_full, extra_key, hashes);
  BlockId parent = kNoBlock;
  for (std::int32_t k = 0; k < num_full; ++k) {
    auto block_tokens = tokens.subspan(static_cast<std::size_t>(k) * static_cast<std::size_t>(bs),
                                       static_cast<std::size_t>(bs));
    BlockId b = pool_.lookup(hashes[static_cast<std::size_t>(k)], block_tokens, extra_key, parent);
    if (b == kNoBlock) break;
    hit.blocks.push_back(b);
    parent = b;
  }
  hit.num_tokens = static_cast<std::int32_t>(hit.blocks.size()) * bs;
  return hit;
}

void KvCacheManager::record_prefix_query(std::int64_t query_tokens, std::int64_t hit_tokens) {
  prefix_query_tokens_ += query_tokens;
  prefix_hit_tokens_ += hit_tokens;
}

std::optional<SlotAllocation> KvCacheManager::allocate_slots(SeqId seq, std::int32_t num_computed,
                                                             std::int32_t num_new,
                                                             std::span<const BlockId> hits) {
  const std::int32_t bs = pool_.block_size();
  FOLIO_CHECK(num_new > 0 && num_computed >= 0);
  auto found = seqs_.find(seq);
  const BlockTable empty;
  const BlockTable& old = found != seqs_.end() ? found->second.table : empty;
  if (!hits.empty())
    FOLIO_CHECK(old.size() == 0 && num_computed == static_cast<std::int32_t>(hits.size()) * bs,
                "prefix hits must start a fresh table and cover the computed tokens");
  FOLIO_CHECK(!hits.empty() || num_computed <= old.num_slots,
              "computing past the sequence's reserved slots");

  const std::int32_t have = old.size() + static_cast<std::int32_t>(hits.size());
  const std::int32_t need = (num_computed + num_new + bs - 1) / bs;
  const std::int32_t fresh = std::max(0, need - have);
  // The first position written lies in an existing block only when that
  // block is partly filled; if other tables share it, copy it first.
  const std::int32_t write_block = num_computed / bs;
  const bool cow = write_block < old.size() && pool_.ref_count(old[write_block]) > 1;
  std::int32_t revived = 0;  // hits sitting on the free list leave it when touched
  for (BlockId b : hits) revived += pool_.ref_count(b) == 0 ? 1 : 0;
  if (fresh + (cow ? 1 : 0) + revived > pool_.num_free()) return std::nullopt;

  SlotAllocation out;
  BlockTable table = old;
  {
    PoolTransaction tx(pool_);
    for (BlockId b : hits) pool_.touch(b);
    table.blocks.insert(table.blocks.end(), hits.begin(), hits.end());
    std::int32_t first_changed = old.size();
    if (cow) {
      std::vector<BlockId> dst;
      FOLIO_CHECK(pool_.allocate(1, dst));
      BlockId src = old[write_block];
      FOLIO_CHECK(!pool_.is_cached(src), "a cached (full) block is never written");
      pool_.release(src);
      table.blocks[static_cast<std::size_t>(write_block)] = dst[0];
      out.cow.push_back({src, dst[0]});
      first_changed = write_block;
    }
    FOLIO_CHECK(pool_.allocate(fresh, table.blocks));
    tx.commit();
    out.blocks_from = std::min(first_changed, old.size());
    if (!hits.empty()) out.blocks_from = 0;
  }
  out.block_ids.assign(table.blocks.begin() + out.blocks_from, table.blocks.end());
  table.num_slots = std::max(old.num_slots, num_computed + num_new);
  live_tokens_ += table.num_slots - old.num_slots;
  seqs_[seq].table = std::move(table);
  return out;
}

void KvCacheManager::cache_full_blocks(SeqId seq, std::span<const TokenId> tokens,
                                       std::int32_t num_computed, std::uint64_t extra_key,
                                       std::vector<BlockHash>& hashes) {
  if (!caching_) return;
  auto it = seqs_.find(seq);
  FOLIO_CHECK(it != seqs_.end(), "caching blocks of an unknown sequence");
  SeqState& s = it->second;
  const std::int32_t bs = pool_.block_size();
  const std::int32_t num_full = std::min(num_computed / bs, s.table.size());
  if (s.cache_broken || num_full <= s.num_cached_blocks) return;
  ensure_hashes(tokens, num_full, extra_key, hashes);
  for (std::int32_t k = s.num_cached_blocks; k < num_full; ++k) {
    BlockId b = s.table[k];
    auto block_tokens = tokens.subspan(static_cast<std::size_t>(k) * static_cast<std::size_t>(bs),
                                       static_cast<std::size_t>(bs));
    BlockId rep = pool_.is_cached(b) ? b  // a prefix hit or a block shared with a fork
                                     : pool_.cache_block(b, hashes[static_cast<std::size_t>(k)],
                                                         block_tokens, extra_key, s.cache_parent);
    if (rep == kNoBlock) {  // collision: later blocks could not be verified
      s.cache_broken = true;
      break;
    }
    s.cache_parent = rep;
    s.num_cached_blocks = k + 1;
  }
}

void KvCacheManager::fork(SeqId parent, SeqId child) {
  auto it = seqs_.find(parent);
  FOLIO_CHECK(it != seqs_.end(), "forking an unknown sequence");
  FOLIO_CHECK(seqs_.find(child) == seqs_.end(), "fork target already has a table");
  SeqState copy = it->second;
  for (BlockId b : copy.table.blocks) pool_.touch(b);
  live_tokens_ += copy.table.num_slots;
  seqs_.emplace(child, std::move(copy));
}

void KvCacheManager::free(SeqId seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return;
  const auto& blocks = it->second.table.blocks;
  for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) pool_.release(*b);
  live_tokens_ -= it->second.table.num_slots;
  seqs_.erase(it);
}

void KvCacheManager::truncate(SeqId seq, std::int32_t num_tokens) {
  auto it = seqs_.find(seq);
  FOLIO_CHECK(it != seqs_.end(), "truncating an unknown sequence");
  FOLIO_CHECK(num_tokens >= 0);
  SeqState& s = it->second;
  if (num_tokens >= s.table.num_slots) return;
  const std::int32_t bs = pool_.block_size();
  const std::int32_t keep = (num_tokens + bs - 1) / bs;
  FOLIO_CHECK(keep >= s.num_cached_blocks, "truncating into cached blocks");
  while (s.table.size() > keep) {
    pool_.release(s.table.blocks.back());
    s.table.blocks.pop_back();
  }
  live_tokens_ -= s.table.num_slots - num_tokens;
  s.table.num_slots = num_tokens;
}

const BlockTable* KvCacheManager::table(SeqId seq) const {
  auto it = seqs_.find(seq);
  return it == seqs_.end() ? nullptr : &it->second.table;
}

KvStats KvCacheManager::stats() const {
  KvStats s;
  s.blocks_total = pool_.num_blocks();
  s.blocks_used = pool_.num_used();
  s.blocks_cached_free = pool_.num_cached_free();
  s.blocks_free = pool_.num_free();
  s.live_tokens = live_tokens_;
  s.allocated_slots = static_cast<std::int64_t>(s.blocks_used) * pool_.block_size();
  s.prefix_query_tokens = prefix_query_tokens_;
  s.prefix_hit_tokens = prefix_hit_tokens_;
  return s;
}

}  // namespace folio::kv
