#include "kv/kv_cache_manager.h"

#include <algorithm>

#include "base/error.h"
#include "kv/pool_transaction.h"

namespace folio::kv {

namespace {

std::span<const TokenId> block_tokens(std::span<const TokenId> tokens, std::int32_t k,
                                      std::int32_t bs) {
  return tokens.subspan(static_cast<std::size_t>(k) * static_cast<std::size_t>(bs),
                        static_cast<std::size_t>(bs));
}

}  // namespace

KvCacheManager::KvCacheManager(const KvCacheConfig& config)
    : pool_(config.num_blocks, config.block_size),
      caching_(config.enable_prefix_caching),
      hash_fn_(config.hash_fn != nullptr ? config.hash_fn : &hash_block),
      groups_(config.groups.empty() ? std::vector<KvGroup>{KvGroup{}} : config.groups) {
  for (const KvGroup& g : groups_) FOLIO_CHECK(g.window >= 0, "negative attention window");
}

void KvCacheManager::set_prefix_caching(bool enabled) {
  if (enabled == caching_) return;
  if (!enabled) pool_.clear_cache();
  caching_ = enabled;
  // Blocks computed while disabled are never offered later: start each
  // live sequence's caching after what it already holds.
  for (auto& [id, s] : seqs_) {
    s.num_cached_blocks = s.tables[0].size();
    s.cache_broken = true;
  }
}

BlockRange KvCacheManager::hole(std::size_t g, const AttentionWindow& policy,
                                std::int64_t num_computed) const {
  return released_blocks(effective_window(groups_[g].window, policy), pool_.block_size(),
                         num_computed);
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
                                              std::vector<BlockHash>& hashes,
                                              const AttentionWindow& policy) const {
  PrefixHit hit;
  if (!caching_) return hit;
  const std::int32_t bs = pool_.block_size();
  const auto num_full = static_cast<std::int32_t>(tokens.size() / static_cast<std::size_t>(bs));
  ensure_hashes(tokens, num_full, extra_key, hashes);
  // Group 0: the longest verified chain from the first block.
  std::vector<BlockId> chain;
  BlockId parent = kNoBlock;
  for (std::int32_t k = 0; k < num_full; ++k) {
    BlockId b = pool_.lookup(hashes[static_cast<std::size_t>(k)], block_tokens(tokens, k, bs),
                             extra_key, parent);
    if (b == kNoBlock) break;
    chain.push_back(b);
    parent = b;
  }
  // Other groups: block k is anchored to chain[k]. A hit of n blocks needs
  // the blocks of every group outside its hole at n * bs; take the longest
  // n that has them.
  const std::size_t ng = groups_.size();
  std::vector<std::vector<BlockId>> found(ng);
  found[0] = chain;
  for (std::size_t g = 1; g < ng; ++g) {
    for (std::size_t k = 0; k < chain.size(); ++k) {
      const auto kk = static_cast<std::int32_t>(k);
      found[g].push_back(pool_.lookup(hashes[k], block_tokens(tokens, kk, bs), extra_key, chain[k],
                                      static_cast<std::int32_t>(g)));
    }
  }
  auto n = static_cast<std::int32_t>(chain.size());
  for (; n > 0; --n) {
    bool ok = true;
    for (std::size_t g = 1; g < ng && ok; ++g) {
      const BlockRange h = hole(g, policy, std::int64_t{n} * bs);
      for (std::int32_t k = 0; k < n && ok; ++k)
        ok = (k >= h.lo && k < h.hi) || found[g][static_cast<std::size_t>(k)] != kNoBlock;
    }
    if (ok) break;
  }
  hit.num_tokens = n * bs;
  if (n == 0) return hit;
  hit.groups.resize(ng);
  for (std::size_t g = 0; g < ng; ++g) {
    auto& out = hit.groups[g];
    out.assign(found[g].begin(), found[g].begin() + n);
    const BlockRange h = adopted_hole(g, policy, n);
    std::fill(out.begin() + h.lo, out.begin() + h.hi, kNoBlock);
  }
  return hit;
}

void KvCacheManager::record_prefix_query(std::int64_t query_tokens, std::int64_t hit_tokens) {
  prefix_query_tokens_ += query_tokens;
  prefix_hit_tokens_ += hit_tokens;
}

BlockRange KvCacheManager::adopted_hole(std::size_t g, const AttentionWindow& policy,
                                        std::int32_t n) const {
  BlockRange h = hole(g, policy, std::int64_t{n} * pool_.block_size());
  // Group 0 keeps a hit's last block: the cache chain continues from it.
  if (g == 0) h.hi = std::max(h.lo, std::min(h.hi, n - 1));
  h.hi = std::min(h.hi, n);
  h.lo = std::min(h.lo, h.hi);
  return h;
}

void KvCacheManager::release_skipped(SeqState& s, std::int32_t num_computed) {
  for (std::size_t g = 0; g < s.tables.size(); ++g) {
    BlockTable& t = s.tables[g];
    const BlockRange h = hole(g, s.policy, num_computed);
    const std::int32_t end = std::min(h.hi, t.size());
    if (end <= h.lo) continue;
    t.num_sink = h.lo;
    // Oldest first: the LRU free list then evicts them in position order.
    for (std::int32_t k = std::max(t.num_skipped, h.lo); k < end; ++k) {
      BlockId& b = t.blocks[static_cast<std::size_t>(k)];
      if (b != kNoBlock) pool_.release(b);
      b = kNoBlock;
    }
    t.num_skipped = std::max(t.num_skipped, end);
  }
}

std::optional<SlotAllocation> KvCacheManager::allocate_slots(SeqId seq, std::int32_t num_computed,
                                                             std::int32_t num_new,
                                                             const PrefixHit& hit,
                                                             const AttentionWindow& policy) {
  const std::int32_t bs = pool_.block_size();
  const std::size_t ng = groups_.size();
  FOLIO_CHECK(num_new > 0 && num_computed >= 0);
  const bool with_hit = hit.num_tokens > 0;
  auto found = seqs_.find(seq);
  if (with_hit)
    FOLIO_CHECK(found == seqs_.end() && num_computed == hit.num_tokens && hit.groups.size() == ng &&
                    static_cast<std::int32_t>(hit.groups[0].size()) * bs == hit.num_tokens,
                "prefix hits must start a fresh table and cover the computed tokens");
  if (found != seqs_.end()) release_skipped(found->second, num_computed);
  SeqState empty;
  empty.tables.resize(ng);
  empty.policy = policy;
  const SeqState& old = found != seqs_.end() ? found->second : empty;
  FOLIO_CHECK(with_hit || num_computed <= old.tables[0].num_slots,
              "computing past the sequence's reserved slots");

  const std::int32_t need = (num_computed + num_new + bs - 1) / bs;
  // The first position written lies in an existing block only when that
  // block is partly filled; if other tables share it, copy it first.
  const std::int32_t write_block = num_computed / bs;
  std::int32_t cost = 0;
  std::vector<bool> cow(ng, false);
  for (std::size_t g = 0; g < ng; ++g) {
    const BlockTable& t = old.tables[g];
    const std::int32_t have =
        t.size() + (with_hit ? static_cast<std::int32_t>(hit.groups[g].size()) : 0);
    cost += std::max(0, need - have);
    cow[g] =
        write_block < t.size() && t[write_block] != kNoBlock && pool_.ref_count(t[write_block]) > 1;
    cost += cow[g] ? 1 : 0;
    if (with_hit)  // hits sitting on the free list leave it when touched
      for (BlockId b : hit.groups[g]) cost += b != kNoBlock && pool_.ref_count(b) == 0 ? 1 : 0;
  }
  if (cost > pool_.num_free()) return std::nullopt;

  SlotAllocation out;
  SeqState next = old;
  {
    PoolTransaction tx(pool_);
    // Every group's hits leave the free list before any group allocates.
    if (with_hit)
      for (const auto& blocks : hit.groups)
        for (BlockId b : blocks)
          if (b != kNoBlock) pool_.touch(b);
    for (std::size_t g = 0; g < ng; ++g) {
      BlockTable& table = next.tables[g];
      const BlockTable& was = old.tables[g];
      std::int32_t first_changed = was.size();
      if (with_hit) {
        table.blocks = hit.groups[g];
        const BlockRange h = adopted_hole(g, policy, hit.num_tokens / bs);
        table.num_sink = h.lo;
        table.num_skipped = h.hi;
        first_changed = 0;
      }
      if (cow[g]) {
        std::vector<BlockId> dst;
        FOLIO_CHECK(pool_.allocate(1, dst));
        BlockId src = was[write_block];
        FOLIO_CHECK(!pool_.is_cached(src), "a cached (full) block is never written");
        pool_.release(src);
        table.blocks[static_cast<std::size_t>(write_block)] = dst[0];
        out.cow.push_back({src, dst[0]});
        first_changed = std::min(first_changed, write_block);
      }
      FOLIO_CHECK(pool_.allocate(std::max(0, need - table.size()), table.blocks));
      table.num_slots = std::max(was.num_slots, num_computed + num_new);
      TableDelta d;
      d.num_sink = table.num_sink;
      d.num_skipped = table.num_skipped;
      d.blocks_from = first_changed;
      d.block_ids.assign(table.blocks.begin() + first_changed, table.blocks.end());
      out.tables.push_back(std::move(d));
    }
    tx.commit();
  }
  if (with_hit) {  // every block of a hit is cached already
    next.num_cached_blocks = next.tables[0].size();
    next.cache_parent = next.tables[0].blocks.back();
  }
  seqs_[seq] = std::move(next);
  return out;
}

bool KvCacheManager::cache_block_all_groups(SeqState& s, std::int32_t k, const BlockHash& hash,
                                            std::span<const TokenId> tokens,
                                            std::uint64_t extra_key) {
  BlockId anchor = kNoBlock;
  for (std::size_t g = 0; g < s.tables.size(); ++g) {
    const BlockId b = s.tables[g][k];
    // Group 0 chains to its previous block; the others anchor to group 0's.
    const BlockId parent = g == 0 ? s.cache_parent : anchor;
    BlockId rep = b;
    if (b == kNoBlock) {
      if (g == 0) return false;  // released uncached: the chain cannot continue
      continue;                  // a placeholder: nothing to offer
    }
    if (!pool_.is_cached(b))  // else a prefix hit or a block shared with a fork
      rep = pool_.cache_block(b, hash, tokens, extra_key, parent, static_cast<std::int32_t>(g));
    if (rep == kNoBlock) return false;  // collision: later blocks could not be verified
    if (g == 0) anchor = rep;
  }
  s.cache_parent = anchor;
  return true;
}

void KvCacheManager::cache_full_blocks(SeqId seq, std::span<const TokenId> tokens,
                                       std::int32_t num_computed, std::uint64_t extra_key,
                                       std::vector<BlockHash>& hashes) {
  if (!caching_) return;
  auto it = seqs_.find(seq);
  FOLIO_CHECK(it != seqs_.end(), "caching blocks of an unknown sequence");
  SeqState& s = it->second;
  const std::int32_t bs = pool_.block_size();
  const std::int32_t num_full = std::min(num_computed / bs, s.tables[0].size());
  if (s.cache_broken || num_full <= s.num_cached_blocks) return;
  ensure_hashes(tokens, num_full, extra_key, hashes);
  for (std::int32_t k = s.num_cached_blocks; k < num_full; ++k) {
    if (!cache_block_all_groups(s, k, hashes[static_cast<std::size_t>(k)],
                                block_tokens(tokens, k, bs), extra_key)) {
      s.cache_broken = true;
      break;
    }
    s.num_cached_blocks = k + 1;
  }
}

void KvCacheManager::fork(SeqId parent, SeqId child) {
  auto it = seqs_.find(parent);
  FOLIO_CHECK(it != seqs_.end(), "forking an unknown sequence");
  FOLIO_CHECK(seqs_.find(child) == seqs_.end(), "fork target already has a table");
  SeqState copy = it->second;
  for (const BlockTable& t : copy.tables)
    for (BlockId b : t.blocks)
      if (b != kNoBlock) pool_.touch(b);
  seqs_.emplace(child, std::move(copy));
}

void KvCacheManager::free(SeqId seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return;
  for (auto t = it->second.tables.rbegin(); t != it->second.tables.rend(); ++t)
    for (auto b = t->blocks.rbegin(); b != t->blocks.rend(); ++b)
      if (*b != kNoBlock) pool_.release(*b);
  seqs_.erase(it);
}

void KvCacheManager::truncate(SeqId seq, std::int32_t num_tokens) {
  auto it = seqs_.find(seq);
  FOLIO_CHECK(it != seqs_.end(), "truncating an unknown sequence");
  FOLIO_CHECK(num_tokens >= 0);
  SeqState& s = it->second;
  if (num_tokens >= s.tables[0].num_slots) return;
  const std::int32_t bs = pool_.block_size();
  const std::int32_t keep = (num_tokens + bs - 1) / bs;
  FOLIO_CHECK(keep >= s.num_cached_blocks, "truncating into cached blocks");
  for (BlockTable& t : s.tables) {
    FOLIO_CHECK(t.num_released() == 0 || keep >= t.num_skipped, "truncating into released blocks");
    while (t.size() > keep) {
      pool_.release(t.blocks.back());
      t.blocks.pop_back();
    }
    t.num_slots = num_tokens;
  }
}

const BlockTable* KvCacheManager::table(SeqId seq, std::int32_t group) const {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return nullptr;
  FOLIO_CHECK(group >= 0 && group < num_groups(), "no such KV layer group");
  return &it->second.tables[static_cast<std::size_t>(group)];
}

KvStats KvCacheManager::stats() const {
  KvStats s;
  s.blocks_total = pool_.num_blocks();
  s.blocks_used = pool_.num_used();
  s.blocks_cached_free = pool_.num_cached_free();
  s.blocks_free = pool_.num_free();
  const std::int64_t bs = pool_.block_size();
  for (const auto& [id, seq] : seqs_)
    for (const BlockTable& t : seq.tables)
      s.live_tokens += std::max<std::int64_t>(0, t.num_slots - bs * t.num_released());
  s.allocated_slots = static_cast<std::int64_t>(s.blocks_used) * bs;
  s.prefix_query_tokens = prefix_query_tokens_;
  s.prefix_hit_tokens = prefix_hit_tokens_;
  return s;
}

}  // namespace folio::kv
