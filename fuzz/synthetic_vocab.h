// fuzz/synthetic_vocab.h: small tokenizers built in memory, for fuzz targets
// that need one without a model file.
//
// The vocabularies are written as GGUF metadata (GgufWriter) and read back
// through Tokenizer::from_gguf, so they take the same path as a model's:
//   - byte-level BPE ("gpt2"): the 256 byte tokens, a few dozen merges
//     (ASCII words, JSON punctuation, two- and three-byte UTF-8 characters),
//     control tokens <|endoftext|> (BOS and EOS), <|im_start|>, <|im_end|>
//     and user-defined <tool_call>, </tool_call>; any pre-tokenizer family;
//   - SentencePiece ("llama"): <unk>, <s>, </s>, optionally the 256 byte
//     tokens <0x00>..<0xFF> (byte fallback), letters, "▁" pieces with scores
//     and a user-defined two-space token.
#pragma once

#include <string>

#include "tokenizer/tokenizer.h"

namespace folio::fuzz {

// `pre`: tokenizer.ggml.pre ("" = "default"); throws folio::Error for an unknown name.
tokenizer::Tokenizer synthetic_bpe(const std::string& pre = "");

// `byte_tokens`: include <0x00>..<0xFF> (else unknown characters become <unk>).
tokenizer::Tokenizer synthetic_spm(bool byte_tokens, bool add_space_prefix);

}  // namespace folio::fuzz
