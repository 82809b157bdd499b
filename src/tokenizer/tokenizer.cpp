#include "tokenizer/tokenizer.h"

#include <optional>

#include "base/error.h"
#include "gguf/gguf_file.h"
#include "tokenizer/bpe.h"
#include "tokenizer/detokenizer.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/spm.h"

namespace folio::tokenizer {

namespace {

// Pre-tokenizer families whose HF BPE model sets ignore_merges (Llama 3).
bool ignores_merges(std::string_view pre) {
  return pre == "llama3" || pre == "llama-bpe" || pre == "llama-v3" || pre == "dbrx" ||
         pre == "smaug-bpe";
}

}  // namespace

struct Tokenizer::Impl {
  std::unique_ptr<const Vocab> vocab;  // heap-owned: models keep references into it
  std::optional<PreTokenizer> pre;     // BPE only
  std::unique_ptr<const BpeModel> bpe;
  std::unique_ptr<const SpmEncoder> spm;
  std::unique_ptr<const SpecialTokenMatcher> special;
};

Tokenizer Tokenizer::from_gguf(const gguf::GgufFile& file) {
  return Tokenizer(Vocab::from_gguf(file));
}

Tokenizer::Tokenizer(Vocab vocab) : impl_(std::make_unique<Impl>()) {
  impl_->vocab = std::make_unique<const Vocab>(std::move(vocab));
  const Vocab& v = *impl_->vocab;
  if (v.kind() == VocabKind::kBpe) {
    impl_->pre.emplace(PreTokenizer::for_name(v.pre()));
    impl_->bpe = std::make_unique<const BpeModel>(v, ignores_merges(v.pre()));
  } else {
    impl_->spm = std::make_unique<const SpmEncoder>(v);
  }
  impl_->special = std::make_unique<const SpecialTokenMatcher>(v);
}

Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

const Vocab& Tokenizer::vocab() const {
  return *impl_->vocab;
}

// ---- encoding ------------------------------------------------------------------

struct Tokenizer::Session::Impl {
  const Tokenizer::Impl& tok;
  PreTokenizerScratch pre_scratch;
  BpeScratch bpe_scratch;
  std::vector<Piece> pieces;
  std::vector<Fragment> fragments;

  void encode_plain(std::string_view text, std::vector<TokenId>& out) {
    if (tok.spm) {
      tok.spm->encode(text, tok.vocab->add_space_prefix(), out);
      return;
    }
    pieces.clear();
    tok.pre->split(text, pre_scratch, pieces);
    for (const Piece& p : pieces) {
      tok.bpe->encode_piece(text.substr(p.offset, p.length), bpe_scratch, out);
    }
  }
};

Tokenizer::Session::Session(const Tokenizer& tok)
    : impl_(std::make_unique<Impl>(Impl{*tok.impl_, {}, {}, {}, {}})) {}
Tokenizer::Session::~Session() = default;
Tokenizer::Session::Session(Session&&) noexcept = default;

void Tokenizer::Session::encode(std::string_view text, const EncodeOptions& opt,
                                std::vector<TokenId>& out) {
  const Vocab& v = *impl_->tok.vocab;
  if (opt.add_special && v.add_bos() && v.special().bos) out.push_back(*v.special().bos);
  auto& frags = impl_->fragments;
  frags.clear();
  impl_->tok.special->partition(text, opt.parse_special, frags);
  for (const Fragment& f : frags) {
    if (f.token >= 0)
      out.push_back(f.token);
    else
      impl_->encode_plain(f.text, out);
  }
  if (opt.add_special && v.add_eos() && v.special().eos) out.push_back(*v.special().eos);
}

std::vector<TokenId> Tokenizer::encode(std::string_view text, const EncodeOptions& opt) const {
  std::vector<TokenId> out;
  Session(*this).encode(text, opt, out);
  return out;
}

// ---- decoding ------------------------------------------------------------------

std::string Tokenizer::token_to_piece(TokenId id, bool render_special) const {
  std::string out;
  append_token_bytes(*impl_->vocab, id, render_special, out);
  return out;
}

bool Tokenizer::strips_leading_space(const DecodeOptions& opt) const {
  return opt.strip_leading_space && impl_->vocab->kind() == VocabKind::kSpm &&
         impl_->vocab->add_space_prefix();
}

std::string Tokenizer::decode(std::span<const TokenId> ids, const DecodeOptions& opt) const {
  std::string out;
  for (TokenId id : ids) append_token_bytes(*impl_->vocab, id, opt.render_special, out);
  if (strips_leading_space(opt) && !out.empty() && out[0] == ' ') out.erase(0, 1);
  return out;
}

}  // namespace folio::tokenizer
