// grammar/grammar_cache.cpp: an LRU of compiled grammars.
#include "grammar/grammar_cache.h"

#include "grammar/gbnf_parser.h"

namespace folio::grammar {
namespace {

std::string key_of(const ConstraintSpec& spec) {
  std::string k = constraint_kind_name(spec.kind);
  k.push_back('\0');
  k += spec.text;
  for (const std::string& c : spec.choices) {
    k.push_back('\0');
    k += c;
  }
  return k;
}

}  // namespace

GrammarCache::GrammarCache(std::shared_ptr<const TokenVocab> vocab, std::size_t capacity)
    : vocab_(std::move(vocab)), capacity_(capacity == 0 ? 1 : capacity) {}

std::shared_ptr<const CompiledGrammar> GrammarCache::get(const ConstraintSpec& spec) {
  const std::string key = key_of(spec);
  {
    std::lock_guard lock(mu_);
    if (const auto it = index_.find(key); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      ++hits_;
      return it->second->second;
    }
    ++misses_;
  }
  // Compiled outside the lock: a large schema does not hold up others.
  auto compiled = std::make_shared<const CompiledGrammar>(parse_gbnf(to_gbnf(spec)), vocab_);
  std::lock_guard lock(mu_);
  if (const auto it = index_.find(key); it != index_.end()) return it->second->second;
  lru_.emplace_front(key, compiled);
  index_[key] = lru_.begin();
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return compiled;
}

std::uint64_t GrammarCache::hits() const {
  std::lock_guard lock(mu_);
  return hits_;
}

std::uint64_t GrammarCache::misses() const {
  std::lock_guard lock(mu_);
  return misses_;
}

}  // namespace folio::grammar
