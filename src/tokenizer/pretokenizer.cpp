#include "tokenizer/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <utility>

#include "base/error.h"
#include "tokenizer/utf8.h"

namespace folio::tokenizer {

namespace {

// --- the patterns, as Hugging Face tokenizer.json files spell them -----------
// (llama.cpp keeps the same sets in llama-vocab.cpp, some rewritten for
// std::regex; PCRE2 takes the originals, e.g. `(?i:...)`, directly.)

// GPT-2's ByteLevel regex (HF ByteLevel(use_regex=true) adds the final `\s+`).
constexpr const char* kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr const char* kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3})"
    R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2 = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N})"
                               R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kEachDigit = R"(\p{N})";   // HF Digits(individual_digits=true)
constexpr const char* kDigitRuns = R"(\p{N}+)";  // HF Digits(individual_digits=false)
constexpr const char* kNewline = R"([\r\n])";
constexpr const char* kCjk = R"([\x{4E00}-\x{9FA5}\x{0800}-\x{4E00}\x{AC00}-\x{D7FF}]+)";
// DeepSeek LLM: an optional whitespace then a run of cased letters (Lu/Ll/Lt
// ranges written out in its tokenizer.json), then ASCII/full-width punctuation.
constexpr const char* kDeepseekLetters =
    R"(\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293})"
    R"(\x{295}-\x{2AF}\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A})"
    R"(\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556})"
    R"(\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF})"
    R"(\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D})"
    R"(\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D})"
    R"(\x{1F5F}-\x{1F7D}\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4})"
    R"(\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4})"
    R"(\x{1FF6}-\x{1FFC}\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124})"
    R"(\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F})"
    R"(\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4})"
    R"(\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B}\x{A722}-\x{A76F})"
    R"(\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}\x{FB00}-\x{FB06}\x{FB13}-\x{FB17})"
    R"(\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F}\x{104B0}-\x{104D3})"
    R"(\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF})"
    R"(\x{1E900}-\x{1E943}]+)";
constexpr const char* kDeepseekPunct =
    R"(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)";
// HF Punctuation pre-tokenizer: Unicode P plus the ASCII punctuation that
// Unicode files under Symbols.
constexpr const char* kFalconPunct = R"([\p{P}$+<=>^`|~]+)";

struct Family {
  std::vector<const char*> names;  // first one is the canonical name
  std::vector<const char*> chain;
};

const std::vector<Family>& families() {
  static const std::vector<Family> f = {
      {{"default"}, {R"([\p{P}$+<=>^~|]+)", kGpt2, kDigitRuns, "[0-9][0-9][0-9]"}},
      {{"gpt-2", "mpt", "olmo", "jais"}, {kGpt2}},
      {{"llama3", "llama-bpe", "llama-v3", "dbrx", "smaug-bpe"}, {kLlama3}},
      {{"qwen2", "stablelm2"}, {kQwen2}},
      {{"starcoder", "smollm", "refact", "command-r", "codeshell"}, {kEachDigit, kGpt2}},
      {{"deepseek-llm"}, {kNewline, kDeepseekLetters, kDeepseekPunct, R"(\s+$)", kCjk, kDigitRuns}},
      {{"deepseek-coder"}, {kNewline, R"(\s?\p{L}+)", R"(\s?\p{P}+)", kCjk, kEachDigit}},
      {{"falcon"}, {kFalconPunct, kGpt2, "[0-9][0-9][0-9]"}},
  };
  return f;
}

// Oniguruma's \s (what HF matches): TAB..CR, U+0085 and the Z categories.
// PCRE2's UCP \s lacks U+0085, so the patterns are rewritten.
constexpr const char* kSpaceSet = R"(\t\n\x{0B}\f\r\x{85}\p{Z})";

std::string rewrite_whitespace(std::string_view p) {
  std::string out;
  bool in_class = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char e = p[++i];
      if (e == 's') {
        out += in_class ? std::string(kSpaceSet) : "[" + std::string(kSpaceSet) + "]";
      } else if (e == 'S') {
        FOLIO_CHECK(!in_class, "\\S inside a class is not supported");
        out += "[^" + std::string(kSpaceSet) + "]";
      } else {
        out += c;
        out += e;
      }
      continue;
    }
    if (c == '[' && !in_class)
      in_class = true;
    else if (c == ']' && in_class)
      in_class = false;
    out += c;
  }
  return out;
}

}  // namespace

// ---- compiled regex -----------------------------------------------------------

struct PreTokenizer::Regex {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Regex() { pcre2_code_free(code); }
};

struct PreTokenizerScratch::Impl {
  pcre2_match_data* match = nullptr;
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* jit_stack = nullptr;
  std::vector<Piece> cur, next;  // pieces before / after one regex of the chain
};

PreTokenizerScratch::PreTokenizerScratch() : impl_(std::make_unique<Impl>()) {
  impl_->match = pcre2_match_data_create(4, nullptr);
  impl_->context = pcre2_match_context_create(nullptr);
  // Long runs (e.g. megabytes of spaces) need more than the default 32 KiB.
  impl_->jit_stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
  if (!impl_->match || !impl_->context || !impl_->jit_stack) throw Error("out of memory (PCRE2)");
  pcre2_jit_stack_assign(impl_->context, nullptr, impl_->jit_stack);
}

PreTokenizerScratch::~PreTokenizerScratch() {
  if (!impl_) return;
  pcre2_match_data_free(impl_->match);
  pcre2_match_context_free(impl_->context);
  pcre2_jit_stack_free(impl_->jit_stack);
}
PreTokenizerScratch::PreTokenizerScratch(PreTokenizerScratch&&) noexcept = default;
PreTokenizerScratch& PreTokenizerScratch::operator=(PreTokenizerScratch&&) noexcept = default;

PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;
PreTokenizer::~PreTokenizer() = default;

PreTokenizer::PreTokenizer(const std::vector<std::string>& patterns) {
  for (const auto& p : patterns) {
    auto r = std::make_unique<Regex>();
    const std::string pat = rewrite_whitespace(p);
    int err = 0;
    PCRE2_SIZE err_off = 0;
    r->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pat.data()), pat.size(),
                            PCRE2_UTF | PCRE2_UCP, &err, &err_off, nullptr);
    if (r->code == nullptr) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      FOLIO_CHECK(false, "pre-tokenizer pattern does not compile at " + std::to_string(err_off) +
                             ": " + reinterpret_cast<const char*>(msg));
    }
    r->jit = pcre2_jit_compile(r->code, PCRE2_JIT_COMPLETE) == 0;  // falls back to the interpreter
    chain_.push_back(std::move(r));
  }
}

PreTokenizer PreTokenizer::for_name(std::string_view pre) {
  if (pre.empty()) pre = "default";
  for (const auto& fam : families()) {
    for (const char* n : fam.names) {
      if (pre == n)
        return PreTokenizer(std::vector<std::string>(fam.chain.begin(), fam.chain.end()));
    }
  }
  std::string list;
  for (const auto& n : supported_names()) list += (list.empty() ? "" : ", ") + n;
  throw Error("unsupported tokenizer.ggml.pre '" + std::string(pre) +
              "' (supported pre-tokenizers: " + list + ")");
}

std::vector<std::string> PreTokenizer::supported_names() {
  std::vector<std::string> out;
  for (const auto& fam : families()) out.insert(out.end(), fam.names.begin(), fam.names.end());
  return out;
}

namespace {

// Splits text[p] by one regex, appending matches and the gaps between them.
void split_one(const pcre2_code* code, bool jit, std::string_view text, Piece p,
               PreTokenizerScratch::Impl& s, std::vector<Piece>& out) {
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data() + p.offset);
  std::size_t start = 0, last = 0;
  while (start < p.length) {
    const int rc =
        jit ? pcre2_jit_match(code, subject, p.length, start, 0, s.match, s.context)
            : pcre2_match(code, subject, p.length, start, PCRE2_NO_UTF_CHECK, s.match, s.context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(rc, msg, sizeof msg);
      throw Error(std::string("pre-tokenizer regex failed on this input: ") +
                  reinterpret_cast<const char*>(msg));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(s.match);
    const std::size_t ms = ov[0], me = ov[1];
    if (me <= ms) {  // empty match: none of our patterns can, but never loop forever
      const std::size_t n = utf8::valid_sequence_length(text.substr(p.offset, p.length), ms);
      start = ms + (n > 0 ? n : 1);
      continue;
    }
    if (ms > last) out.push_back({p.offset + last, ms - last});
    out.push_back({p.offset + ms, me - ms});
    start = last = me;
  }
  if (last < p.length) out.push_back({p.offset + last, p.length - last});
}

}  // namespace

void PreTokenizer::split(std::string_view text, PreTokenizerScratch& scratch,
                         std::vector<Piece>& out) const {
  auto& s = scratch.impl();
  // Runs the chain over one valid-UTF-8 run [begin, end).
  auto run_chain = [&](std::size_t begin, std::size_t end) {
    if (begin == end) return;
    s.cur.assign(1, Piece{begin, end - begin});
    for (const auto& r : chain_) {
      s.next.clear();
      for (const Piece& p : s.cur) split_one(r->code, r->jit, text, p, s, s.next);
      std::swap(s.cur, s.next);
    }
    out.insert(out.end(), s.cur.begin(), s.cur.end());
  };
  std::size_t run_begin = 0, i = 0;
  while (i < text.size()) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8::valid_sequence_length(text, i);
    if (n > 0) {
      i += n;
      continue;
    }
    run_chain(run_begin, i);
    out.push_back({i, 1});  // an invalid byte stands alone
    run_begin = ++i;
  }
  run_chain(run_begin, text.size());
}

}  // namespace folio::tokenizer
