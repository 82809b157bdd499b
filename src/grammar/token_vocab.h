// grammar/token_vocab.h: the vocabulary as the grammar sees it: the bytes
// each token stands for, sorted so that tokens sharing a prefix are
// neighbours (the mask cache walks them as a trie).
//
// Bytes are the tokenizer's own (tokenizer::Tokenizer::token_to_piece:
// byte-level BPE unmapped, SentencePiece's U+2581 as a space, byte-fallback
// tokens as their single byte). Control, unknown and unused tokens, and
// tokens of no bytes, never match text: they are left out, and only the
// stop tokens are allowed, where the grammar may end.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/token_id.h"

namespace folio::tokenizer {
class Tokenizer;
}

namespace folio::grammar {

class TokenVocab {
 public:
  // `bytes[id]` for every id; `text_token[id]` false for tokens left out.
  TokenVocab(std::vector<std::string> bytes, std::vector<bool> text_token);
  static std::shared_ptr<const TokenVocab> from_tokenizer(const tokenizer::Tokenizer& tok);

  std::size_t size() const { return bytes_.size(); }
  const std::string& bytes(TokenId id) const { return bytes_[static_cast<std::size_t>(id)]; }
  bool is_text(TokenId id) const { return text_[static_cast<std::size_t>(id)]; }

  // Text tokens in byte order, and for each position the length of the
  // prefix it shares with the one before (0 for the first).
  const std::vector<TokenId>& sorted() const { return sorted_; }
  const std::vector<std::uint32_t>& shared_prefix() const { return lcp_; }

 private:
  std::vector<std::string> bytes_;
  std::vector<bool> text_;
  std::vector<TokenId> sorted_;
  std::vector<std::uint32_t> lcp_;
};

}  // namespace folio::grammar
