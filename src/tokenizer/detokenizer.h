// tokenizer/detokenizer.h: token ids -> text bytes, one token or a stream.
//
// append_token_bytes is the per-token rule (mirrors HF's decoders):
//   - control / unknown tokens: their text when render_special, else nothing;
//   - byte-level BPE: each character of the token text maps back to one byte
//     (GPT-2 map); added tokens (user-defined, control) are stored as raw text
//     and emitted as is, as llama.cpp does; a normal token with a character
//     outside the map is emitted raw too (HF's fallback);
//   - SentencePiece: byte tokens <0xXX> give that byte; U+2581 becomes ' '.
//
// StreamingDetokenizer turns ids arriving one at a time into text that is
// always complete UTF-8: bytes of a character split across tokens are held
// until the character is complete. Bytes that can no longer become valid
// UTF-8 are replaced by U+FFFD (one per maximal ill-formed subpart) as soon as
// that is certain; a trailing incomplete sequence is held, and only flush()
// turns it into U+FFFD. Nothing is lost or reordered: the concatenation of
// all push() results and flush() equals utf8::to_valid(Tokenizer::decode(ids)).
#pragma once

#include <string>

#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace folio::tokenizer {

// Appends the bytes of token `id` to out. Throws folio::Error for an invalid id.
void append_token_bytes(const Vocab& vocab, TokenId id, bool render_special, std::string& out);

class StreamingDetokenizer {
 public:
  // `tok` must outlive this object.
  explicit StreamingDetokenizer(const Tokenizer& tok, DecodeOptions opt = {});

  // Adds one token; returns the text that became complete (possibly empty).
  // Throws folio::Error for an invalid id (the stream stays usable).
  std::string push(TokenId id);
  // Ends the stream: returns what is held, incomplete sequences as U+FFFD.
  std::string flush();

 private:
  const Tokenizer& tok_;
  DecodeOptions opt_;
  bool strip_pending_;   // the first byte of the output may still be a prefix space
  std::string pending_;  // an incomplete UTF-8 sequence (at most 3 bytes) held back
};

}  // namespace folio::tokenizer
