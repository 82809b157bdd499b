// hf/hf_tokenizer.cpp: tokenizer.json & co. -> GGUF tokenizer.* metadata (see hf_tokenizer.h).
//
// Order: the files are parsed (bounded size and nesting); the ids of model.vocab and
// added_tokens are laid out and checked dense; the family is decided from the model type, the
// pre-tokenizer and the normalizer; then the family's extras (merges and pre name, or scores),
// padding to config.json's vocab_size, the special ids, the add_* flags, the chat template.
// Every JSON access goes through Node, so every error names the file and the field.
#include "hf/hf_tokenizer.h"

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "base/error.h"
#include "hf/json_file.h"

namespace folio::hf {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// llama.cpp's token types (tokenizer::TokenType; hf does not link the tokenizer module).
enum TokenType : std::int32_t { kNormal = 1, kUnknown, kControl, kUserDefined, kUnused, kByte };

constexpr std::uintmax_t kMaxTokenizerJson = std::uintmax_t{1} << 30;  // real ones: < 40 MB
constexpr std::uintmax_t kMaxSideFile = std::uintmax_t{64} << 20;
constexpr float kControlScore = -1000.0f;  // what llama.cpp gives control and added tokens
constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// The pre-tokenizer regexes of the families folio knows, as tokenizer.json spells them
// (tokenizer/pretokenizer.cpp holds the same patterns for folio's own use).
constexpr std::string_view kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3})"
    R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N})"
    R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// ---- the vocabulary ------------------------------------------------------------------------

// Hash for lookups by string_view in maps keyed by std::string (no temporary strings). Not
// noexcept: libstdc++ then caches hash codes in the nodes instead of rehashing keys on lookups.
struct TextHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TextIds = std::unordered_map<std::string, std::int32_t, TextHash, std::equal_to<>>;

struct Vocabulary {
  bool spm = false;                 // tokenizer.ggml.model "llama" (else "gpt2")
  std::vector<std::string> texts;   // by id, as GGUF stores them
  std::vector<std::int32_t> types;  // by id
  std::vector<float> scores;        // SentencePiece only
  std::vector<std::string> merges;  // byte-level only, "left right"
  std::string pre = "default";      // tokenizer.ggml.pre
  bool add_space_prefix = false;    // SentencePiece only
  std::optional<std::int32_t> unk;  // the model's unk_token / unk_id
  TextIds added;                    // added_tokens content -> id (the first of equal contents)
  TextIds base;                     // model.vocab text -> id

  std::optional<std::int32_t> find(std::string_view text) const {
    if (const auto it = added.find(text); it != added.end()) return it->second;
    if (const auto it = base.find(text); it != base.end()) return it->second;
    return std::nullopt;
  }
  std::int32_t type(std::int32_t id) const { return types[static_cast<std::size_t>(id)]; }
};

struct AddedToken {
  std::int32_t id;
  std::string content;
  bool special;
};

// llama.cpp's does_token_look_special: added tokens some checkpoints forget to mark special.
bool looks_special(std::string_view t) {
  auto wraps = [&](std::string_view open, std::string_view close) {
    return t.size() >= open.size() + close.size() && t.substr(0, open.size()) == open &&
           t.substr(t.size() - close.size()) == close;
  };
  return t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]" || wraps("<|", "|>") ||
         wraps("<\xEF\xBD\x9C", "\xEF\xBD\x9C>") || wraps("<unused", ">");
}

bool is_byte_token(std::string_view t) {
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  return t.size() == 6 && t.substr(0, 3) == "<0x" && hex(t[3]) && hex(t[4]) && t[5] == '>';
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// Lays out model.vocab and added_tokens by id: dense 0..n-1, no id used by two texts. Each
// entry fills at most one id, so an id at or past the number of entries leaves a hole.
class IdSpace {
 public:
  explicit IdSpace(std::size_t entries) : texts_(entries), from_(entries, kNone) {}

  void place_base(const Node& where, std::int64_t id, const std::string& text) {
    const std::size_t i = check_range(where, id, text);
    if (from_[i] != kNone) {
      where.fail("id " + std::to_string(id) + " is used by both '" + texts_[i] + "' and '" + text +
                 "'");
    }
    texts_[i] = text;
    from_[i] = kBase;
  }
  // An added token may repeat a model.vocab entry (same id and text) or take a new id.
  void place_added(const Node& where, std::int64_t id, const std::string& text) {
    const std::size_t i = check_range(where, id, text);
    if (from_[i] != kNone && texts_[i] != text) {
      where.fail("id " + std::to_string(id) + " is '" + text + "' here but '" + texts_[i] +
                 "' in " + (from_[i] == kBase ? "model.vocab" : "an earlier added token"));
    }
    texts_[i] = text;
    from_[i] = kAdded;
  }
  // The texts by id; throws naming the first hole.
  std::vector<std::string> take_dense(const Node& tok) {
    std::size_t n = from_.size();
    while (n > 0 && from_[n - 1] == kNone) --n;
    if (n == 0) tok.fail("the vocabulary is empty (model.vocab and added_tokens)");
    const auto hole =
        std::find(from_.begin(), from_.begin() + static_cast<std::ptrdiff_t>(n), kNone);
    if (hole != from_.begin() + static_cast<std::ptrdiff_t>(n)) {
      tok.fail("no token has id " + std::to_string(hole - from_.begin()) +
               " (ids of model.vocab and added_tokens must run 0.." + std::to_string(n - 1) +
               " without holes)");
    }
    texts_.resize(n);
    return std::move(texts_);
  }

 private:
  enum From : std::uint8_t { kNone, kBase, kAdded };
  std::size_t check_range(const Node& where, std::int64_t id, const std::string& text) const {
    if (id < 0 || static_cast<std::uint64_t>(id) >= texts_.size()) {
      where.fail("id " + std::to_string(id) + " of '" + text +
                 "' leaves holes: " + std::to_string(texts_.size()) +
                 " entries of model.vocab and added_tokens must have ids 0.." +
                 std::to_string(texts_.size() - 1));
    }
    return static_cast<std::size_t>(id);
  }
  std::vector<std::string> texts_;
  std::vector<From> from_;
};

// model.vocab (BPE: {text: id}; Unigram: [[text, score], ...]) and added_tokens, by id.
void read_ids(const Node& tok, const Node& model, bool unigram, Vocabulary& v,
              std::vector<AddedToken>& added, std::vector<float>& unigram_scores) {
  const Node vocab = model.at("vocab");
  const std::vector<Node> added_nodes =
      tok.get("added_tokens") ? tok.at("added_tokens").elements() : std::vector<Node>{};
  if (!unigram && !vocab.value().is_object()) {
    vocab.fail("expected an object, found " + vocab.type_name());
  }
  const std::size_t n_base = unigram ? vocab.array_size() : vocab.value().size();
  IdSpace ids(n_base + added_nodes.size());
  if (unigram) {
    for (std::size_t i = 0; i < n_base; ++i) {
      const Node e = vocab[i];
      if (e.array_size() != 2) e.fail("expected [piece, score]");
      const double score = e[1].number();
      if (!(std::fabs(score) <= FLT_MAX)) e[1].fail("score out of range");
      unigram_scores.push_back(static_cast<float>(score));
      ids.place_base(e, static_cast<std::int64_t>(i), e[0].str());
      v.base.emplace(e[0].str(), static_cast<std::int32_t>(i));
    }
  } else {
    for (const auto& item : vocab.value().items()) {
      const Node e(item.value(), vocab.file(), vocab.path() + "[\"" + item.key() + "\"]");
      ids.place_base(e, e.integer(), item.key());
      v.base.emplace(item.key(), static_cast<std::int32_t>(e.integer()));
    }
  }
  for (const Node& a : added_nodes) {
    const Node id = a.at("id");
    AddedToken t{0, a.at("content").str(), a.bool_or("special", false)};
    ids.place_added(id, id.integer(), t.content);
    t.id = static_cast<std::int32_t>(id.integer());
    v.added.emplace(t.content, t.id);
    added.push_back(std::move(t));
  }
  v.texts = ids.take_dense(tok);
  v.types.assign(v.texts.size(), kNormal);
}

// Types of added tokens, as llama.cpp assigns them: special (or special-looking) -> CONTROL,
// else USER_DEFINED, whose "▁" SentencePiece vocabularies store as real spaces.
void type_added_tokens(const std::vector<AddedToken>& added, Vocabulary& v) {
  for (const AddedToken& t : added) {
    const auto i = static_cast<std::size_t>(t.id);
    v.types[i] = t.special || looks_special(t.content) ? kControl : kUserDefined;
    if (v.spm && v.types[i] == kUserDefined) v.texts[i] = replace_all(t.content, kSpaceMark, " ");
  }
}

// "left right" for GGUF, from either form of tokenizer.json merges. An array part's space
// becomes U+0120, as llama.cpp writes it (byte-level text never holds a real space).
std::string merge_string(const Node& m) {
  if (m.value().is_string()) {
    std::string s = m.str();
    const std::size_t sp = s.find(' ');
    if (sp == 0 || sp == std::string::npos || sp + 1 == s.size() ||
        s.find(' ', sp + 1) != std::string::npos) {
      m.fail("expected \"left right\" (two non-empty parts and one space), found \"" + s + "\"");
    }
    return s;
  }
  if (m.array_size() != 2) m.fail("expected [left, right]");
  if (m[0].str().empty() || m[1].str().empty()) m.fail("empty merge part");
  return replace_all(m[0].str(), " ", "\xC4\xA0") + " " + replace_all(m[1].str(), " ", "\xC4\xA0");
}

// ---- byte-level BPE --------------------------------------------------------------------------

bool has_byte_level(const std::optional<Node>& pre) {
  if (!pre) return false;
  const auto items = pre->chain("pretokenizers");
  return std::any_of(items.begin(), items.end(),
                     [](const Node& n) { return n.at("type").str() == "ByteLevel"; });
}

// One line for an error: "Split({"Regex":...}, Isolated) + ByteLevel(add_prefix_space=false, ...)".
std::string describe_pre(const std::vector<Node>& items) {
  std::string out;
  for (const Node& it : items) {
    auto flag = [&](const char* key, bool fallback) {
      return std::string(key) + (it.bool_or(key, fallback) ? "=true" : "=false");
    };
    const std::string type = it.at("type").str();
    out += out.empty() ? "" : " + ";
    if (type == "Split") {
      out += "Split(" + it.at("pattern").dump(120) + ", " + it.str_or("behavior", "") +
             (it.bool_or("invert", false) ? ", invert)" : ")");
    } else if (type == "ByteLevel") {
      out += "ByteLevel(" + flag("add_prefix_space", true) + ", " + flag("use_regex", true) + ")";
    } else if (type == "Digits") {
      out += "Digits(" + flag("individual_digits", false) + ")";
    } else {
      out += it.dump(120);
    }
  }
  return out;
}

// tokenizer.ggml.pre for a byte-level pre-tokenizer: its structure and regex name one of the
// families folio's pre-tokenizer implements; anything else is refused, saying what it was.
std::string byte_level_pre(const Node& pre, const std::string& model_type) {
  const std::vector<Node> items = pre.chain("pretokenizers");
  const Node& last = items.back();
  if (last.at("type").str() == "ByteLevel") {
    if (last.bool_or("add_prefix_space", true)) {
      last.fail("ByteLevel add_prefix_space=true is not supported");
    }
    const bool regex = last.bool_or("use_regex", true);
    if (items.size() == 1 && regex) return "gpt-2";
    const Node& first = items.front();
    const std::string type = first.at("type").str();
    if (items.size() == 2 && type == "Digits" && regex &&
        first.bool_or("individual_digits", false)) {
      // One chain in folio; the name follows what llama.cpp writes for the model family.
      return model_type == "starcoder2" || model_type == "gpt_bigcode" ? "starcoder" : "smollm";
    }
    if (items.size() == 2 && type == "Split" && !regex &&
        first.str_or("behavior", "") == "Isolated" && !first.bool_or("invert", false)) {
      const std::string re = first.at("pattern").str_or("Regex", "");
      if (re == kLlama3Regex) return "llama-bpe";
      if (re == kQwen2Regex) return "qwen2";
    }
  }
  pre.fail("unsupported byte-level pre-tokenizer " + describe_pre(items) +
           " (folio knows ByteLevel = gpt-2; Digits(individual_digits) + ByteLevel = "
           "smollm/starcoder; Split(Llama 3 regex) + ByteLevel(use_regex=false) = llama-bpe; "
           "Split(Qwen2 regex) + ByteLevel(use_regex=false) = qwen2)");
}

void read_byte_level(const Node& tok, const Node& model, const std::string& model_type,
                     Vocabulary& v) {
  if (model.bool_or("byte_fallback", false)) {
    model.at("byte_fallback").fail("byte_fallback with a ByteLevel pre-tokenizer is not supported");
  }
  // NFC (Qwen2) is not applied by folio, nor by llama.cpp: text already in NFC is unaffected.
  if (const auto norm = tok.get("normalizer"); norm && norm->at("type").str() != "NFC") {
    norm->fail("unsupported normalizer for byte-level BPE: " + norm->dump());
  }
  v.pre = byte_level_pre(tok.at("pre_tokenizer"), model_type);
  const bool ignore_merges = model.bool_or("ignore_merges", false);
  if (ignore_merges != (v.pre == "llama-bpe")) {  // folio ties ignore_merges to llama-bpe
    model.fail(std::string("ignore_merges is ") + (ignore_merges ? "true" : "false") +
               " but folio's '" + v.pre + "' pre-tokenizer implies " +
               (ignore_merges ? "false" : "true"));
  }
  for (const Node& m : model.at("merges").elements()) {
    std::string s = merge_string(m);
    const std::size_t sp = s.find(' ');
    for (const std::string& t :
         {s.substr(0, sp), s.substr(sp + 1), s.substr(0, sp) + s.substr(sp + 1)}) {
      if (!v.find(t)) m.fail("'" + t + "' is not a token");
    }
    v.merges.push_back(std::move(s));
  }
}

// ---- SentencePiece-style (Llama 2, Gemma 3) --------------------------------------------------

struct SpmText {
  bool escapes = false;  // " " becomes "▁" before the model
  bool prefix = false;   // one "▁" is prepended (tokenizer.ggml.add_space_prefix)
  bool split = false;    // Metaspace split=true: pieces never cross a "▁"
};

bool replaces_space(const Node& n) {
  const auto pattern = n.get("pattern");
  return pattern && pattern->str_or("String", "") == " " && n.str_or("content", "") == kSpaceMark;
}

SpmText read_spm_text(const Node& tok) {
  SpmText t;
  if (const auto norm = tok.get("normalizer")) {
    for (const Node& n : norm->chain("normalizers")) {
      const std::string type = n.at("type").str();
      if (type == "Replace" && replaces_space(n)) {
        t.escapes = true;
      } else if (type == "Prepend" && n.str_or("prepend", "") == kSpaceMark) {
        t.prefix = true;
      } else {
        n.fail("unsupported normalizer " + n.dump() +
               " (folio's SentencePiece path handles Replace(' ', '\xE2\x96\x81') and "
               "Prepend('\xE2\x96\x81'))");
      }
    }
  }
  if (const auto pre = tok.get("pre_tokenizer")) {
    const std::string type = pre->at("type").str();
    const auto split_string = type == "Split" ? pre->at("pattern").get("String") : std::nullopt;
    if (type == "Metaspace") {
      if (pre->str_or("replacement", std::string(kSpaceMark)) != kSpaceMark) {
        pre->fail("Metaspace replacement must be '\xE2\x96\x81'");
      }
      t.escapes = true;
      const std::string scheme = pre->str_or("prepend_scheme", "");
      if (scheme != "" && scheme != "always" && scheme != "first" && scheme != "never") {
        pre->at("prepend_scheme").fail("unknown prepend_scheme '" + scheme + "'");
      }
      t.prefix = scheme.empty() ? pre->bool_or("add_prefix_space", true) : scheme != "never";
      t.split = pre->bool_or("split", true);
    } else if (!(t.escapes && split_string && split_string->str() == " ")) {
      // (A Split on " " after the normalizer turned every " " into "▁" never splits: Gemma 3.)
      pre->fail("unsupported pre-tokenizer for a SentencePiece-style model: " + pre->dump());
    }
  }
  if (!t.escapes) {
    tok.fail("neither the normalizer nor the pre-tokenizer turns ' ' into '\xE2\x96\x81'");
  }
  return t;
}

bool looks_like_spm(const Node& tok, const Node& model) {
  const auto pre = tok.get("pre_tokenizer");
  const auto norm = tok.get("normalizer");
  return model.bool_or("byte_fallback", false) || (pre && pre->at("type").str() == "Metaspace") ||
         (norm && norm->dump(std::string::npos).find(kSpaceMark) != std::string::npos);
}

// Scores that make folio's SentencePiece encoder (merge the adjacent pair whose result has the
// highest score, leftmost on ties) merge as HF's BPE does (the pair of lowest rank): a token
// scores minus the rank of its first merge. Checked: every way the encoder could form a normal
// token (two adjacent symbols, each a normal token or one character outside the vocabulary) is
// a merge, and a merge of normal tokens gives a token the encoder may produce.
void spm_scores_from_merges(const Node& model, Vocabulary& v) {
  const std::vector<Node> merges = model.at("merges").elements();
  if (merges.size() >= (std::size_t{1} << 24)) model.at("merges").fail("more than 2^24 merges");
  auto pair_key = [](std::int32_t l, std::int32_t r) {
    return (std::uint64_t(std::uint32_t(l)) << 32) | std::uint32_t(r);
  };
  std::vector<std::int64_t> first_rank(v.texts.size(), -1);
  std::unordered_map<std::uint64_t, std::size_t> rank_of;
  rank_of.reserve(merges.size());
  for (std::size_t r = 0; r < merges.size(); ++r) {
    const std::string m = merge_string(merges[r]);
    const std::size_t sp = m.find(' ');
    const std::string left = m.substr(0, sp), right = m.substr(sp + 1);
    const auto l = v.find(left), rt = v.find(right), res = v.find(left + right);
    if (!l || !rt || !res) {
      merges[r].fail("'" + (!l ? left : !rt ? right : left + right) + "' is not a token");
    }
    if (v.type(*l) == kNormal && v.type(*rt) == kNormal && v.type(*res) != kNormal &&
        v.type(*res) != kUserDefined) {
      merges[r].fail("merges two normal tokens into '" + left + right +
                     "', which folio's SentencePiece encoder never produces from text");
    }
    rank_of.emplace(pair_key(*l, *rt), r);
    auto& fr = first_rank[static_cast<std::size_t>(*res)];
    if (fr < 0) fr = static_cast<std::int64_t>(r);
  }
  v.scores.assign(v.texts.size(), 0.0f);
  for (std::size_t i = 0; i < v.texts.size(); ++i) {
    if (first_rank[i] >= 0) {
      v.scores[i] = -static_cast<float>(first_rank[i]);  // exact: ranks < 2^24
    } else if (v.types[i] == kControl || v.types[i] == kUserDefined) {
      v.scores[i] = kControlScore;
    }
  }
  // A side is formable when it is a normal token or one character no token spells.
  auto formable = [&](std::string_view s, std::optional<std::int32_t>& id) {
    id = v.find(s);
    if (id) return v.type(*id) == kNormal;
    const auto c = static_cast<unsigned char>(s[0]);
    return s.size() == (c < 0xC0 ? 1u : c < 0xE0 ? 2u : c < 0xF0 ? 3u : 4u);
  };
  for (std::size_t i = 0; i < v.texts.size(); ++i) {
    const std::string& t = v.texts[i];
    for (std::size_t cut = 1; v.types[i] == kNormal && cut < t.size(); ++cut) {
      if ((static_cast<unsigned char>(t[cut]) & 0xC0) == 0x80) continue;  // inside a character
      std::optional<std::int32_t> l, r;
      if (!formable(std::string_view(t).substr(0, cut), l) ||
          !formable(std::string_view(t).substr(cut), r) ||
          (l && r && rank_of.count(pair_key(*l, *r)) > 0)) {
        continue;
      }
      model.at("merges").fail(
          "'" + t + "' can be formed from '" + t.substr(0, cut) + "' + '" + t.substr(cut) +
          "', which is not a merge: folio's SentencePiece encoder (merging by token score) "
          "would form it where Hugging Face does not");
    }
  }
}

void read_sentencepiece(const Node& tok, const Node& model, bool unigram,
                        std::vector<float>& unigram_scores, Vocabulary& v) {
  const SpmText text = read_spm_text(tok);
  v.add_space_prefix = text.prefix;
  bool has_byte_tokens = false;
  for (std::size_t i = 0; i < v.texts.size(); ++i) {
    if (v.types[i] == kNormal && is_byte_token(v.texts[i])) {
      v.types[i] = kByte;
      has_byte_tokens = true;
    }
  }
  if (has_byte_tokens && !model.bool_or("byte_fallback", false)) {
    model.fail(
        "byte_fallback is false but the vocabulary has <0xXX> tokens, which folio's "
        "SentencePiece encoder would use for unknown characters");
  }
  if (const auto unk = model.get(unigram ? "unk_id" : "unk_token")) {
    const std::int64_t id = unigram ? unk->integer() : v.find(unk->str()).value_or(-1);
    if (id < 0 || static_cast<std::uint64_t>(id) >= v.texts.size()) {
      unk->fail(unk->dump() + " is not a token");
    }
    v.unk = static_cast<std::int32_t>(id);
    if (v.type(*v.unk) == kNormal) v.types[static_cast<std::size_t>(id)] = kUnknown;
  }
  if (unigram) {
    v.scores = std::move(unigram_scores);
    v.scores.resize(v.texts.size(), kControlScore);  // added tokens past model.vocab
  } else {
    spm_scores_from_merges(model, v);
  }
  for (std::size_t i = 0; text.split && i < v.texts.size(); ++i) {
    if (v.types[i] == kNormal && v.texts[i].find(kSpaceMark, 1) != std::string::npos) {
      tok.at("pre_tokenizer")
          .fail("Metaspace split=true with token '" + v.texts[i] +
                "' holding an inner '\xE2\x96\x81': folio's encoder does not split there");
    }
  }
}

// ---- special tokens, add_* flags, padding, chat template -----------------------------------

// The roles llama.cpp reads: "<name>_token" in tokenizer_config.json, "<name>_token_id" in
// config.json and generation_config.json, and the GGUF key each is written to.
struct SpecialRole {
  const char* name;
  const char* key;
};
constexpr SpecialRole kRoles[] = {
    {"bos", "tokenizer.ggml.bos_token_id"},     {"eos", "tokenizer.ggml.eos_token_id"},
    {"unk", "tokenizer.ggml.unknown_token_id"}, {"sep", "tokenizer.ggml.seperator_token_id"},
    {"pad", "tokenizer.ggml.padding_token_id"}, {"cls", "tokenizer.ggml.cls_token_id"},
    {"mask", "tokenizer.ggml.mask_token_id"},
};
constexpr std::size_t kNumRoles = std::size(kRoles);
constexpr std::size_t kBos = 0, kEos = 1, kUnk = 2;

// End-of-turn tokens that an eos_token_id list may hold beside the end-of-text eos.
constexpr std::string_view kEotTexts[] = {"<|eot_id|>", "<|im_end|>", "<end_of_turn>", "<|end|>"};

struct Specials {
  std::optional<std::int32_t> id[kNumRoles];
  std::optional<std::int32_t> eot;
  std::optional<bool> add_bos, add_eos;
  std::vector<std::int32_t> eos_lists;  // every id of eos_token_id lists, in order
};

// bos_token, eos_token, ... of tokenizer_config.json: a string or {"content": string}. A name
// that is no token is skipped, as llama.cpp does, except for bos and eos.
void read_token_names(const Node& tcfg, const Vocabulary& v, Specials& s) {
  for (std::size_t r = 0; r < kNumRoles; ++r) {
    const auto n = tcfg.get(std::string(kRoles[r].name) + "_token");
    if (!n) continue;
    const std::string text = n->value().is_object() ? n->at("content").str() : n->str();
    s.id[r] = v.find(text);
    if (!s.id[r] && (r == kBos || r == kEos)) n->fail("'" + text + "' is not a token");
  }
}

// What a TemplateProcessing adds first (bos) or last (eos) for one sequence: the role's token,
// which it defines when tokenizer_config.json names none; any other token is refused.
void template_token(const Node& processor, const Node& item, std::size_t role, std::size_t n_vocab,
                    Specials& s) {
  std::optional<bool>& flag = role == kBos ? s.add_bos : s.add_eos;
  const auto special = item.get("SpecialToken");
  flag = special.has_value();
  if (!special) return;
  const std::string name = special->at("id").str();
  const Node ids = processor.at("special_tokens").at(name).at("ids");
  if (ids.array_size() != 1)
    ids.fail("folio adds one token per special token, found " + ids.dump());
  const std::int64_t id = ids[0].integer();
  if (id < 0 || static_cast<std::uint64_t>(id) >= n_vocab) ids[0].fail("not a token id");
  if (!s.id[role]) s.id[role] = static_cast<std::int32_t>(id);
  if (*s.id[role] != id) {
    item.fail("adds token " + std::to_string(id) + " ('" + name + "'), not the " +
              kRoles[role].name + " token " + std::to_string(*s.id[role]));
  }
}

// add_bos / add_eos (and bos / eos when nothing names them) from the post-processor.
void read_post_processor(const Node& tok, std::size_t n_vocab, Specials& s) {
  const auto pp = tok.get("post_processor");
  for (const Node& p : pp ? pp->chain("processors") : std::vector<Node>{}) {
    const std::string type = p.at("type").str();
    if (type == "ByteLevel") {
      s.add_bos = s.add_bos.value_or(false);
      s.add_eos = s.add_eos.value_or(false);
    } else if (type == "TemplateProcessing") {
      const std::vector<Node> single = p.at("single").elements();
      s.add_bos = s.add_eos = false;
      if (!single.empty()) template_token(p, single.front(), kBos, n_vocab, s);
      if (single.size() >= 2) template_token(p, single.back(), kEos, n_vocab, s);
    } else if (type == "RobertaProcessing" || type == "BertProcessing") {
      s.add_bos = s.add_eos = true;
    } else {
      p.at("type").fail("unsupported post-processor '" + type + "'");
    }
  }
}

// The *_token_id of config.json or generation_config.json (also under text_config): an id, or
// a list whose first entry counts (for eos, the others may name an end of turn). A negative id
// means none.
void read_token_ids(const Node& cfg, std::size_t n_vocab, Specials& s) {
  for (std::size_t r = 0; r < kNumRoles; ++r) {
    const std::string key = std::string(kRoles[r].name) + "_token_id";
    std::optional<Node> n = cfg.get(key);
    if (const auto tc = cfg.get("text_config"); !n && tc) n = tc->get(key);
    if (!n) continue;
    const bool list = n->value().is_array();
    for (std::size_t i = 0; i < (list ? n->array_size() : 1); ++i) {
      const Node e = list ? (*n)[i] : *n;
      const std::int64_t id = e.integer();
      if (id < 0) continue;
      if (static_cast<std::uint64_t>(id) >= n_vocab) {
        e.fail(std::to_string(id) + " is not a token id (the vocabulary has " +
               std::to_string(n_vocab) + " tokens)");
      }
      if (i == 0 && !s.id[r]) s.id[r] = static_cast<std::int32_t>(id);
      if (r == kEos && list) s.eos_lists.push_back(static_cast<std::int32_t>(id));
    }
  }
}

Specials read_specials(const Node& tok, const std::optional<JsonFile>& tcfg,
                       const std::optional<JsonFile>& gen, const Node& cfg, const Vocabulary& v) {
  Specials s;
  if (tcfg) read_token_names(Node(*tcfg), v, s);
  read_post_processor(tok, v.texts.size(), s);  // decides before tokenizer_config's flags
  if (tcfg) {
    if (!s.add_bos) s.add_bos = Node(*tcfg).bool_or("add_bos_token", false);
    if (!s.add_eos) s.add_eos = Node(*tcfg).bool_or("add_eos_token", false);
  }
  read_token_ids(cfg, v.texts.size(), s);
  if (gen) read_token_ids(Node(*gen), v.texts.size(), s);
  if (!s.id[kUnk]) s.id[kUnk] = v.unk;  // what HF's model itself emits for unknown text
  for (const std::int32_t id : s.eos_lists) {
    const std::string& text = v.texts[static_cast<std::size_t>(id)];
    if (id != s.id[kEos] &&
        std::find(std::begin(kEotTexts), std::end(kEotTexts), text) != std::end(kEotTexts)) {
      s.eot = id;
      break;
    }
  }
  return s;
}

// config.json's vocab_size beyond the tokenizer's ids: "[PAD<id>]" tokens, as llama.cpp pads.
void pad_to_config(const Node& cfg, Vocabulary& v) {
  std::optional<Node> n = cfg.get("vocab_size");
  if (const auto tc = cfg.get("text_config"); !n && tc) n = tc->get("vocab_size");
  if (!n) return;
  const std::int64_t want = n->integer();
  const std::size_t have = v.texts.size();
  if (want < static_cast<std::int64_t>(have)) {
    n->fail(std::to_string(want) + " is smaller than the tokenizer's " + std::to_string(have) +
            " tokens");
  }
  if (static_cast<std::uint64_t>(want) > 2 * have + 1024) {
    n->fail(std::to_string(want) + " would pad the tokenizer's " + std::to_string(have) +
            " tokens with more than as many unused ones");
  }
  for (auto i = static_cast<std::int64_t>(have); i < want; ++i) {
    v.texts.push_back("[PAD" + std::to_string(i) + "]");
    v.types.push_back(kUnused);
    if (v.spm) v.scores.push_back(kControlScore);
  }
}

std::string template_value(const Node& n) {
  if (n.value().is_string()) return n.str();
  for (const Node& t : n.elements()) {
    if (t.at("name").str() == "default") return t.at("template").str();
  }
  n.fail("a list of templates without one named 'default'");
}

std::optional<std::string> read_chat_template(const fs::path& dir,
                                              const std::optional<JsonFile>& tcfg) {
  if (const auto t = tcfg ? Node(*tcfg).get("chat_template") : std::nullopt) {
    return template_value(*t);
  }
  if (auto text = read_text(dir / "chat_template.jinja", kMaxSideFile)) return text;
  const auto f = read_json(dir / "chat_template.json", kMaxSideFile);
  if (const auto t = f ? Node(*f).get("chat_template") : std::nullopt) return template_value(*t);
  return std::nullopt;
}

// ---- output ----------------------------------------------------------------------------------

gguf::MetaValue string_array(std::vector<std::string>& items) {
  gguf::MetaValue::Array out;
  out.reserve(items.size());
  for (std::string& s : items) out.push_back(gguf::MetaValue::string(std::move(s)));
  return gguf::MetaValue::array(gguf::ValueType::STRING, std::move(out));
}

MetaEntries to_metadata(Vocabulary& v, const Specials& s, std::optional<std::string> chat) {
  using gguf::MetaValue;
  using gguf::ValueType;
  MetaEntries out;
  out.emplace_back("tokenizer.ggml.model", MetaValue::string(v.spm ? "llama" : "gpt2"));
  out.emplace_back("tokenizer.ggml.pre", MetaValue::string(v.pre));
  out.emplace_back("tokenizer.ggml.tokens", string_array(v.texts));
  if (v.spm) {
    MetaValue::Array scores;
    scores.reserve(v.scores.size());
    for (const float x : v.scores) scores.push_back(MetaValue::f32(x));
    out.emplace_back("tokenizer.ggml.scores", MetaValue::array(ValueType::FLOAT32, scores));
  }
  MetaValue::Array types;
  types.reserve(v.types.size());
  for (const std::int32_t t : v.types) types.push_back(MetaValue::integer(ValueType::INT32, t));
  out.emplace_back("tokenizer.ggml.token_type", MetaValue::array(ValueType::INT32, types));
  if (!v.spm) out.emplace_back("tokenizer.ggml.merges", string_array(v.merges));
  for (std::size_t r = 0; r < kNumRoles; ++r) {
    if (s.id[r]) out.emplace_back(kRoles[r].key, MetaValue::integer(ValueType::UINT32, *s.id[r]));
  }
  if (s.eot) {
    out.emplace_back("tokenizer.ggml.eot_token_id", MetaValue::integer(ValueType::UINT32, *s.eot));
  }
  out.emplace_back("tokenizer.ggml.add_bos_token", MetaValue::boolean(s.add_bos.value_or(false)));
  out.emplace_back("tokenizer.ggml.add_eos_token", MetaValue::boolean(s.add_eos.value_or(false)));
  if (v.spm) {
    out.emplace_back("tokenizer.ggml.add_space_prefix", MetaValue::boolean(v.add_space_prefix));
  }
  if (chat) out.emplace_back("tokenizer.chat_template", MetaValue::string(std::move(*chat)));
  return out;
}

MetaEntries convert(const fs::path& dir, const json& config) {
  const auto tok_file = read_json(dir / "tokenizer.json", kMaxTokenizerJson);
  if (!tok_file) {
    throw Error((dir / "tokenizer.json").string() +
                ": missing (folio converts tokenizers from tokenizer.json only)");
  }
  const auto tcfg = read_json(dir / "tokenizer_config.json", kMaxSideFile);
  const auto gen = read_json(dir / "generation_config.json", kMaxSideFile);
  const std::string config_path = (dir / "config.json").string();
  const Node cfg(config, config_path, "");
  if (!config.is_object()) cfg.fail("expected a JSON object, found " + cfg.type_name());

  const Node tok(*tok_file);
  const Node model = tok.at("model");
  const std::string type = model.at("type").str();
  const bool unigram = type == "Unigram";
  if (type != "BPE" && !unigram) {
    model.at("type").fail("unsupported model type '" + type +
                          "' (folio converts BPE and Unigram tokenizers)");
  }
  const bool byte_level = !unigram && has_byte_level(tok.get("pre_tokenizer"));
  if (!byte_level && !unigram && !looks_like_spm(tok, model)) {
    tok.fail(
        "a BPE model with neither a ByteLevel pre-tokenizer nor SentencePiece-style spaces "
        "(byte_fallback, Metaspace or a ' ' -> '\xE2\x96\x81' normalizer) is not supported");
  }
  Vocabulary v;
  v.spm = !byte_level;
  std::vector<AddedToken> added;
  std::vector<float> unigram_scores;
  read_ids(tok, model, unigram, v, added, unigram_scores);
  type_added_tokens(added, v);
  if (byte_level) {
    read_byte_level(tok, model, cfg.str_or("model_type", ""), v);
  } else {
    read_sentencepiece(tok, model, unigram, unigram_scores, v);
  }
  pad_to_config(cfg, v);
  const Specials s = read_specials(tok, tcfg, gen, cfg, v);
  return to_metadata(v, s, read_chat_template(dir, tcfg));
}

}  // namespace

MetaEntries tokenizer_metadata(const std::string& dir, const nlohmann::json& config) {
  try {
    return convert(fs::path(dir), config);
  } catch (const json::exception& e) {  // Node checks every type first; this is a second net
    throw Error(dir + ": tokenizer files: " + e.what());
  }
}

}  // namespace folio::hf
