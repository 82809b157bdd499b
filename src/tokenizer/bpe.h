// tokenizer/bpe.h: byte-level BPE (tokenizer.ggml.model = "gpt2").
//
// BpeModel is built once per vocabulary and is immutable: the id of every
// single-byte token (through GPT-2's byte <-> character map) and a hash table
// from an adjacent id pair to (merge rank, merged id), keyed on ids so the
// merge loop never builds strings. BpeScratch holds the per-call buffers.
//
// Merge loop (per pre-tokenized piece): symbols start as one token per byte,
// linked in a list; a min-heap of candidate pairs ordered by (rank, position)
// repeatedly merges the best pair, as HF tokenizers' BPE does. Stale heap
// entries (a side already merged away) are skipped on pop. O(n log n).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace folio::tokenizer {

class BpeScratch {
 public:
  struct Symbol {
    TokenId id;
    std::int32_t prev, next;  // -1: none
    bool alive;
  };
  struct Candidate {
    std::int32_t rank;
    std::int32_t pos;  // index of the left symbol
    TokenId left, right, merged;
  };
  std::vector<Symbol> symbols;
  std::vector<Candidate> heap;
  std::string mapped;  // byte-mapped text of a piece (only for ignore_merges)
};

class BpeModel {
 public:
  // `ignore_merges`: emit a piece whole when the vocabulary has it (HF's
  // BPE.ignore_merges, which Llama 3 sets). A byte whose character has no
  // token (StarCoder/SmolLM2 lack e.g. 0xC0, 0xF5..0xFF) is dropped, as HF
  // (BPE without unk_token) and llama.cpp do; it cannot be represented.
  BpeModel(const Vocab& vocab, bool ignore_merges);

  // Appends the ids of one pre-tokenized piece (raw bytes, any value).
  void encode_piece(std::string_view piece, BpeScratch& scratch, std::vector<TokenId>& out) const;

 private:
  struct Slot {
    std::uint64_t key;  // (left << 32) | right; kEmpty when unused
    std::int32_t rank;
    TokenId merged;
  };
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

  const Slot* find_merge(TokenId left, TokenId right) const;
  void insert_merge(TokenId left, TokenId right, std::int32_t rank, TokenId merged);
  void push_candidate(BpeScratch& s, std::int32_t pos) const;

  const Vocab& vocab_;
  bool ignore_merges_;
  TokenId byte_ids_[256];
  std::vector<Slot> table_;  // open addressing, power-of-two size, linear probing
  std::uint64_t mask_ = 0;
};

}  // namespace folio::tokenizer
