// tokenizer/special_tokens.h: finding special-token text inside the input.
//
// Which tokens are matched (the Hugging Face "added tokens" rule, which
// llama.cpp follows as well):
//   - user-defined tokens (HF added tokens with special=false) always;
//   - control and unknown tokens (HF special added tokens) only when the caller
//     asks to parse special tokens; otherwise their text is ordinary text.
// Matching is leftmost-longest (HF uses a leftmost-longest Aho-Corasick), over
// raw bytes, so it works on any input. A byte trie built once per vocabulary.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace folio::tokenizer {

// A fragment of the input: either plain text or one special token.
struct Fragment {
  std::string_view text;  // the input bytes it covers
  TokenId token = -1;     // >= 0: a matched special token
};

class SpecialTokenMatcher {
 public:
  explicit SpecialTokenMatcher(const Vocab& vocab);

  // Cuts text into fragments, in order, covering it exactly (appends to out).
  void partition(std::string_view text, bool parse_special, std::vector<Fragment>& out) const;

  bool empty() const { return nodes_.size() <= 1; }

 private:
  struct Node {
    std::int32_t first_child = -1;  // children form a sibling list sorted by byte
    std::int32_t next_sibling = -1;
    std::uint8_t byte = 0;
    TokenId token = -1;    // token ending here (-1: none)
    bool control = false;  // that token needs parse_special
  };
  std::int32_t child(std::int32_t node, std::uint8_t b) const;
  std::int32_t add_child(std::int32_t node, std::uint8_t b);
  // Length and id of the longest allowed token starting at text[pos] (0 if none).
  std::size_t longest_match(std::string_view text, std::size_t pos, bool parse_special,
                            TokenId* id) const;

  std::vector<Node> nodes_;  // nodes_[0] is the root
  bool first_byte_[256] = {};
};

}  // namespace folio::tokenizer
