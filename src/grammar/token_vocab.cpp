// grammar/token_vocab.cpp: token bytes, sorted with shared-prefix lengths.
#include "grammar/token_vocab.h"

#include <algorithm>

#include "base/error.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace folio::grammar {

TokenVocab::TokenVocab(std::vector<std::string> bytes, std::vector<bool> text_token)
    : bytes_(std::move(bytes)), text_(std::move(text_token)) {
  FOLIO_CHECK(bytes_.size() == text_.size());
  for (std::size_t i = 0; i < bytes_.size(); ++i) {
    if (bytes_[i].empty()) text_[i] = false;
    if (text_[i]) sorted_.push_back(static_cast<TokenId>(i));
  }
  std::ranges::sort(sorted_, [&](TokenId a, TokenId b) {
    const std::string& x = bytes_[static_cast<std::size_t>(a)];
    const std::string& y = bytes_[static_cast<std::size_t>(b)];
    return x != y ? x < y : a < b;
  });
  lcp_.assign(sorted_.size(), 0);
  for (std::size_t i = 1; i < sorted_.size(); ++i) {
    const std::string& x = bytes_[static_cast<std::size_t>(sorted_[i - 1])];
    const std::string& y = bytes_[static_cast<std::size_t>(sorted_[i])];
    std::size_t n = 0;
    while (n < x.size() && n < y.size() && x[n] == y[n]) ++n;
    lcp_[i] = static_cast<std::uint32_t>(n);
  }
}

std::shared_ptr<const TokenVocab> TokenVocab::from_tokenizer(const tokenizer::Tokenizer& tok) {
  const tokenizer::Vocab& v = tok.vocab();
  std::vector<std::string> bytes(v.size());
  std::vector<bool> text(v.size(), true);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto id = static_cast<TokenId>(i);
    const tokenizer::TokenType t = v.type(id);
    if (t == tokenizer::TokenType::kControl || t == tokenizer::TokenType::kUnknown ||
        t == tokenizer::TokenType::kUnused) {
      text[i] = false;
      continue;
    }
    bytes[i] = tok.token_to_piece(id, false);
  }
  return std::make_shared<const TokenVocab>(std::move(bytes), std::move(text));
}

}  // namespace folio::grammar
