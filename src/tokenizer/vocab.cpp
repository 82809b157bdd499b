#include "tokenizer/vocab.h"

#include <algorithm>
#include <cstdio>

#include "base/error.h"
#include "gguf/gguf_file.h"

namespace folio::tokenizer {

namespace {

std::optional<TokenId> read_id(const gguf::GgufFile& f, const char* key, std::size_t n_tokens) {
  const auto v = f.get_int(key);
  if (!v) return std::nullopt;
  // llama.cpp writes -1 (as uint32 0xffffffff in some converters) for "none".
  if (*v == -1 || *v == 0xffffffffLL) return std::nullopt;
  if (*v < 0 || static_cast<std::uint64_t>(*v) >= n_tokens) {
    throw Error("GGUF metadata '" + std::string(key) + "' = " + std::to_string(*v) +
                " is not a valid token id (vocabulary has " + std::to_string(n_tokens) +
                " tokens)");
  }
  return static_cast<TokenId>(*v);
}

}  // namespace

Vocab Vocab::from_gguf(const gguf::GgufFile& f) {
  Vocab v;
  const std::string_view model = f.require_string("tokenizer.ggml.model");
  if (model == "gpt2") {
    v.kind_ = VocabKind::kBpe;
  } else if (model == "llama") {
    v.kind_ = VocabKind::kSpm;
  } else {
    throw Error("unsupported tokenizer.ggml.model '" + std::string(model) +
                "' (supported: gpt2 = byte-level BPE, llama = SentencePiece)");
  }
  v.pre_ = std::string(f.get_string("tokenizer.ggml.pre").value_or(""));

  const auto* tokens = f.get_array("tokenizer.ggml.tokens");
  if (tokens == nullptr) throw Error("GGUF file lacks 'tokenizer.ggml.tokens'");
  if (tokens->empty()) throw Error("'tokenizer.ggml.tokens' is empty");
  if (tokens->size() > static_cast<std::size_t>(INT32_MAX)) {
    throw Error("'tokenizer.ggml.tokens' has too many entries");
  }
  const std::size_t n = tokens->size();
  v.tokens_.reserve(n);
  for (const auto& t : *tokens) v.tokens_.emplace_back(t.as_string("tokenizer.ggml.tokens"));

  if (const auto* scores = f.get_array("tokenizer.ggml.scores")) {
    if (scores->size() != n) {
      throw Error("'tokenizer.ggml.scores' has " + std::to_string(scores->size()) +
                  " entries but there are " + std::to_string(n) + " tokens");
    }
    v.scores_.reserve(n);
    for (const auto& s : *scores) {
      v.scores_.push_back(static_cast<float>(s.as_float("tokenizer.ggml.scores")));
    }
  }
  if (const auto* types = f.get_array("tokenizer.ggml.token_type")) {
    if (types->size() != n) {
      throw Error("'tokenizer.ggml.token_type' has " + std::to_string(types->size()) +
                  " entries but there are " + std::to_string(n) + " tokens");
    }
    v.types_.reserve(n);
    for (const auto& t : *types) {
      const std::int64_t x = t.as_int("tokenizer.ggml.token_type");
      if (x < 0 || x > static_cast<std::int64_t>(TokenType::kByte)) {
        throw Error("'tokenizer.ggml.token_type' holds unknown type " + std::to_string(x));
      }
      v.types_.push_back(static_cast<TokenType>(x));
    }
  }
  if (const auto* merges = f.get_array("tokenizer.ggml.merges")) {
    v.merges_.reserve(merges->size());
    for (const auto& m : *merges) v.merges_.emplace_back(m.as_string("tokenizer.ggml.merges"));
  } else if (v.kind_ == VocabKind::kBpe) {
    throw Error("BPE vocabulary lacks 'tokenizer.ggml.merges'");
  }

  v.index_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    // On duplicate texts the first id wins, as in llama.cpp and HF.
    v.index_.emplace(std::string_view(v.tokens_[i]), static_cast<TokenId>(i));
  }

  v.special_.bos = read_id(f, "tokenizer.ggml.bos_token_id", n);
  v.special_.eos = read_id(f, "tokenizer.ggml.eos_token_id", n);
  v.special_.unk = read_id(f, "tokenizer.ggml.unknown_token_id", n);
  v.special_.pad = read_id(f, "tokenizer.ggml.padding_token_id", n);
  v.special_.sep = read_id(f, "tokenizer.ggml.seperator_token_id", n);
  v.special_.eot = read_id(f, "tokenizer.ggml.eot_token_id", n);
  if (!v.special_.eot) {
    // Chat models whose converter did not write the key still end a turn
    // with a control token of a well-known text (llama.cpp does the same):
    // Gemma's <end_of_turn> (HF's generation_config lists it beside EOS).
    for (const char* text : {"<end_of_turn>", "<|eot_id|>", "<|im_end|>"}) {
      const auto id = v.find(text);
      if (id && v.type(*id) == TokenType::kControl) {
        v.special_.eot = id;
        break;
      }
    }
  }

  const bool spm = v.kind_ == VocabKind::kSpm;
  v.add_bos_ = f.get_bool("tokenizer.ggml.add_bos_token").value_or(spm);
  v.add_eos_ = f.get_bool("tokenizer.ggml.add_eos_token").value_or(false);
  v.add_space_prefix_ = f.get_bool("tokenizer.ggml.add_space_prefix").value_or(spm);

  std::fill(std::begin(v.byte_tokens_), std::end(v.byte_tokens_), TokenId{-1});
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    if (auto id = v.find(name)) v.byte_tokens_[b] = *id;
  }
  return v;
}

std::optional<TokenId> Vocab::find(std::string_view text) const {
  auto it = index_.find(text);
  return it == index_.end() ? std::nullopt : std::optional(it->second);
}

}  // namespace folio::tokenizer
