// tokenizer/spm.cpp: SentencePiece BPE-mode encoding (see spm.h for the conventions).
//
// Per call the escaped text lives in one string; symbols are byte ranges of it in a doubly
// linked list (a vector with prev/next indices). A merge grows the left symbol in place and
// empties the right one, so a queued pair is stale exactly when one side is empty or the two
// lengths no longer add up to the length recorded when the pair was queued.
#include "tokenizer/spm.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <string>

#include "base/error.h"
#include "tokenizer/utf8.h"

namespace folio::tokenizer {

namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space

// ' ' -> "▁", with one leading "▁" when asked.
std::string escape_spaces(std::string_view text, bool add_space_prefix) {
  std::string out;
  out.reserve(text.size() + text.size() / 4 + kSpace.size());
  if (add_space_prefix) out += kSpace;
  for (const char c : text) {
    if (c == ' ') {
      out += kSpace;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

// A symbol: the byte range [start, start + len) of the escaped text. len == 0 marks a symbol
// absorbed by its left neighbour.
struct SpmEncoder::Symbol {
  std::uint32_t start = 0;
  std::uint32_t len = 0;
  std::int32_t prev = -1;
  std::int32_t next = -1;
  TokenId id = -1;         // the token this symbol spells, -1 if none (unknown character)
  std::int32_t hist = -1;  // History index when `id` is an unused token that was merged
  bool frozen = false;     // a user-defined token: never merges
};

// How an unused token was formed, so output can split it again.
struct SpmEncoder::History {
  Symbol left, right;
};

// A candidate merge of two adjacent symbols.
struct SpmEncoder::Bigram {
  float score;
  std::uint32_t left_start;  // tie-break: leftmost pair first
  std::int32_t left, right;
  TokenId id;
  std::uint32_t len;  // left.len + right.len when queued; staleness check

  // Priority order for std::priority_queue (a max-heap): "a < b" means b is merged first.
  friend bool operator<(const Bigram& a, const Bigram& b) {
    if (a.score != b.score) return a.score < b.score;
    return a.left_start > b.left_start;
  }
};

// The mutable state of one encode() call.
class SpmEncoder::Session {
 public:
  Session(const SpmEncoder& enc, std::string text) : enc_(enc), text_(std::move(text)) {}

  void split();
  void merge();
  void emit(std::vector<TokenId>& out) const;

 private:
  bool starts_segment(const Symbol& s) const;
  void merge_range(std::size_t begin, std::size_t end);

  std::string_view piece(const Symbol& s) const { return {text_.data() + s.start, s.len}; }
  void try_add_bigram(std::int32_t left, std::int32_t right);
  void emit_plain(const Symbol& s, std::vector<TokenId>& out) const;
  void emit_unused(const Symbol& s, std::vector<TokenId>& out) const;

  const SpmEncoder& enc_;
  std::string text_;  // escaped
  std::vector<Symbol> symbols_;
  std::vector<History> history_;
  std::priority_queue<Bigram> queue_;
};

// Cuts the escaped text into initial symbols: user-defined tokens (frozen) or single characters.
void SpmEncoder::Session::split() {
  symbols_.reserve(text_.size());
  const std::string_view text = text_;
  std::size_t pos = 0;
  while (pos < text.size()) {
    Symbol s;
    s.start = static_cast<std::uint32_t>(pos);
    auto [len, id] = enc_.match_user_defined(text.substr(pos));
    if (len > 0) {
      s.frozen = true;
      s.id = id;
    } else {
      // One character; an invalid byte is a symbol of its own (it will fall back to bytes).
      const auto c = static_cast<std::uint8_t>(text[pos]);
      if (c < 0x80) {
        len = 1;
        s.id = enc_.ascii_id_[c];
      } else {
        len = std::max<std::size_t>(1, utf8::valid_sequence_length(text, pos));
        s.id = enc_.lookup(text.substr(pos, len));
      }
    }
    s.len = static_cast<std::uint32_t>(len);
    s.prev = static_cast<std::int32_t>(symbols_.size()) - 1;
    s.next = static_cast<std::int32_t>(symbols_.size()) + 1;
    symbols_.push_back(s);
    pos += len;
  }
  if (!symbols_.empty()) symbols_.back().next = -1;
}

void SpmEncoder::Session::try_add_bigram(std::int32_t left, std::int32_t right) {
  if (left < 0 || right < 0) return;
  const Symbol& l = symbols_[static_cast<std::size_t>(left)];
  const Symbol& r = symbols_[static_cast<std::size_t>(right)];
  if (l.frozen || r.frozen) return;
  const std::uint32_t len = l.len + r.len;
  if (len > enc_.max_token_len_) return;  // cheap reject before hashing
  const TokenId id = enc_.lookup(std::string_view(text_.data() + l.start, len));
  if (id < 0) return;
  queue_.push(Bigram{enc_.vocab_.score(id), l.start, left, right, id, len});
}

// Merges best-first until no adjacent pair spells a token. The symbols are cut into segments
// that no token can span (see SpmEncoder::joins_space_), which gives the same result as one
// pass over everything but keeps the queue small and hot: one word's pairs at a time.
void SpmEncoder::Session::merge() {
  std::size_t begin = 0;
  for (std::size_t i = 1; i <= symbols_.size(); ++i) {
    if (i == symbols_.size() || starts_segment(symbols_[i])) {
      merge_range(begin, i);
      begin = i;
    }
  }
}

// A segment starts at a "▁" whose preceding byte never precedes a "▁" inside a token.
bool SpmEncoder::Session::starts_segment(const Symbol& s) const {
  return s.start > 0 && text_.compare(s.start, kSpace.size(), kSpace) == 0 &&
         !enc_.joins_space_[static_cast<std::uint8_t>(text_[s.start - 1])];
}

void SpmEncoder::Session::merge_range(std::size_t begin, std::size_t end) {
  for (std::size_t i = begin + 1; i < end; ++i) {
    try_add_bigram(static_cast<std::int32_t>(i - 1), static_cast<std::int32_t>(i));
  }
  while (!queue_.empty()) {
    const Bigram b = queue_.top();
    queue_.pop();
    Symbol& l = symbols_[static_cast<std::size_t>(b.left)];
    Symbol& r = symbols_[static_cast<std::size_t>(b.right)];
    if (l.len == 0 || r.len == 0 || l.len + r.len != b.len) continue;  // stale
    if (enc_.role_[static_cast<std::size_t>(b.id)] == Role::kUnused) {
      history_.push_back(History{l, r});
      l.hist = static_cast<std::int32_t>(history_.size()) - 1;
    } else {
      l.hist = -1;
    }
    l.len = b.len;
    l.id = b.id;
    l.next = r.next;
    if (r.next >= 0) symbols_[static_cast<std::size_t>(r.next)].prev = b.left;
    r.len = 0;
    try_add_bigram(l.prev, b.left);
    try_add_bigram(b.left, l.next);
  }
}

// Emits one final symbol: its id, or the byte tokens (else one unk) of a symbol that is no token.
void SpmEncoder::Session::emit_plain(const Symbol& s, std::vector<TokenId>& out) const {
  if (s.id >= 0) {
    out.push_back(s.id);
  } else if (enc_.all_bytes_have_tokens(piece(s))) {
    for (const char c : piece(s)) {
      out.push_back(*enc_.vocab_.byte_token(static_cast<std::uint8_t>(c)));
    }
  } else {
    out.push_back(*enc_.vocab_.special().unk);  // one unknown token per unknown character
  }
}

// Emits a merged unused token split back along its merge history. Iterative: chains of unused
// merges can be as long as the token.
void SpmEncoder::Session::emit_unused(const Symbol& s, std::vector<TokenId>& out) const {
  std::vector<const Symbol*> stack{&s};
  while (!stack.empty()) {
    const Symbol* cur = stack.back();
    stack.pop_back();
    if (cur->hist < 0) {
      emit_plain(*cur, out);
      continue;
    }
    const History& h = history_[static_cast<std::size_t>(cur->hist)];
    stack.push_back(&h.right);  // popped after the left half
    stack.push_back(&h.left);
  }
}

void SpmEncoder::Session::emit(std::vector<TokenId>& out) const {
  for (std::int32_t i = symbols_.empty() ? -1 : 0; i >= 0;
       i = symbols_[static_cast<std::size_t>(i)].next) {
    const Symbol& s = symbols_[static_cast<std::size_t>(i)];
    if (s.hist >= 0) {
      emit_unused(s, out);
    } else {
      emit_plain(s, out);
    }
  }
}

SpmEncoder::SpmEncoder(const Vocab& vocab) : vocab_(vocab) {
  const std::size_t n = vocab.size();
  role_.resize(n, Role::kNone);
  for (std::size_t i = 0; i < n; ++i) {
    const auto id = static_cast<TokenId>(i);
    const std::string& text = vocab.text(id);
    const TokenType type = vocab.type(id);
    switch (type) {
      case TokenType::kNormal:
      case TokenType::kUndefined:
        role_[i] = Role::kPiece;
        break;
      case TokenType::kUserDefined:
        role_[i] = Role::kPiece;
        if (!text.empty()) add_user_defined(escape_spaces(text, false), id);
        break;
      case TokenType::kUnused:
        role_[i] = Role::kUnused;
        break;
      case TokenType::kControl:
      case TokenType::kUnknown:
      case TokenType::kByte:
        break;
    }
    if (role_[i] != Role::kNone) {
      note_inner_spaces(type == TokenType::kUserDefined ? escape_spaces(text, false) : text);
      max_token_len_ =
          std::max(max_token_len_,
                   static_cast<std::uint32_t>(std::min<std::size_t>(text.size(), UINT32_MAX)));
    }
  }
  build_table();
  for (int c = 0; c < 0x80; ++c) ascii_id_[c] = lookup(std::string(1, static_cast<char>(c)));
  std::size_t missing = 0;
  for (int b = 0; b < 256; ++b) {
    has_byte_token_[b] = vocab.byte_token(static_cast<std::uint8_t>(b)).has_value();
    missing += has_byte_token_[b] ? 0 : 1;
  }
  if (missing > 0 && !vocab.special().unk) {
    throw Error(
        "SentencePiece vocabulary lacks " + std::to_string(missing) +
        " of the 256 <0xXX> byte tokens and has no unknown token "
        "(tokenizer.ggml.unknown_token_id), so it cannot encode text outside its vocabulary");
  }
}

void SpmEncoder::build_table() {
  std::size_t count = 0;
  for (const Role r : role_) count += r != Role::kNone ? 1 : 0;
  std::size_t size = 16;
  while (size < 2 * count) size *= 2;
  table_.assign(size, Slot{});
  const std::size_t mask = size - 1;
  for (std::size_t i = 0; i < role_.size(); ++i) {
    if (role_[i] == Role::kNone) continue;
    const auto id = static_cast<TokenId>(i);
    const std::string_view text = vocab_.text(id);
    const std::size_t h = std::hash<std::string_view>{}(text);
    const auto tag = static_cast<std::uint32_t>(h >> 32);
    for (std::size_t at = h & mask;; at = (at + 1) & mask) {
      Slot& slot = table_[at];
      if (slot.id < 0) {
        slot = Slot{tag, id};
        break;
      }
      if (slot.tag == tag && vocab_.text(slot.id) == text) break;  // duplicate: first id wins
    }
  }
}

TokenId SpmEncoder::lookup(std::string_view text) const {
  const std::size_t h = std::hash<std::string_view>{}(text);
  const auto tag = static_cast<std::uint32_t>(h >> 32);
  const std::size_t mask = table_.size() - 1;
  for (std::size_t at = h & mask;; at = (at + 1) & mask) {
    const Slot& slot = table_[at];
    if (slot.id < 0) return -1;
    if (slot.tag == tag && vocab_.text(slot.id) == text) return slot.id;
  }
}

void SpmEncoder::note_inner_spaces(std::string_view token) {
  for (std::size_t at = token.find(kSpace, 1); at != std::string_view::npos;
       at = token.find(kSpace, at + 1)) {
    joins_space_[static_cast<std::uint8_t>(token[at - 1])] = true;
  }
}

bool SpmEncoder::all_bytes_have_tokens(std::string_view piece) const {
  for (const char c : piece) {
    if (!has_byte_token_[static_cast<std::uint8_t>(c)]) return false;
  }
  return true;
}

void SpmEncoder::add_user_defined(std::string_view escaped, TokenId id) {
  if (trie_.empty()) trie_.emplace_back();
  std::uint32_t node = 0;
  for (const char ch : escaped) {
    const auto c = static_cast<std::uint8_t>(ch);
    auto& next = trie_[node].next;
    auto it = std::lower_bound(next.begin(), next.end(), c,
                               [](const auto& edge, std::uint8_t x) { return edge.first < x; });
    if (it == next.end() || it->first != c) {
      const auto child = static_cast<std::uint32_t>(trie_.size());
      it = next.insert(it, {c, child});
      trie_.emplace_back();  // may reallocate: `next` and `it` are not used after this
      node = child;
    } else {
      node = it->second;
    }
  }
  if (trie_[node].id < 0) trie_[node].id = id;  // on duplicate spellings the first id wins
}

std::pair<std::size_t, TokenId> SpmEncoder::match_user_defined(std::string_view text) const {
  std::pair<std::size_t, TokenId> best{0, -1};
  if (trie_.empty()) return best;
  std::uint32_t node = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<std::uint8_t>(text[i]);
    const auto& next = trie_[node].next;
    auto it = std::lower_bound(next.begin(), next.end(), c,
                               [](const auto& edge, std::uint8_t x) { return edge.first < x; });
    if (it == next.end() || it->first != c) break;
    node = it->second;
    if (trie_[node].id >= 0) best = {i + 1, trie_[node].id};
  }
  return best;
}

void SpmEncoder::encode(std::string_view text, bool add_space_prefix,
                        std::vector<TokenId>& out) const {
  if (text.empty()) return;  // SentencePiece adds no dummy prefix to empty text
  // Offsets are 32-bit and escaping can triple the size.
  if (text.size() > (std::numeric_limits<std::uint32_t>::max() - kSpace.size()) / 3 / 2) {
    throw Error("text of " + std::to_string(text.size()) +
                " bytes is too long to tokenize in one piece; split it first");
  }
  Session session(*this, escape_spaces(text, add_space_prefix));
  session.split();
  session.merge();
  session.emit(out);
}

}  // namespace folio::tokenizer
