// grammar/matcher.h: one request's position in its grammar.
//
// Holds the set of stacks after the tokens accepted so far (and those
// before, for rollback: speculative decoding verifies drafted tokens and
// rejects some). fill_mask gives the tokens allowed next: the union over
// the stacks of the cache's accepted set plus the uncertain tokens that
// pass against the real stack; the stop tokens exactly where the grammar
// may end. Not thread-safe: one matcher per request, used by one thread
// at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "grammar/pda.h"

namespace folio::grammar {

class GrammarMatcher {
 public:
  // `stop_ids`: the tokens that end the output (EOS, end of turn, the
  // request's stop_token_ids); allowed only where the grammar may end.
  GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar, std::vector<TokenId> stop_ids);

  // Advances by one token; false (and nothing changes) when it is not
  // allowed. A stop token ends the match (terminated()).
  bool accept_token(TokenId id);
  // Advances by raw bytes (tests, forced text); false and unchanged when
  // they do not match.
  bool accept_bytes(std::string_view bytes);

  // Bit `id` of `bits` (mask_words() words) set iff token `id` is allowed.
  void fill_mask(std::span<std::uint64_t> bits);
  std::size_t mask_words() const { return grammar_->mask_words(); }

  bool can_end() const { return history_.back().can_end; }
  // Only a stop token can follow (every parse is complete).
  bool must_end() const { return history_.back().tops.empty(); }
  bool terminated() const { return terminated_; }
  std::size_t num_tokens() const { return tokens_; }

  // Undoes the last `n` accepted tokens (n <= num_tokens()).
  void rollback(std::size_t n);

 private:
  bool is_stop(TokenId id) const;
  bool run(const MatchState& from, std::string_view bytes, MatchState& out);

  std::shared_ptr<const CompiledGrammar> grammar_;
  std::vector<TokenId> stops_;
  Pda pda_;
  NodeTable nodes_;
  std::vector<MatchState> history_;  // [0]: the start; one more per accepted token
  std::vector<std::size_t> marks_;   // node-table size after each history entry
  std::vector<bool> stop_step_;      // per accepted token: was it a stop
  std::size_t tokens_ = 0;
  bool terminated_ = false;
  MatchState scratch_a_, scratch_b_;
};

}  // namespace folio::grammar
