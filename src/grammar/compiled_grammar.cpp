// grammar/compiled_grammar.cpp: one cache entry = one walk over the sorted
// vocabulary, reusing the states of the prefix a token shares with the one
// before it, and skipping every token under a prefix that died.
#include "grammar/compiled_grammar.h"

#include "grammar/pda.h"

namespace folio::grammar {

CompiledGrammar::CompiledGrammar(Grammar g, std::shared_ptr<const TokenVocab> vocab)
    : grammar_(std::move(g)), vocab_(std::move(vocab)) {}

const MaskEntry& CompiledGrammar::entry(const StackKey& key) const {
  std::lock_guard lock(mu_);
  auto it = cache_.find(key);
  if (it == cache_.end()) it = cache_.emplace(key, compute(key)).first;
  return *it->second;
}

std::size_t CompiledGrammar::cached_entries() const {
  std::lock_guard lock(mu_);
  return cache_.size();
}

std::unique_ptr<MaskEntry> CompiledGrammar::compute(const StackKey& key) const {
  auto out = std::make_unique<MaskEntry>();
  out->accepted.assign(mask_words(), 0);
  NodeTable nodes;
  Pda pda(grammar_);
  // states[d]: after the first d bytes of the current token; ended[d]: some
  // state at depth 1..d reached the top rule's end (base_end).
  std::vector<MatchState> states(1);
  std::vector<bool> ended(1, false);
  // The key's frames as a stack: the bottom frame first.
  std::size_t frames = key.size() - 1;  // key[0..1] is the top's (elem, sub)
  std::uint32_t below = kBaseParent;
  if (key.back() == kNoParent) {
    below = kNoParent;
    --frames;
  }
  for (std::size_t f = frames; f >= 2; --f) below = nodes.intern(key[f], 0, below);
  states[0].tops.push_back(nodes.intern(key[0], static_cast<std::uint16_t>(key[1]), below));
  std::size_t valid = 0;           // states[0..valid] belong to the current prefix
  std::size_t dead_at = SIZE_MAX;  // the current prefix died at this depth
  bool dead_uncertain = false;

  const std::vector<TokenId>& sorted = vocab_->sorted();
  const std::vector<std::uint32_t>& lcp = vocab_->shared_prefix();
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const TokenId id = sorted[i];
    const std::string& bytes = vocab_->bytes(id);
    const std::size_t len = bytes.size();
    const std::size_t shared = std::min<std::size_t>(lcp[i], len);
    if (dead_at != SIZE_MAX && shared >= dead_at) {
      if (dead_uncertain) out->uncertain.push_back(id);
      continue;
    }
    dead_at = SIZE_MAX;
    std::size_t d = std::min(shared, valid);
    if (states.size() < len + 1) {
      states.resize(len + 1);
      ended.resize(len + 1, false);
    }
    bool died = false;
    for (; d < len; ++d) {
      pda.step(nodes, states[d], static_cast<std::uint8_t>(bytes[d]), states[d + 1]);
      ended[d + 1] = ended[d] || states[d + 1].base_end;
      if (states[d + 1].dead()) {
        died = true;
        dead_at = d + 1;
        dead_uncertain = ended[d];
        valid = d;
        break;
      }
    }
    if (died) {
      if (dead_uncertain) out->uncertain.push_back(id);
      continue;
    }
    valid = len;
    const auto u = static_cast<std::size_t>(id);
    if (!states[len].dead()) {
      out->accepted[u / 64] |= std::uint64_t{1} << (u % 64);
    }
  }
  return out;
}

}  // namespace folio::grammar
