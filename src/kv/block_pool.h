// kv/block_pool.h: the fixed set of physical KV blocks and who holds them.
//
// The pool owns bookkeeping only (the K/V bytes live in the runner's
// storage, indexed by the same block ids). Each block has a reference count
// (how many block tables hold it) and, once full and computed, may carry a
// prefix-cache identity: its chained hash, its layer group (kv_groups.h:
// the same tokens have one block per group), its token ids, its extra key
// and a link to its parent block (in group 0 the previous block of the
// prefix; in another group the group-0 block of the same positions, which
// anchors it to a verified prefix even when its own predecessors were
// released by a sliding window). Invariants (checked by verify()):
//
//   ref == 0  <=>  the block is on the free list (FreeBlockList, LRU order)
//   cached    <=>  the hash map points at the block
//
// A cached block whose ref drops to 0 stays cached on the free list and
// can be revived by a prefix hit (touch()); it is evicted only when
// allocate() pops it for reuse, so eviction is oldest-freed-first.
//
// Hits are verified, not trusted: lookup() compares token ids, the extra key
// and the parent link (parent block id plus its generation, bumped whenever
// a block is reallocated), so a hash collision is a miss, never wrong K/V.
//
// Transactions: between begin_transaction() and commit/rollback every
// mutation journals the block's previous state (metadata and free-list
// neighbour); rollback undoes them in reverse order, which restores the
// pool exactly, including the LRU order and evicted cache entries. Use the
// RAII PoolTransaction (pool_transaction.h) rather than calling these.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "kv/block_hash.h"
#include "kv/free_block_list.h"
#include "kv/types.h"

namespace folio::kv {

class BlockPool {
 public:
  BlockPool(std::int32_t num_blocks, std::int32_t block_size);

  std::int32_t num_blocks() const { return num_blocks_; }
  std::int32_t block_size() const { return block_size_; }
  // Blocks on the free list (includes cached-but-unreferenced ones).
  std::int32_t num_free() const { return free_.size(); }
  std::int32_t num_used() const { return num_blocks_ - free_.size(); }
  std::int32_t num_cached_free() const { return cached_free_; }
  std::int32_t num_cached() const { return static_cast<std::int32_t>(map_.size()); }

  std::int32_t ref_count(BlockId b) const { return meta(b).ref; }
  bool is_cached(BlockId b) const { return meta(b).cached; }

  // All or nothing: appends `n` blocks (ref 1) to `out` and returns true, or
  // returns false and changes nothing when fewer than `n` are free. Popped
  // cached blocks are evicted from the prefix map.
  bool allocate(std::int32_t n, std::vector<BlockId>& out);
  // Adds a reference (a prefix hit or a fork); revives a free cached block.
  void touch(BlockId b);
  // Drops a reference; at 0 the block goes to the back of the free list.
  void release(BlockId b);

  // Registers full block `b` under `hash`. Returns the block that now
  // represents this content: `b` when inserted, the existing block when an
  // identical one (same tokens, extra key and parent) is already cached, or
  // kNoBlock when the hash is taken by different content (a collision).
  BlockId cache_block(BlockId b, const BlockHash& hash, std::span<const TokenId> tokens,
                      std::uint64_t extra_key, BlockId parent, std::int32_t group = 0);
  // The cached block for `hash` if its tokens, extra key and parent match;
  // kNoBlock otherwise. `parent` is the previous block of the prefix walk.
  BlockId lookup(const BlockHash& hash, std::span<const TokenId> tokens, std::uint64_t extra_key,
                 BlockId parent, std::int32_t group = 0) const;
  // Forgets every cache entry (blocks keep their references).
  void clear_cache();

  void begin_transaction();
  void commit_transaction();
  void rollback_transaction();
  bool in_transaction() const { return journaling_; }

  // Free list front-to-back: the exact eviction / reuse order (O(n)).
  std::vector<BlockId> free_list_order() const { return free_.to_vector(); }
  // Checks the invariants above; returns "" or a description of the first
  // violation (tests run it every simulated step).
  std::string verify() const;

 private:
  struct Meta {
    std::int32_t ref = 0;
    bool cached = false;
    BlockHash hash;
    std::uint64_t extra_key = 0;
    std::int32_t group = 0;
    BlockId parent = kNoBlock;
    std::uint32_t parent_gen = 0;
    std::uint32_t gen = 0;  // bumped on every allocation (content replaced)
  };
  struct JournalEntry {
    BlockId block;
    Meta meta;
    bool in_list;
    BlockId prev;  // free-list neighbour before the change
  };

  const Meta& meta(BlockId b) const;
  Meta& meta(BlockId b);
  std::span<const TokenId> tokens_of(BlockId b) const;
  bool content_matches(BlockId b, std::span<const TokenId> tokens, std::uint64_t extra_key,
                       BlockId parent, std::int32_t group) const;
  void journal(BlockId b);
  // Free-list and cache-flag changes go through these to keep cached_free_.
  void list_remove(BlockId b);
  void list_insert_after(BlockId prev, BlockId b);
  void uncache(BlockId b);

  std::int32_t num_blocks_;
  std::int32_t block_size_;
  std::vector<Meta> meta_;
  std::vector<TokenId> tokens_;  // [num_blocks x block_size], valid while cached
  FreeBlockList free_;
  struct CacheKey {
    BlockHash hash;
    std::int32_t group = 0;
    bool operator==(const CacheKey&) const = default;
  };
  struct CacheKeyHasher {
    std::size_t operator()(const CacheKey& k) const {
      return BlockHashHasher{}(k.hash) ^
             (static_cast<std::size_t>(k.group) * 0xC2B2AE3D27D4EB4Full);
    }
  };
  std::unordered_map<CacheKey, BlockId, CacheKeyHasher> map_;
  std::int32_t cached_free_ = 0;
  bool journaling_ = false;
  std::vector<JournalEntry> journal_;
};

}  // namespace folio::kv
