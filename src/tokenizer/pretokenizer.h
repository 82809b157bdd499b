// tokenizer/pretokenizer.h: the regex pre-tokenizer of byte-level BPE vocabularies.
//
// Before BPE merges run, text is cut into "words" by a chain of regexes chosen
// by `tokenizer.ggml.pre` (llama.cpp's names for Hugging Face pre-tokenizer
// configurations). Each regex in the chain is applied to every piece the
// previous one produced, HF `Split(behavior = Isolated)` style: matches become
// pieces and so do the unmatched gaps between them; lookarounds never see past
// the piece being split.
//
// Patterns are compiled once with PCRE2 (UTF + UCP, JIT) into an immutable
// PreTokenizer; the mutable match state lives in a per-call Scratch. `\s`/`\S`
// are rewritten to Oniguruma's (HF's) definition of whitespace, which also
// counts U+0085, so splits agree with HF exactly.
//
// Invalid UTF-8: PCRE2 needs valid UTF-8, so the text is first cut into
// maximal valid runs; every byte that is not part of a well-formed sequence
// becomes a piece of its own (byte-level BPE then encodes it as that byte).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace folio::tokenizer {

// A piece of the input: [offset, offset + length).
struct Piece {
  std::size_t offset;
  std::size_t length;
};

// Per-call mutable PCRE2 state (match data, JIT stack, piece buffers): cheap
// to create, one per session / thread; usable with any PreTokenizer.
class PreTokenizerScratch {
 public:
  PreTokenizerScratch();
  ~PreTokenizerScratch();
  PreTokenizerScratch(PreTokenizerScratch&&) noexcept;
  PreTokenizerScratch& operator=(PreTokenizerScratch&&) noexcept;

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

class PreTokenizer {
 public:
  // The chain for a `tokenizer.ggml.pre` name. Throws folio::Error naming the
  // value and listing the supported names when it is unknown.
  static PreTokenizer for_name(std::string_view pre);
  // Names accepted by for_name ("" means "default", as llama.cpp treats it).
  static std::vector<std::string> supported_names();

  // Splits `text` into pieces, in order, covering it exactly (appends to out).
  // Throws folio::Error only if PCRE2 itself fails (resource limits).
  void split(std::string_view text, PreTokenizerScratch& scratch, std::vector<Piece>& out) const;

  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;
  ~PreTokenizer();

 private:
  struct Regex;
  explicit PreTokenizer(const std::vector<std::string>& patterns);
  std::vector<std::unique_ptr<Regex>> chain_;
};

}  // namespace folio::tokenizer
