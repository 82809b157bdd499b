// hf/hf_tokenizer.h: a Hugging Face tokenizer (tokenizer.json and its companions) as the GGUF
// `tokenizer.*` metadata that llama.cpp's convert_hf_to_gguf.py writes, so folio's tokenizer
// (tokenizer/vocab.h) reads a checkpoint directory as it reads a GGUF file.
//
// Two families, told apart by tokenizer.json alone:
//
//   byte-level BPE   model BPE + a ByteLevel pre-tokenizer (GPT-2, SmolLM2/StarCoder, Qwen2,
//                    Llama 3) -> tokenizer.ggml.model "gpt2": tokens in id order, token types,
//                    merges ("a b"), and tokenizer.ggml.pre named from the pre-tokenizer's
//                    structure and regexes (gpt-2, smollm/starcoder, qwen2, llama-bpe). Any other
//                    pre-tokenizer is refused, saying what it was: no guessing. An NFC normalizer
//                    (Qwen2) is accepted and, as in llama.cpp, not applied.
//   SentencePiece    model BPE with byte_fallback and a " " -> "▁" normalizer or Metaspace
//                    (Llama 2, Phi-3, Gemma 3), or model Unigram -> tokenizer.ggml.model "llama":
//                    tokens, scores, types (BYTE for <0xXX>, UNKNOWN, CONTROL, USER_DEFINED),
//                    add_space_prefix. folio's SentencePiece encoder merges the adjacent pair
//                    whose result scores highest, so a token's score is minus the rank of its
//                    first merge; the conversion checks that every way that encoder could form a
//                    token is one of HF's merges, and refuses the tokenizer otherwise. (Unigram
//                    scores are copied; folio, like llama.cpp, then merges by them, which is not
//                    Unigram's Viterbi segmentation.)
//
// Ids must be dense 0..n-1 over model.vocab and added_tokens (a hole or a clash is an error
// naming it); config.json's vocab_size may add "[PAD<id>]" tokens of type UNUSED. Added tokens:
// special (or, as llama.cpp judges, special-looking: "<|...|>", "<unused..>") -> CONTROL, others
// USER_DEFINED. Special ids come from tokenizer_config.json's *_token names, then config.json's
// *_token_id (also under text_config), then generation_config.json, then the model's unk_token;
// an eos_token_id list gives eos its first entry and eot an end-of-turn token among the rest.
// add_bos/add_eos come from the post-processor, then tokenizer_config.json (false when neither
// says); the chat template from tokenizer_config.json ("default" of a list), chat_template.jinja
// or chat_template.json.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gguf/writer.h"

namespace folio::hf {

using MetaEntries = std::vector<std::pair<std::string, gguf::MetaValue>>;

// The GGUF tokenizer.* metadata for the checkpoint in `dir`: tokenizer.json (required),
// tokenizer_config.json, chat_template.jinja / chat_template.json and generation_config.json
// when present, and `config` (the parsed config.json: vocab_size, model_type, *_token_id).
// Throws folio::Error naming the file and field on anything missing, malformed or unsupported;
// files are size-capped and allocations bounded by their sizes.
MetaEntries tokenizer_metadata(const std::string& dir, const nlohmann::json& config);

}  // namespace folio::hf
