// grammar/compiled_grammar.h: a grammar bound to one vocabulary, with the
// adaptive token-mask cache that makes each step's mask cheap.
//
// The cache is keyed by the top of a stack: the class element being
// matched, its automaton state, and where up to kContextFrames - 1 frames
// below it continue (a StackKey; frames are added only while the shorter
// key leaves more than kMaxUncertain tokens open). For each key it runs every token through
// the grammar with only that much of the stack (below it the context is
// unknown: kBaseParent) and sorts the tokens three ways (xgrammar's idea,
// with more context so fewer tokens are left open):
//   accepted   the token matches within the known frames, or leaves them
//              exactly at its last byte: allowed whatever lies below;
//   rejected   the token fails before the known frames could end: never
//              allowed;
//   uncertain  the frames can end inside the token and the rest must match
//              the context below: checked per step against the real stack.
// Inside a JSON string nearly every token is accepted; after a value, the
// tokens that begin with whitespace and go on are decided by the frames of
// the object around it. A step costs a bitset OR per stack and a few short
// checks. Entries are computed on first use, once per compiled grammar,
// whatever the number of requests using it (thread-safe).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/token_vocab.h"

namespace folio::grammar {

// Frames of context in a cache key (the top and up to this many - 1 below
// it), added one at a time while an entry leaves more than kMaxUncertain
// tokens to check per step.
inline constexpr std::size_t kContextFrames = 4;
inline constexpr std::size_t kMaxUncertain = 128;

// (elem, sub) of the top, then the elem of each frame below it; a trailing
// kNoParent marks a stack that ends there (the root's end is known).
using StackKey = std::vector<std::uint32_t>;

struct StackKeyHash {
  std::size_t operator()(const StackKey& k) const {
    std::uint64_t h = 1469598103934665603ull;
    for (const std::uint32_t v : k) h = (h ^ v) * 1099511628211ull;
    return static_cast<std::size_t>(h);
  }
};

// An entry's accepted tokens as a bitset (a bit per token id) when many,
// else as a list of ids (most places inside JSON structure allow a few
// dozen tokens: a list is a fraction of a 262144-token vocabulary's 32 KiB).
struct MaskEntry {
  std::vector<std::uint64_t> accepted_bits;  // empty when the list is used
  std::vector<TokenId> accepted_ids;
  std::vector<TokenId> uncertain;

  void add_accepted_to(std::span<std::uint64_t> bits) const;
  std::size_t bytes() const;
};

// Bounds on one grammar's cache: past this many bytes of entries the cache
// starts over (entries are recomputed as met; a grammar whose positions
// never repeat cannot grow it without bound).
inline constexpr std::size_t kMaxMaskCacheBytes = std::size_t{64} << 20;

class CompiledGrammar {
 public:
  CompiledGrammar(Grammar g, std::shared_ptr<const TokenVocab> vocab);

  const Grammar& grammar() const { return grammar_; }
  const TokenVocab& vocab() const { return *vocab_; }
  std::size_t mask_words() const { return (vocab_->size() + 63) / 64; }

  // Shared: an entry stays valid for its holder even if the cache starts over.
  std::shared_ptr<const MaskEntry> entry(const StackKey& key) const;
  std::size_t cached_entries() const;
  std::size_t cache_bytes() const;

 private:
  std::shared_ptr<const MaskEntry> compute(const StackKey& key) const;

  Grammar grammar_;
  std::shared_ptr<const TokenVocab> vocab_;
  mutable std::mutex mu_;
  mutable std::unordered_map<StackKey, std::shared_ptr<const MaskEntry>, StackKeyHash> cache_;
  mutable std::size_t cache_bytes_ = 0;
};

}  // namespace folio::grammar
