#include "tokenizer/special_tokens.h"

namespace folio::tokenizer {

SpecialTokenMatcher::SpecialTokenMatcher(const Vocab& vocab) {
  nodes_.emplace_back();
  for (std::size_t i = 0; i < vocab.size(); ++i) {
    const auto id = static_cast<TokenId>(i);
    const TokenType t = vocab.type(id);
    const bool control = t == TokenType::kControl || t == TokenType::kUnknown;
    if (!control && t != TokenType::kUserDefined) continue;
    const std::string& text = vocab.text(id);
    if (text.empty()) continue;
    std::int32_t n = 0;
    for (char c : text) n = add_child(n, static_cast<std::uint8_t>(c));
    auto& node = nodes_[static_cast<std::size_t>(n)];
    if (node.token < 0) {  // duplicate texts: the first id wins, as in Vocab::find
      node.token = id;
      node.control = control;
    }
    first_byte_[static_cast<std::uint8_t>(text[0])] = true;
  }
}

std::int32_t SpecialTokenMatcher::child(std::int32_t node, std::uint8_t b) const {
  for (std::int32_t c = nodes_[static_cast<std::size_t>(node)].first_child; c >= 0;
       c = nodes_[static_cast<std::size_t>(c)].next_sibling) {
    const std::uint8_t cb = nodes_[static_cast<std::size_t>(c)].byte;
    if (cb == b) return c;
    if (cb > b) break;
  }
  return -1;
}

std::int32_t SpecialTokenMatcher::add_child(std::int32_t node, std::uint8_t b) {
  std::int32_t prev = -1;
  std::int32_t c = nodes_[static_cast<std::size_t>(node)].first_child;
  for (; c >= 0; prev = c, c = nodes_[static_cast<std::size_t>(c)].next_sibling) {
    const std::uint8_t cb = nodes_[static_cast<std::size_t>(c)].byte;
    if (cb == b) return c;
    if (cb > b) break;
  }
  const auto idx = static_cast<std::int32_t>(nodes_.size());
  Node n;
  n.byte = b;
  n.next_sibling = c;
  nodes_.push_back(n);
  if (prev < 0)
    nodes_[static_cast<std::size_t>(node)].first_child = idx;
  else
    nodes_[static_cast<std::size_t>(prev)].next_sibling = idx;
  return idx;
}

std::size_t SpecialTokenMatcher::longest_match(std::string_view text, std::size_t pos,
                                               bool parse_special, TokenId* id) const {
  std::size_t best = 0;
  std::int32_t n = 0;
  for (std::size_t i = pos; i < text.size(); ++i) {
    n = child(n, static_cast<std::uint8_t>(text[i]));
    if (n < 0) break;
    const Node& node = nodes_[static_cast<std::size_t>(n)];
    if (node.token >= 0 && (parse_special || !node.control)) {
      best = i + 1 - pos;
      *id = node.token;
    }
  }
  return best;
}

void SpecialTokenMatcher::partition(std::string_view text, bool parse_special,
                                    std::vector<Fragment>& out) const {
  std::size_t plain_begin = 0;
  for (std::size_t i = 0; i < text.size();) {
    TokenId id = -1;
    const std::size_t len = first_byte_[static_cast<std::uint8_t>(text[i])]
                                ? longest_match(text, i, parse_special, &id)
                                : 0;
    if (len == 0) {
      ++i;
      continue;
    }
    if (i > plain_begin) out.push_back({text.substr(plain_begin, i - plain_begin), -1});
    out.push_back({text.substr(i, len), id});
    i += len;
    plain_begin = i;
  }
  if (plain_begin < text.size()) out.push_back({text.substr(plain_begin), -1});
}

}  // namespace folio::tokenizer
