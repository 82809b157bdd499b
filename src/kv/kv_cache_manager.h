// kv/kv_cache_manager.h: block tables of live sequences over one BlockPool,
// with copy-on-write sharing and automatic prefix caching.
//
// The scheduler talks to KV memory only through this class, in tokens:
//
//   find_longest_prefix(tokens)           -> cached full blocks to reuse
//   allocate_slots(seq, computed, new, hits) -> table delta + COW copies, or
//                                            nothing at all (all or nothing)
//   cache_full_blocks(seq, tokens, computed) after the step computed them
//   fork(parent, child)                   n > 1 samples share the blocks
//   truncate(seq, num_tokens)             speculative tokens rejected: slots
//                                            past the accepted ones released
//   free(seq)                             finished, aborted or preempted
//
// Sharing: a block held by several tables (a fork, or a prefix hit) is never
// written in place. Full blocks are never written again anyway; the only
// shared block that can be written is a fork's last, partial block, and
// the first sequence to write it gets a private copy (CowCopy for the
// runner) while the others keep the original.
//
// Free order: a sequence's blocks are released last block first, so its
// tail (least likely to be shared by other prompts) is evicted before its
// head when the pool runs dry.
//
// Layer groups (kv_groups.h): with several groups a sequence has one table
// per group, all over the one pool and all the same length. Before each
// allocation a sliding group releases the blocks wholly before the window of
// the step's first query (they stay in the prefix cache until evicted). A
// prefix hit needs group 0's whole chain and, in a sliding group, only the
// blocks of the last window - 1 positions; the others are placeholders.
//
// A sequence under a sink + window policy (base/attention_window.h, given
// with its first allocation) releases, in every group the policy narrows,
// the blocks between its sink blocks and its window. Its K/V differ from
// full attention's past the window, so callers key its prefix-cache entries
// apart (window_cache_key in the extra key); its hits need the sink and
// window blocks of every group, group 0's chain included.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "kv/block_hash.h"
#include "kv/block_pool.h"
#include "kv/block_table.h"
#include "kv/kv_groups.h"
#include "kv/types.h"

namespace folio::kv {

struct KvCacheConfig {
  std::int32_t num_blocks = 0;
  std::int32_t block_size = 16;
  bool enable_prefix_caching = true;
  BlockHashFn hash_fn = nullptr;     // nullptr: hash_block (xxh3-128); tests inject collisions
  std::vector<KvGroup> groups = {};  // layer groups (kv_groups.h); empty: one full group
};

// What changed in one sequence's block tables, one TableDelta per group
// (types.h), and the copies to make before the step.
struct SlotAllocation {
  std::vector<TableDelta> tables;
  std::vector<CowCopy> cow;
};

struct PrefixHit {
  // Per group, the blocks of the hit (not yet referenced; pass the hit to
  // allocate_slots); kNoBlock where a sliding group needs none.
  std::vector<std::vector<BlockId>> groups;
  std::int32_t num_tokens = 0;  // blocks per group * block_size
  // Group 0's blocks (a copy).
  std::vector<BlockId> blocks() const {
    return groups.empty() ? std::vector<BlockId>{} : groups[0];
  }
};

// Utilization snapshot. live_tokens counts the slots each table holds for
// its reserved positions (a block shared by k tables counts k times; a
// released placeholder none); allocated_slots counts physical slots in used
// blocks, so live/allocated is the paging efficiency.
struct KvStats {
  std::int32_t blocks_total = 0;
  std::int32_t blocks_used = 0;
  std::int32_t blocks_cached_free = 0;  // unreferenced but holding a cached prefix
  std::int32_t blocks_free = 0;         // on the free list (includes cached-free)
  std::int64_t live_tokens = 0;
  std::int64_t allocated_slots = 0;
  std::int64_t prefix_query_tokens = 0;
  std::int64_t prefix_hit_tokens = 0;
};

class KvCacheManager {
 public:
  explicit KvCacheManager(const KvCacheConfig& config);

  std::int32_t block_size() const { return pool_.block_size(); }
  std::int32_t num_blocks() const { return pool_.num_blocks(); }
  std::span<const KvGroup> groups() const { return groups_; }
  std::int32_t num_groups() const { return static_cast<std::int32_t>(groups_.size()); }
  bool prefix_caching() const { return caching_; }
  // Disabling forgets every cached prefix; enabling caches from then on.
  void set_prefix_caching(bool enabled);

  // Longest run of cached full blocks matching the start of `tokens`
  // (callers pass all but the last token, so at least one is computed).
  // Appends to `hashes`, the sequence's memo of its full-block hashes.
  PrefixHit find_longest_prefix(std::span<const TokenId> tokens, std::uint64_t extra_key,
                                std::vector<BlockHash>& hashes,
                                const AttentionWindow& policy = {}) const;
  // Counts a prefix query for the stats (done on admission, not per probe).
  void record_prefix_query(std::int64_t query_tokens, std::int64_t hit_tokens);

  // Reserves slots for positions [0, num_computed + num_new) of `seq`,
  // which computes positions [num_computed, num_computed + num_new) next.
  // A `hit` (only for a sequence without a table) is adopted as its first
  // blocks and must cover exactly num_computed tokens. Returns nullopt and
  // changes nothing more when the pool cannot supply every block needed;
  // the blocks a sliding window no longer reads at num_computed are
  // released first either way. `policy` (a sequence's sink + window
  // attention) is taken when the sequence gets its table and kept.
  std::optional<SlotAllocation> allocate_slots(SeqId seq, std::int32_t num_computed,
                                               std::int32_t num_new, const PrefixHit& hit = {},
                                               const AttentionWindow& policy = {});
  // Registers the blocks of `seq` that became full with its first
  // `num_computed` tokens in the prefix cache.
  void cache_full_blocks(SeqId seq, std::span<const TokenId> tokens, std::int32_t num_computed,
                         std::uint64_t extra_key, std::vector<BlockHash>& hashes);
  // `child` shares every block of `parent` (reference counts +1).
  void fork(SeqId parent, SeqId child);
  // Releases every block of `seq` (no-op for an unknown seq).
  void free(SeqId seq);
  // Shrinks the reserved slots of `seq` to its first `num_tokens` positions
  // (rejected speculative tokens): blocks holding only later positions are
  // released, last first. Those blocks were never cached (only computed,
  // full blocks are). No-op when it already holds no more.
  void truncate(SeqId seq, std::int32_t num_tokens);

  // Group `group`'s table of `seq`, or nullptr for an unknown seq.
  const BlockTable* table(SeqId seq, std::int32_t group = 0) const;
  std::int32_t num_seqs() const { return static_cast<std::int32_t>(seqs_.size()); }
  // Calls f(SeqId, group, const BlockTable&) for every table of every live
  // sequence (any order).
  template <class F>
  void for_each_table(F&& f) const {
    for (const auto& [id, s] : seqs_)
      for (std::size_t g = 0; g < s.tables.size(); ++g)
        f(id, static_cast<std::int32_t>(g), s.tables[g]);
  }
  const BlockPool& pool() const { return pool_; }
  BlockPool& pool() { return pool_; }
  KvStats stats() const;

 private:
  struct SeqState {
    std::vector<BlockTable> tables;      // per group, all of one length and num_slots
    std::int32_t num_cached_blocks = 0;  // leading blocks already offered to the cache
    BlockId cache_parent = kNoBlock;     // group 0's cached block for the last offered one
    bool cache_broken = false;           // a collision stopped caching this sequence
    AttentionWindow policy;              // its sink + window policy (off: none)
  };
  void ensure_hashes(std::span<const TokenId> tokens, std::int32_t num_full,
                     std::uint64_t extra_key, std::vector<BlockHash>& hashes) const;
  // Blocks group g no longer needs under `policy` once num_computed are computed.
  BlockRange hole(std::size_t g, const AttentionWindow& policy, std::int64_t num_computed) const;
  // The hole of a prefix hit of n blocks as adopted (inside the hit; group 0
  // keeps its last block).
  BlockRange adopted_hole(std::size_t g, const AttentionWindow& policy, std::int32_t n) const;
  // Releases what the sliding groups of `s` no longer read at num_computed.
  void release_skipped(SeqState& s, std::int32_t num_computed);
  // Offers block k of every group of `s` (tokens `block_tokens`) to the
  // cache; false on a collision.
  bool cache_block_all_groups(SeqState& s, std::int32_t k, const BlockHash& hash,
                              std::span<const TokenId> block_tokens, std::uint64_t extra_key);

  BlockPool pool_;
  bool caching_;
  BlockHashFn hash_fn_;
  std::vector<KvGroup> groups_;  // at least one
  std::unordered_map<SeqId, SeqState> seqs_;
  std::int64_t prefix_query_tokens_ = 0;
  std::int64_t prefix_hit_tokens_ = 0;
};

}  // namespace folio::kv
