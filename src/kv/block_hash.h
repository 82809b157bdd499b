// kv/block_hash.h: identity of a full KV block for automatic prefix caching.
//
// A full block's K/V depends on every token before it, so its key chains
// the parent block's hash with the block's own token ids (as vLLM does):
//
//   h0 = H(root,  tokens[0 .. B),   extra)
//   h1 = H(h0,    tokens[B .. 2B),  extra)      B = block_size
//
// `extra` is reserved for whatever else changes K/V for identical tokens
// (a LoRA adapter id, a per-tenant cache salt). H is xxh3-128; a 128-bit key
// makes accidental collisions negligible, and the pool additionally verifies
// token ids and the parent link on every hit (block_pool.h), so a collision
// can cost a cache miss but never a wrong answer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kv/types.h"

namespace folio::kv {

struct BlockHash {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  bool operator==(const BlockHash&) const = default;
};

struct BlockHashHasher {
  std::size_t operator()(const BlockHash& h) const {
    return static_cast<std::size_t>(h.lo ^ (h.hi * 0x9E3779B97F4A7C15ull));
  }
};

// `parent` is nullptr for a sequence's first block.
using BlockHashFn = BlockHash (*)(const BlockHash* parent, std::span<const TokenId> tokens,
                                  std::uint64_t extra_key);

// The default chained xxh3-128 hash.
BlockHash hash_block(const BlockHash* parent, std::span<const TokenId> tokens,
                     std::uint64_t extra_key);

}  // namespace folio::kv
