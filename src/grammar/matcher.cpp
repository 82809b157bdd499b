// grammar/matcher.cpp: token acceptance, masks and rollback.
#include "grammar/matcher.h"

#include <algorithm>

#include "base/error.h"

namespace folio::grammar {

GrammarMatcher::GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar,
                               std::vector<TokenId> stop_ids)
    : grammar_(std::move(grammar)), stops_(std::move(stop_ids)), pda_(grammar_->grammar()) {
  history_.push_back(pda_.start(nodes_));
  marks_.push_back(nodes_.size());
}

bool GrammarMatcher::is_stop(TokenId id) const {
  return std::ranges::find(stops_, id) != stops_.end();
}

bool GrammarMatcher::run(const MatchState& from, std::string_view bytes, MatchState& out) {
  MatchState* cur = &scratch_a_;
  MatchState* next = &scratch_b_;
  *cur = from;
  for (const char c : bytes) {
    pda_.step(nodes_, *cur, static_cast<std::uint8_t>(c), *next);
    std::swap(cur, next);
    if (cur->dead()) return false;
  }
  out = *cur;
  return true;
}

bool GrammarMatcher::accept_token(TokenId id) {
  if (terminated_) return false;
  if (is_stop(id)) {
    if (!can_end()) return false;
    terminated_ = true;
    history_.push_back(history_.back());
    marks_.push_back(nodes_.size());
    stop_step_.push_back(true);
    ++tokens_;
    return true;
  }
  const TokenVocab& v = grammar_->vocab();
  if (id < 0 || static_cast<std::size_t>(id) >= v.size() || !v.is_text(id)) return false;
  const std::size_t mark = nodes_.mark();
  MatchState next;
  if (!run(history_.back(), v.bytes(id), next)) {
    nodes_.release(mark);
    return false;
  }
  history_.push_back(std::move(next));
  marks_.push_back(nodes_.size());
  stop_step_.push_back(false);
  ++tokens_;
  return true;
}

bool GrammarMatcher::accept_bytes(std::string_view bytes) {
  if (terminated_) return false;
  const std::size_t mark = nodes_.mark();
  MatchState next;
  if (!run(history_.back(), bytes, next)) {
    nodes_.release(mark);
    return false;
  }
  // Bytes are not a token: they replace the current state (no rollback step).
  history_.back() = std::move(next);
  marks_.back() = nodes_.size();
  return true;
}

void GrammarMatcher::rollback(std::size_t n) {
  FOLIO_CHECK(n <= tokens_, "rollback past the start");
  for (std::size_t k = 0; k < n; ++k) {
    if (stop_step_.back()) terminated_ = false;
    history_.pop_back();
    marks_.pop_back();
    stop_step_.pop_back();
  }
  tokens_ -= n;
  nodes_.release(marks_.back());
}

void GrammarMatcher::fill_mask(std::span<std::uint64_t> bits) {
  FOLIO_CHECK(bits.size() >= mask_words());
  std::ranges::fill(bits, 0);
  const MatchState& state = history_.back();
  if (terminated_) return;
  const TokenVocab& v = grammar_->vocab();
  MatchState single, out;
  StackKey key;
  for (const std::uint32_t top : state.tops) {
    const StackNode n = nodes_[top];
    // The top alone first; frames below it only while the entry leaves too
    // many tokens open (after a value's whitespace, say), so most keys stay
    // short and are shared by every place the same rule is used.
    key.assign({n.elem, n.sub});
    std::uint32_t p = n.parent;
    std::shared_ptr<const MaskEntry> found;
    for (;;) {
      if (p == kNoParent) key.push_back(kNoParent);
      found = grammar_->entry(key);
      if (p == kNoParent || found->uncertain.size() <= kMaxUncertain ||
          key.size() > kContextFrames) {
        break;
      }
      key.push_back(nodes_[p].elem);
      p = nodes_[p].parent;
    }
    const MaskEntry& e = *found;
    e.add_accepted_to(bits);
    for (const TokenId id : e.uncertain) {
      const auto u = static_cast<std::size_t>(id);
      if ((bits[u / 64] >> (u % 64)) & 1) continue;
      const std::size_t mark = nodes_.mark();
      single.clear();
      single.tops.push_back(top);
      if (run(single, v.bytes(id), out)) bits[u / 64] |= std::uint64_t{1} << (u % 64);
      nodes_.release(mark);
    }
  }
  if (state.can_end) {
    for (const TokenId id : stops_) {
      const auto u = static_cast<std::size_t>(id);
      if (u < v.size()) bits[u / 64] |= std::uint64_t{1} << (u % 64);
    }
  }
}

}  // namespace folio::grammar
