// grammar/compiled_grammar.cpp: one cache entry = one walk over the sorted
// vocabulary, reusing the states of the prefix a token shares with the one
// before it, and skipping every token under a prefix that died.
#include "grammar/compiled_grammar.h"

#include <array>
#include <unordered_map>

#include "grammar/pda.h"

namespace folio::grammar {

CompiledGrammar::CompiledGrammar(Grammar g, std::shared_ptr<const TokenVocab> vocab)
    : grammar_(std::move(g)), vocab_(std::move(vocab)) {}

void MaskEntry::add_accepted_to(std::span<std::uint64_t> bits) const {
  if (!accepted_bits.empty()) {
    for (std::size_t w = 0; w < accepted_bits.size(); ++w) bits[w] |= accepted_bits[w];
    return;
  }
  for (const TokenId id : accepted_ids) {
    const auto u = static_cast<std::size_t>(id);
    bits[u / 64] |= std::uint64_t{1} << (u % 64);
  }
}

std::size_t MaskEntry::bytes() const {
  return sizeof(MaskEntry) + accepted_bits.size() * sizeof(std::uint64_t) +
         (accepted_ids.size() + uncertain.size()) * sizeof(TokenId);
}

std::shared_ptr<const MaskEntry> CompiledGrammar::entry(const StackKey& key) const {
  std::lock_guard lock(mu_);
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  std::shared_ptr<const MaskEntry> e = compute(key);
  const std::size_t bytes = e->bytes() + key.size() * sizeof(std::uint32_t);
  if (cache_bytes_ + bytes > kMaxMaskCacheBytes) {
    cache_.clear();
    cache_bytes_ = 0;
  }
  cache_.emplace(key, e);
  cache_bytes_ += bytes;
  return e;
}

std::size_t CompiledGrammar::cached_entries() const {
  std::lock_guard lock(mu_);
  return cache_.size();
}

std::size_t CompiledGrammar::cache_bytes() const {
  std::lock_guard lock(mu_);
  return cache_bytes_;
}

namespace {

struct StateHash {
  std::size_t operator()(const MatchState& s) const {
    std::uint64_t h = 1469598103934665603ull ^ (s.can_end ? 1 : 0) ^ (s.base_end ? 2 : 0);
    for (const std::uint32_t t : s.tops) h = (h ^ t) * 1099511628211ull;
    return static_cast<std::size_t>(h);
  }
};

// The states one walk meets, interned, with their transitions filled in as
// they are first taken: a lazily built DFA. Inside a string loop every
// byte leads back to the same state, so most steps of the walk are one
// table lookup instead of a PDA step.
class StateGraph {
 public:
  StateGraph(Pda& pda, NodeTable& nodes) : pda_(pda), nodes_(nodes) {}

  std::uint32_t add(MatchState s) {
    const auto [it, fresh] = ids_.try_emplace(s, static_cast<std::uint32_t>(states_.size()));
    if (fresh) {
      states_.push_back(std::move(s));
      next_.emplace_back();
      next_.back().fill(kUnknown);
    }
    return it->second;
  }
  std::uint32_t step(std::uint32_t from, std::uint8_t byte) {
    std::int32_t& to = next_[from][byte];
    if (to == kUnknown) {
      pda_.step(nodes_, states_[from], byte, scratch_);
      const std::uint32_t id = add(scratch_);  // may grow next_: no reference kept
      next_[from][byte] = static_cast<std::int32_t>(id);
      return id;
    }
    return static_cast<std::uint32_t>(to);
  }
  const MatchState& operator[](std::uint32_t id) const { return states_[id]; }

 private:
  static constexpr std::int32_t kUnknown = -1;
  Pda& pda_;
  NodeTable& nodes_;
  std::vector<MatchState> states_;
  std::vector<std::array<std::int32_t, 256>> next_;
  std::unordered_map<MatchState, std::uint32_t, StateHash> ids_;
  MatchState scratch_;
};

}  // namespace

std::shared_ptr<const MaskEntry> CompiledGrammar::compute(const StackKey& key) const {
  auto out = std::make_shared<MaskEntry>();
  NodeTable nodes;
  Pda pda(grammar_);
  StateGraph graph(pda, nodes);
  // The key's frames as a stack: the bottom frame first.
  std::size_t frames = key.size() - 1;  // key[0..1] is the top's (elem, sub)
  std::uint32_t below = kBaseParent;
  if (key.back() == kNoParent) {
    below = kNoParent;
    --frames;
  }
  for (std::size_t f = frames; f >= 2; --f) below = nodes.intern(key[f], 0, below);
  MatchState start;
  start.tops.push_back(nodes.intern(key[0], static_cast<std::uint16_t>(key[1]), below));
  // at[d]: the state after the first d bytes of the current token; ended[d]:
  // some state at depth 1..d reached the top's frames' end (base_end).
  std::vector<std::uint32_t> at(1, graph.add(std::move(start)));
  std::vector<bool> ended(1, false);
  std::size_t valid = 0;           // at[0..valid] belong to the current prefix
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
    if (at.size() < len + 1) {
      at.resize(len + 1);
      ended.resize(len + 1, false);
    }
    bool died = false;
    for (; d < len; ++d) {
      at[d + 1] = graph.step(at[d], static_cast<std::uint8_t>(bytes[d]));
      const MatchState& s = graph[at[d + 1]];
      ended[d + 1] = ended[d] || s.base_end;
      if (s.dead()) {
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
    if (!graph[at[len]].dead()) out->accepted_ids.push_back(id);
  }
  // A bitset once the list would be the larger.
  if (out->accepted_ids.size() * sizeof(TokenId) > mask_words() * sizeof(std::uint64_t)) {
    out->accepted_bits.assign(mask_words(), 0);
    for (const TokenId id : out->accepted_ids) {
      const auto u = static_cast<std::size_t>(id);
      out->accepted_bits[u / 64] |= std::uint64_t{1} << (u % 64);
    }
    std::vector<TokenId>().swap(out->accepted_ids);
  }
  return out;
}

}  // namespace folio::grammar
