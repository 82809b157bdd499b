// tokenizer/tokenizer.h: the facade: text <-> token ids for one vocabulary.
//
// A Tokenizer owns the immutable Vocab and the immutable per-kind model built
// from it (byte-level BPE + regex pre-tokenizer, or the SentencePiece encoder),
// and the special-token matcher. It is const after construction and safe to
// share between threads; each encode() makes a cheap Session (PCRE2 match
// state and merge buffers). Callers encoding many texts can keep a Session.
//
// Encoding:
//   text --special tokens (see special_tokens.h)--> fragments
//        plain fragment --BPE: regex pre-tokenizer + merges / SPM encoder--> ids
//   + BOS / EOS when add_special and the vocabulary asks for them.
// Invalid UTF-8 input never fails: byte-level BPE encodes such bytes as their
// byte tokens (each invalid byte is a piece of its own; a byte the vocabulary
// has no token for is dropped, as in HF); SentencePiece uses byte fallback
// (<0xXX>) or the unknown token.
//
// Decoding (see detokenizer.h for the streaming form) follows HF's decoders:
// BPE maps the GPT-2 byte characters back to bytes; SPM turns U+2581 into a
// space and <0xXX> tokens into bytes, and, when the vocabulary adds a space
// prefix, drops one leading space of the whole output.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace folio::gguf {
class GgufFile;
}

namespace folio::tokenizer {

struct EncodeOptions {
  bool add_special = false;    // add BOS/EOS as the vocabulary's metadata says
  bool parse_special = false;  // match control-token text (e.g. "<|im_start|>") in the input
};

struct DecodeOptions {
  bool render_special = true;       // control/unknown tokens: their text (true) or nothing
  bool strip_leading_space = true;  // SPM with add_space_prefix: drop the prefix space
};

class Tokenizer {
 public:
  // Reads the vocabulary (tokenizer.ggml.*) and builds the encoder for it.
  // Throws folio::Error for unsupported or inconsistent metadata (e.g. an
  // unknown tokenizer.ggml.pre, naming it and listing the supported ones).
  static Tokenizer from_gguf(const gguf::GgufFile& file);
  explicit Tokenizer(Vocab vocab);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  const Vocab& vocab() const;

  // Per-call mutable state; create one per thread to avoid re-allocation.
  class Session {
   public:
    explicit Session(const Tokenizer& tok);
    ~Session();
    Session(Session&&) noexcept;
    // Appends the ids of `text` (any bytes) to `out`.
    void encode(std::string_view text, const EncodeOptions& opt, std::vector<TokenId>& out);

   private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
  };

  std::vector<TokenId> encode(std::string_view text, const EncodeOptions& opt = {}) const;

  // The bytes one token stands for (no leading-space stripping). Throws
  // folio::Error for an id outside the vocabulary.
  std::string token_to_piece(TokenId id, bool render_special = true) const;
  // Concatenated bytes of all ids (may be invalid UTF-8 when the ids split a
  // character; see utf8::to_valid). Throws folio::Error for an invalid id.
  std::string decode(std::span<const TokenId> ids, const DecodeOptions& opt = {}) const;
  // Whether decode drops one leading space (SPM vocabularies that add one).
  bool strips_leading_space(const DecodeOptions& opt) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace folio::tokenizer
