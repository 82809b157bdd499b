// tokenizer/vocab.h: the immutable vocabulary of a model, read from GGUF metadata.
//
// Built once (from `tokenizer.ggml.*` keys) and shared read-only by every
// tokenizer session. Holds what BPE and SentencePiece encoders and the
// detokenizer need: token texts, scores, types, merges and special ids.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/token_id.h"

namespace folio::gguf {
class GgufFile;
}

namespace folio::tokenizer {

// tokenizer.ggml.model
enum class VocabKind { kBpe /* "gpt2" */, kSpm /* "llama" */ };

// tokenizer.ggml.token_type (llama.cpp's llama_token_type values).
enum class TokenType : std::int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

struct SpecialIds {
  std::optional<TokenId> bos, eos, unk, pad, sep, eot;
};

class Vocab {
 public:
  // Reads the tokenizer from GGUF metadata. Throws folio::Error naming the
  // key when something is missing, of the wrong type or inconsistent (e.g. an
  // id out of range, array lengths that disagree, an unsupported model kind).
  static Vocab from_gguf(const gguf::GgufFile& file);

  Vocab(Vocab&&) noexcept = default;  // moving keeps token storage (and index_'s views) in place
  Vocab& operator=(Vocab&&) noexcept = default;
  Vocab(const Vocab&) = delete;
  Vocab& operator=(const Vocab&) = delete;

  VocabKind kind() const { return kind_; }
  const std::string& pre() const { return pre_; }  // tokenizer.ggml.pre ("" when absent)
  std::size_t size() const { return tokens_.size(); }

  const std::string& text(TokenId id) const { return tokens_[static_cast<std::size_t>(id)]; }
  float score(TokenId id) const {
    return scores_.empty() ? 0.0f : scores_[static_cast<std::size_t>(id)];
  }
  TokenType type(TokenId id) const {
    return types_.empty() ? TokenType::kNormal : types_[static_cast<std::size_t>(id)];
  }
  bool valid(TokenId id) const { return id >= 0 && static_cast<std::size_t>(id) < tokens_.size(); }
  std::optional<TokenId> find(std::string_view text) const;

  // BPE merges in priority order ("left right" pairs as stored in GGUF).
  const std::vector<std::string>& merges() const { return merges_; }

  const SpecialIds& special() const { return special_; }
  bool add_bos() const { return add_bos_; }
  bool add_eos() const { return add_eos_; }
  bool add_space_prefix() const { return add_space_prefix_; }

  // For SentencePiece byte fallback: id of the token "<0xXX>", if present.
  std::optional<TokenId> byte_token(std::uint8_t byte) const {
    const TokenId id = byte_tokens_[byte];
    return id >= 0 ? std::optional(id) : std::nullopt;
  }

 private:
  Vocab() = default;

  VocabKind kind_ = VocabKind::kBpe;
  std::string pre_;
  std::vector<std::string> tokens_;
  std::vector<float> scores_;     // empty when the file has none
  std::vector<TokenType> types_;  // empty when the file has none
  std::vector<std::string> merges_;
  std::unordered_map<std::string_view, TokenId> index_;  // views into tokens_
  SpecialIds special_;
  bool add_bos_ = false;
  bool add_eos_ = false;
  bool add_space_prefix_ = false;
  TokenId byte_tokens_[256];
};

}  // namespace folio::tokenizer
