// tokenizer/spm.h: the SentencePiece (BPE-mode) encoder for `tokenizer.ggml.model = llama`
// vocabularies (Llama 2, Phi-3, Gemma 3).
//
// Owns the text -> ids step for one fragment of plain text, with SentencePiece's conventions:
//
//   1. whitespace escaping: ' ' becomes U+2581 ("▁"), and one "▁" is prepended when the caller
//      asks for the dummy space prefix (tokenizer.ggml.add_space_prefix);
//   2. splitting into initial symbols: user-defined tokens (type 4: Gemma's runs of spaces,
//      newlines and tabs, HTML tags ...) are matched first, leftmost-longest, and frozen: they
//      are emitted whole and never merge with a neighbour, as SentencePiece's prefix matcher and
//      llama.cpp's / HF's "added token" split do. Everything else starts as one UTF-8 character.
//      Gemma 3 needs this: its space runs (2..31 spaces) are user-defined and stored in GGUF
//      with real spaces, so merging alone never forms them and "a  b" would become "a", "▁",
//      "▁b" instead of SentencePiece's "a", "▁▁", "b". (transformers' GGUF converter rebuilds
//      these runs as merges instead, which agrees except for runs of 32+ spaces: it pairs them
//      16 + 16 + ..., SentencePiece and llama.cpp take 31 + ...; folio follows SentencePiece.)
//   3. merging: repeatedly join the adjacent pair whose concatenation is a token with the highest
//      score (ties: the leftmost pair), via a priority queue over a linked list, O(n log n);
//   4. output: each final symbol's id; a symbol that is not a token (a character missing from the
//      vocabulary) falls back to its bytes as <0xXX> tokens (byte fallback), or, when one of its
//      bytes has no byte token, to a single unknown token. A merged "unused" token (type 5) is
//      split back into the two pieces it was merged from, recursively, as SentencePiece does.
//
// Which tokens count: merges may produce normal, undefined, user-defined and unused tokens.
// Control, unknown and byte tokens are never produced from text (so "<s>" in plain text is
// "<", "s", ">"), matching SentencePiece, which keeps those out of its piece table.
//
// Invalid UTF-8: a byte that does not start a well-formed UTF-8 sequence (a stray continuation
// byte, a truncated or overlong sequence, a surrogate, > U+10FFFF) becomes a one-byte symbol. No
// token contains it, so it never merges and comes out as its <0xXX> byte token (or unk).
// Encoding never throws for any input text except one too long to index (> ~700 MB).
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/vocab.h"

namespace folio::tokenizer {

class SpmEncoder {
 public:
  // `vocab` must outlive the encoder. Precomputes which tokens merges may produce and the
  // user-defined matcher. Throws folio::Error when the vocabulary cannot represent unknown
  // text (some <0xXX> byte token is missing and there is no unknown token).
  explicit SpmEncoder(const Vocab& vocab);

  // Encodes one fragment of plain text (no special tokens inside) and appends ids to `out`.
  void encode(std::string_view text, bool add_space_prefix, std::vector<TokenId>& out) const;

 private:
  // What a token may be used for when encoding text.
  enum class Role : std::uint8_t {
    kNone,    // control, unknown, byte: never produced from text
    kPiece,   // normal / undefined / user-defined: a valid merge result and output
    kUnused,  // may be merged through, but is split back into its two halves on output
  };

  // Open-addressing table from token text to id over the tokens merges may produce. Most
  // lookups are misses (a pair that is no token); the tag rejects those with one cache miss,
  // where the vocabulary's node-based map chases pointers. Sized to load factor <= 1/2.
  struct Slot {
    std::uint32_t tag = 0;  // high half of the text's hash
    TokenId id = -1;        // -1: empty
  };

  // A byte trie over the user-defined tokens (spelled with "▁" for ' '); node 0 is the root.
  struct TrieNode {
    TokenId id = -1;                                           // token ending here, or -1
    std::vector<std::pair<std::uint8_t, std::uint32_t>> next;  // sorted by byte
  };

  struct Symbol;
  struct Bigram;
  struct History;
  class Session;

  // Id of the producible token spelled `text`, or -1.
  TokenId lookup(std::string_view text) const;
  void build_table();

  // Longest user-defined token starting at `text[0]`: {byte length, id}, or {0, -1}.
  std::pair<std::size_t, TokenId> match_user_defined(std::string_view text) const;
  void add_user_defined(std::string_view escaped, TokenId id);
  bool all_bytes_have_tokens(std::string_view piece) const;
  void note_inner_spaces(std::string_view token);

  const Vocab& vocab_;
  std::vector<Role> role_;           // per token id
  std::vector<Slot> table_;          // size a power of two
  std::vector<TrieNode> trie_;       // empty when the vocab has no user-defined tokens
  std::uint32_t max_token_len_ = 0;  // longest token a merge may produce, in bytes
  bool has_byte_token_[256];         // vocab has <0xXX> for this byte
  TokenId ascii_id_[128];            // id of each one-byte character, -1 if none
  // joins_space_[b]: some token has byte b right before a non-initial "▁". A "▁" preceded by
  // any other byte can start no merge across it, so merging splits the text there. In SPM
  // vocabularies (whitespace-split training) only "▁" itself (runs like "▁▁") and a rare odd
  // token (Gemma 3's ">▁</") qualify, so almost every word is merged on its own.
  bool joins_space_[256] = {};
};

}  // namespace folio::tokenizer
