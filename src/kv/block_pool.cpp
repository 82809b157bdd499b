#include "kv/block_pool.h"

#include <algorithm>
#include <string>

#include "base/error.h"

namespace folio::kv {

BlockPool::BlockPool(std::int32_t num_blocks, std::int32_t block_size)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      meta_(static_cast<std::size_t>(num_blocks)),
      tokens_(static_cast<std::size_t>(num_blocks) * static_cast<std::size_t>(block_size)),
      free_(num_blocks) {
  FOLIO_CHECK(num_blocks > 0 && block_size > 0);
}

const BlockPool::Meta& BlockPool::meta(BlockId b) const {
  FOLIO_CHECK(b >= 0 && b < num_blocks_, "block id out of range");
  return meta_[static_cast<std::size_t>(b)];
}

BlockPool::Meta& BlockPool::meta(BlockId b) {
  FOLIO_CHECK(b >= 0 && b < num_blocks_, "block id out of range");
  return meta_[static_cast<std::size_t>(b)];
}

std::span<const TokenId> BlockPool::tokens_of(BlockId b) const {
  return {tokens_.data() + static_cast<std::size_t>(b) * static_cast<std::size_t>(block_size_),
          static_cast<std::size_t>(block_size_)};
}

void BlockPool::journal(BlockId b) {
  if (!journaling_) return;
  bool in = free_.contains(b);
  journal_.push_back({b, meta(b), in, in ? free_.prev_of(b) : kNoBlock});
}

void BlockPool::list_remove(BlockId b) {
  free_.remove(b);
  if (meta(b).cached) --cached_free_;
}

void BlockPool::list_insert_after(BlockId prev, BlockId b) {
  free_.insert_after(prev, b);
  if (meta(b).cached) ++cached_free_;
}

void BlockPool::uncache(BlockId b) {
  Meta& m = meta(b);
  if (!m.cached) return;
  auto it = map_.find({m.hash, m.group});
  if (it != map_.end() && it->second == b) map_.erase(it);
  m.cached = false;
  if (free_.contains(b)) --cached_free_;
}

bool BlockPool::allocate(std::int32_t n, std::vector<BlockId>& out) {
  FOLIO_CHECK(n >= 0);
  if (n > free_.size()) return false;
  for (std::int32_t i = 0; i < n; ++i) {
    BlockId b = free_.front();
    journal(b);
    list_remove(b);
    uncache(b);  // evicts the least recently freed cached prefix
    Meta& m = meta(b);
    m.ref = 1;
    ++m.gen;
    out.push_back(b);
  }
  return true;
}

void BlockPool::touch(BlockId b) {
  journal(b);
  Meta& m = meta(b);
  if (m.ref == 0) list_remove(b);
  ++m.ref;
}

void BlockPool::release(BlockId b) {
  Meta& m = meta(b);
  FOLIO_CHECK(m.ref > 0, "releasing a free block");
  journal(b);
  if (--m.ref == 0) {
    free_.push_back(b);
    if (m.cached) ++cached_free_;
  }
}

bool BlockPool::content_matches(BlockId b, std::span<const TokenId> tokens, std::uint64_t extra_key,
                                BlockId parent, std::int32_t group) const {
  const Meta& m = meta(b);
  if (m.extra_key != extra_key || m.parent != parent || m.group != group) return false;
  if (parent != kNoBlock && meta(parent).gen != m.parent_gen) return false;
  auto own = tokens_of(b);
  return std::equal(own.begin(), own.end(), tokens.begin(), tokens.end());
}

BlockId BlockPool::cache_block(BlockId b, const BlockHash& hash, std::span<const TokenId> tokens,
                               std::uint64_t extra_key, BlockId parent, std::int32_t group) {
  FOLIO_CHECK(tokens.size() == static_cast<std::size_t>(block_size_), "caching a partial block");
  FOLIO_CHECK(meta(b).ref > 0 && !meta(b).cached, "caching a free or already cached block");
  auto it = map_.find({hash, group});
  if (it != map_.end())
    return content_matches(it->second, tokens, extra_key, parent, group) ? it->second : kNoBlock;
  journal(b);
  Meta& m = meta(b);
  m.cached = true;
  m.hash = hash;
  m.extra_key = extra_key;
  m.group = group;
  m.parent = parent;
  m.parent_gen = parent == kNoBlock ? 0 : meta(parent).gen;
  std::copy(tokens.begin(), tokens.end(),
            tokens_.begin() + static_cast<std::ptrdiff_t>(b) * block_size_);
  map_.emplace(CacheKey{hash, group}, b);
  return b;
}

BlockId BlockPool::lookup(const BlockHash& hash, std::span<const TokenId> tokens,
                          std::uint64_t extra_key, BlockId parent, std::int32_t group) const {
  auto it = map_.find({hash, group});
  if (it == map_.end()) return kNoBlock;
  return content_matches(it->second, tokens, extra_key, parent, group) ? it->second : kNoBlock;
}

void BlockPool::clear_cache() {
  FOLIO_CHECK(!journaling_, "clear_cache inside a transaction");
  for (BlockId b = 0; b < num_blocks_; ++b) uncache(b);
}

void BlockPool::begin_transaction() {
  FOLIO_CHECK(!journaling_, "nested KV pool transaction");
  journaling_ = true;
  journal_.clear();
}

void BlockPool::commit_transaction() {
  FOLIO_CHECK(journaling_);
  journaling_ = false;
  journal_.clear();
}

void BlockPool::rollback_transaction() {
  FOLIO_CHECK(journaling_);
  journaling_ = false;
  // Undo newest first: when an entry is undone the pool is exactly as it
  // was right after that change, so its recorded neighbour is in place.
  for (auto it = journal_.rbegin(); it != journal_.rend(); ++it) {
    BlockId b = it->block;
    if (free_.contains(b)) list_remove(b);
    uncache(b);
    meta(b) = it->meta;  // off the list here, so no counter moves
    if (it->meta.cached) map_.emplace(CacheKey{it->meta.hash, it->meta.group}, b);
    if (it->in_list) list_insert_after(it->prev, b);
  }
  journal_.clear();
}

std::string BlockPool::verify() const {
  std::int32_t cached_free = 0;
  for (BlockId b = 0; b < num_blocks_; ++b) {
    const Meta& m = meta(b);
    if (m.ref < 0) return "block " + std::to_string(b) + " has a negative ref count";
    if ((m.ref == 0) != free_.contains(b))
      return "block " + std::to_string(b) + " ref " + std::to_string(m.ref) +
             " disagrees with free-list membership";
    if (m.cached) {
      auto it = map_.find({m.hash, m.group});
      if (it == map_.end() || it->second != b)
        return "cached block " + std::to_string(b) + " missing from the hash map";
      if (m.ref == 0) ++cached_free;
    }
  }
  for (const auto& [key, b] : map_)
    if (!meta(b).cached || !(meta(b).hash == key.hash) || meta(b).group != key.group)
      return "hash map entry for an uncached block";
  if (cached_free != cached_free_) return "cached-free counter out of date";
  return "";
}

}  // namespace folio::kv
