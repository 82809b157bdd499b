// grammar/grammar_cache.h: compiled grammars of one vocabulary, by constraint.
//
// Requests with the same schema (an extraction pipeline sends one schema
// thousands of times) share one CompiledGrammar, and so its token-mask
// cache, which is what makes the steps after the first cheap. At most
// `capacity` grammars are kept, least recently used dropped (the requests
// still using one keep it alive). Thread-safe.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "grammar/compiled_grammar.h"
#include "grammar/constraint.h"

namespace folio::grammar {

class GrammarCache {
 public:
  explicit GrammarCache(std::shared_ptr<const TokenVocab> vocab, std::size_t capacity = 64);

  // The compiled grammar for `spec`; throws GrammarError when it cannot be
  // compiled (errors are not cached).
  std::shared_ptr<const CompiledGrammar> get(const ConstraintSpec& spec);

  const TokenVocab& vocab() const { return *vocab_; }
  std::uint64_t hits() const;
  std::uint64_t misses() const;

 private:
  using Lru = std::list<std::pair<std::string, std::shared_ptr<const CompiledGrammar>>>;
  std::shared_ptr<const TokenVocab> vocab_;
  std::size_t capacity_;
  mutable std::mutex mu_;
  Lru lru_;  // most recent first
  std::unordered_map<std::string, Lru::iterator> index_;
  std::uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace folio::grammar
