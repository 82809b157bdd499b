// Tests for tokenizer/spm.h: the SentencePiece encoder.
//
// - Reference vectors (llama.cpp's vocab-only files, ids from the HF tokenizers) for Llama 2
//   and Phi-3: every case must match exactly.
// - Gemma 3 strings against SentencePiece and HF (transformers' GGUF converter), which agree
//   except on runs of >= 32 spaces (tests/data/tokenizer/spm_gemma_cases.json, written by
//   tools/gen_spm_cases.py).
// - Rules on small hand-made vocabularies (written as in-memory GGUF files): byte and unk
//   fallback, invalid UTF-8, tie-breaks, frozen user-defined tokens, unused-token resegmenting.
// - Scale: long inputs must stay O(n log n).
#include "tokenizer/spm.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "gguf/gguf_file.h"
#include "tokenizer/vocab.h"

namespace folio::tokenizer {
namespace {

// ---- files ---------------------------------------------------------------------------------

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

std::string shared_dir() {
  return env_or("FOLIO_SHARED_DIR", FOLIO_SHARED_DIR);
}
std::string source_dir() {
  return env_or("FOLIO_SOURCE_DIR", FOLIO_SOURCE_DIR);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A vocab together with the file its views point into.
struct LoadedVocab {
  gguf::GgufFile file;
  Vocab vocab;
  explicit LoadedVocab(const std::string& path)
      : file(gguf::GgufFile::open(path)), vocab(Vocab::from_gguf(file)) {}
};

// ---- hand-made vocabularies ----------------------------------------------------------------

// Writes a minimal GGUF v3 image with only tokenizer metadata.
class MiniGguf {
 public:
  void add_string(const std::string& key, const std::string& v) {
    key_header(key, 8);
    str(v);
  }
  void add_u32(const std::string& key, std::uint32_t v) {
    key_header(key, 4);
    pod(v);
  }
  void add_strings(const std::string& key, const std::vector<std::string>& v) {
    array_header(key, 8, v.size());
    for (const auto& s : v) str(s);
  }
  void add_floats(const std::string& key, const std::vector<float>& v) {
    array_header(key, 6, v.size());
    for (float f : v) pod(f);
  }
  void add_i32s(const std::string& key, const std::vector<std::int32_t>& v) {
    array_header(key, 5, v.size());
    for (auto x : v) pod(x);
  }
  std::vector<std::uint8_t> bytes() const {
    std::vector<std::uint8_t> out;
    auto put = [&](const void* p, std::size_t n) {
      const auto* b = static_cast<const std::uint8_t*>(p);
      out.insert(out.end(), b, b + n);
    };
    put("GGUF", 4);
    const std::uint32_t version = 3;
    const std::uint64_t n_tensors = 0;
    put(&version, 4);
    put(&n_tensors, 8);
    put(&n_kv_, 8);
    out.insert(out.end(), body_.begin(), body_.end());
    out.resize((out.size() + 31) / 32 * 32, 0);
    return out;
  }

 private:
  template <typename T>
  void pod(T v) {
    const auto* b = reinterpret_cast<const std::uint8_t*>(&v);
    body_.insert(body_.end(), b, b + sizeof v);
  }
  void str(const std::string& s) {
    pod(static_cast<std::uint64_t>(s.size()));
    body_.insert(body_.end(), s.begin(), s.end());
  }
  void key_header(const std::string& key, std::uint32_t type) {
    ++n_kv_;
    str(key);
    pod(type);
  }
  void array_header(const std::string& key, std::uint32_t elem, std::size_t n) {
    key_header(key, 9);
    pod(elem);
    pod(static_cast<std::uint64_t>(n));
  }

  std::uint64_t n_kv_ = 0;
  std::vector<std::uint8_t> body_;
};

struct Tok {
  std::string text;
  float score;
  TokenType type = TokenType::kNormal;
};

const std::string kSp = "\xE2\x96\x81";  // ▁

// An in-memory SPM vocab: id 0 = <unk>; byte tokens <0x00>..<0xFF> follow when `bytes`.
class MiniVocab {
 public:
  MiniVocab(const std::vector<Tok>& toks, bool bytes) {
    std::vector<std::string> texts{"<unk>"};
    std::vector<float> scores{0};
    std::vector<std::int32_t> types{static_cast<std::int32_t>(TokenType::kUnknown)};
    if (bytes) {
      for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        texts.emplace_back(name);
        scores.push_back(0);
        types.push_back(static_cast<std::int32_t>(TokenType::kByte));
      }
    }
    first_ = static_cast<TokenId>(texts.size());
    for (const auto& t : toks) {
      texts.push_back(t.text);
      scores.push_back(t.score);
      types.push_back(static_cast<std::int32_t>(t.type));
    }
    MiniGguf g;
    g.add_string("tokenizer.ggml.model", "llama");
    g.add_strings("tokenizer.ggml.tokens", texts);
    g.add_floats("tokenizer.ggml.scores", scores);
    g.add_i32s("tokenizer.ggml.token_type", types);
    g.add_u32("tokenizer.ggml.unknown_token_id", 0);
    image_ = g.bytes();
    file_ = std::make_unique<gguf::GgufFile>(gguf::GgufFile::parse(image_));
    vocab_ = std::make_unique<Vocab>(Vocab::from_gguf(*file_));
  }
  const Vocab& vocab() const { return *vocab_; }
  // Id of the i-th token passed to the constructor.
  TokenId id(int i) const { return first_ + i; }
  static TokenId byte(int b) { return 1 + b; }

  // Encodes and renders the result as token texts joined by '|', for readable assertions.
  std::string encode(std::string_view text, bool prefix = false) const {
    const SpmEncoder enc(*vocab_);
    std::vector<TokenId> ids;
    enc.encode(text, prefix, ids);
    std::string out;
    for (TokenId id : ids) out += (out.empty() ? "" : "|") + vocab_->text(id);
    return out;
  }

 private:
  std::vector<std::uint8_t> image_;
  std::unique_ptr<gguf::GgufFile> file_;
  std::unique_ptr<Vocab> vocab_;
  TokenId first_ = 0;
};

// ---- rules on hand-made vocabularies -------------------------------------------------------

TEST(SpmEncoder, MergesHighestScoreFirst) {
  const MiniVocab v({{"a", -1}, {"b", -1}, {"c", -1}, {"ab", -5}, {"bc", -2}}, true);
  EXPECT_EQ(v.encode("abc"), "a|bc");
  const MiniVocab w({{"a", -1}, {"b", -1}, {"c", -1}, {"ab", -2}, {"bc", -5}}, true);
  EXPECT_EQ(w.encode("abc"), "ab|c");
}

TEST(SpmEncoder, EqualScoresMergeLeftmostFirst) {
  const MiniVocab v({{"a", -1}, {"aa", -2}}, true);
  EXPECT_EQ(v.encode("aaa"), "aa|a");
  EXPECT_EQ(v.encode("aaaaa"), "aa|aa|a");
}

TEST(SpmEncoder, EscapesSpacesAndAddsPrefix) {
  const MiniVocab v({{kSp, -1}, {"a", -1}, {kSp + "a", -2}}, true);
  EXPECT_EQ(v.encode("a a"), "a|" + kSp + "a");
  EXPECT_EQ(v.encode("a", true), kSp + "a");
  EXPECT_EQ(v.encode(" a", true), kSp + "|" + kSp + "a");
  EXPECT_EQ(v.encode("a ", false), "a|" + kSp);
}

TEST(SpmEncoder, MergesAcrossSpacesWhenSomeTokenDoes) {
  // Words are merged separately only where no token spans the "▁" (Gemma 3 has ">▁</").
  const MiniVocab v({{"x", -1},
                     {"y", -1},
                     {kSp, -1},
                     {"x" + kSp, -2},
                     {"x" + kSp + "y", -3},
                     {kSp + kSp, -1},
                     {kSp + "y", -9}},
                    true);
  EXPECT_EQ(v.encode("x y"), "x" + kSp + "y");
  EXPECT_EQ(v.encode("y y"), "y|" + kSp + "y");
  EXPECT_EQ(v.encode("y  y"), "y|" + kSp + kSp + "|y");
}

TEST(SpmEncoder, EmptyInputGivesNothing) {
  const MiniVocab v({{kSp, -1}}, true);
  EXPECT_EQ(v.encode("", false), "");
  EXPECT_EQ(v.encode("", true), "");  // no lone dummy prefix
}

TEST(SpmEncoder, ByteFallbackForUnknownCharacters) {
  const MiniVocab v({{"a", -1}, {"b", -1}, {"ab", -2}}, true);
  EXPECT_EQ(v.encode("acb"), "a|<0x63>|b");
  EXPECT_EQ(v.encode("\xC3\xA9"), "<0xC3>|<0xA9>");  // é, not in the vocab
  EXPECT_EQ(v.encode("\xF0\x9F\xA6\x99"
                     "ab"),
            "<0xF0>|<0x9F>|<0xA6>|<0x99>|ab");  // 🦙ab
}

TEST(SpmEncoder, UnknownTokenWithoutByteTokens) {
  const MiniVocab v({{"a", -1}}, false);
  // One <unk> per unknown character, not per byte.
  EXPECT_EQ(v.encode("a\xC3\xA9"
                     "ca"),
            "a|<unk>|<unk>|a");
  EXPECT_EQ(v.encode("\xFF"), "<unk>");
}

TEST(SpmEncoder, InvalidUtf8BytesAreOneByteSymbols) {
  const MiniVocab v({{"a", -1}, {"b", -1}, {"ab", -2}, {"\xC3\xA9", -1}}, true);
  EXPECT_EQ(v.encode("a\xFF"
                     "b"),
            "a|<0xFF>|b");  // never merges across the bad byte
  EXPECT_EQ(v.encode("\x80"
                     "ab"),
            "<0x80>|ab");                      // stray continuation byte
  EXPECT_EQ(v.encode("ab\xC3"), "ab|<0xC3>");  // truncated at the end
  EXPECT_EQ(v.encode("\xC3"
                     "ab"),
            "<0xC3>|ab");                                       // lead byte without continuation
  EXPECT_EQ(v.encode("\xC0\x80"), "<0xC0>|<0x80>");             // overlong NUL
  EXPECT_EQ(v.encode("\xED\xA0\x80"), "<0xED>|<0xA0>|<0x80>");  // surrogate U+D800
  EXPECT_EQ(v.encode("\xF4\x90\x80\x80"), "<0xF4>|<0x90>|<0x80>|<0x80>");  // > U+10FFFF
  EXPECT_EQ(v.encode("\xC3\xA9\xA9"), "\xC3\xA9|<0xA9>");  // valid char, then a stray byte
  const MiniVocab unk_only({{"a", -1}}, false);
  EXPECT_EQ(unk_only.encode("\xE2\x96"
                            "a"),
            "<unk>|<unk>|a");  // truncated ▁: byte by byte
}

TEST(SpmEncoder, ControlUnknownAndByteTokensAreNeverProducedFromText) {
  const MiniVocab v({{"<", -1}, {"s", -1}, {">", -1}, {"<s", -2}, {"<s>", 0, TokenType::kControl}},
                    true);
  EXPECT_EQ(v.encode("<s>"), "<s|>");
  EXPECT_EQ(v.encode("<unk>"), "<|<0x75>|<0x6E>|<0x6B>|>");
  EXPECT_EQ(v.encode("<0x41>"), "<|<0x30>|<0x78>|<0x34>|<0x31>|>");
}

TEST(SpmEncoder, UserDefinedTokensAreMatchedWholeAndFrozen) {
  // Gemma-style: runs of spaces stored with real spaces, tags; "▁b" would win a merge.
  const MiniVocab v({{"a", -1},
                     {"b", -1},
                     {kSp, -1},
                     {kSp + "b", 10},
                     {"a" + kSp, 10},
                     {"  ", -1000, TokenType::kUserDefined},
                     {"   ", -1000, TokenType::kUserDefined},
                     {"<t>", -1000, TokenType::kUserDefined},
                     {"\n", -1000, TokenType::kUserDefined}},
                    true);
  EXPECT_EQ(v.encode("a  b"), "a|  |b");
  EXPECT_EQ(v.encode("a     b"), "a|   |  |b");  // leftmost-longest
  EXPECT_EQ(v.encode("a b"), "a" + kSp + "|b");  // one space: ordinary merging
  EXPECT_EQ(v.encode("a<t>b"), "a|<t>|b");
  EXPECT_EQ(v.encode("<t<t>>"), "<0x3C>|<0x74>|<t>|<0x3E>");
  EXPECT_EQ(v.encode("a\n\nb"), "a|\n|\n|b");
}

TEST(SpmEncoder, UnusedTokensAreSplitBackAlongTheirMerges) {
  const MiniVocab v({{"a", -1},
                     {"b", -1},
                     {"c", -1},
                     {"ab", 5, TokenType::kUnused},
                     {"abc", 1},
                     {"x", -1},
                     {"abx", 0, TokenType::kUnused},
                     {"abxx", -9, TokenType::kUnused}},
                    true);
  EXPECT_EQ(v.encode("abc"), "abc");  // merged through the unused "ab"
  EXPECT_EQ(v.encode("ab"), "a|b");
  EXPECT_EQ(v.encode("abd"), "a|b|<0x64>");
  EXPECT_EQ(v.encode("abxx"), "a|b|x|x");  // nested unused merges unwind fully
}

TEST(SpmEncoder, RejectsVocabThatCannotRepresentUnknownText) {
  MiniGguf g;
  g.add_string("tokenizer.ggml.model", "llama");
  g.add_strings("tokenizer.ggml.tokens", {"a", "b"});
  const auto image = g.bytes();
  const auto file = gguf::GgufFile::parse(image);
  const Vocab vocab = Vocab::from_gguf(file);
  EXPECT_THROW(SpmEncoder{vocab}, Error);
}

// ---- reference vectors: Llama 2 and Phi-3 --------------------------------------------------

struct VectorCase {
  std::string text;
  std::vector<TokenId> ids;
};

std::vector<VectorCase> load_vectors(const std::string& gguf_path) {
  const std::string inp = read_all(gguf_path + ".inp");
  const std::string outp = read_all(gguf_path + ".out");
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  for (std::size_t pos = 0;;) {
    const std::size_t at = inp.find(sep, pos);
    if (at == std::string::npos) {
      // The file normally ends with a separator; keep a final case that does not.
      if (pos < inp.size() && inp.substr(pos) != "\n") texts.push_back(inp.substr(pos));
      break;
    }
    texts.push_back(inp.substr(pos, at - pos));
    pos = at + sep.size();
  }
  std::vector<VectorCase> cases;
  std::istringstream lines(outp);
  std::string line;
  for (const auto& t : texts) {
    if (!std::getline(lines, line)) throw Error(gguf_path + ".out has fewer lines than cases");
    VectorCase c{t, {}};
    std::istringstream ids(line);
    for (TokenId id; ids >> id;) c.ids.push_back(id);
    cases.push_back(std::move(c));
  }
  while (std::getline(lines, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) {
      throw Error(gguf_path + ".out has more lines than .inp has cases");
    }
  }
  return cases;
}

void check_vectors(const std::string& name) {
  const std::string path = shared_dir() + "/tokenizer-vectors/" + name;
  const LoadedVocab lv(path);
  ASSERT_EQ(lv.vocab.kind(), VocabKind::kSpm);
  const SpmEncoder enc(lv.vocab);
  const auto cases = load_vectors(path);
  ASSERT_GT(cases.size(), 20u) << "too few cases parsed from " << path;
  int failures = 0;
  for (const auto& c : cases) {
    std::vector<TokenId> ids;
    enc.encode(c.text, lv.vocab.add_space_prefix(), ids);
    EXPECT_EQ(ids, c.ids) << name << " case " << ::testing::PrintToString(c.text);
    failures += ids != c.ids;
  }
  EXPECT_EQ(failures, 0) << "of " << cases.size() << " cases";
}

TEST(SpmEncoderVectors, Llama2) {
  check_vectors("ggml-vocab-llama-spm.gguf");
}
TEST(SpmEncoderVectors, Phi3) {
  check_vectors("ggml-vocab-phi-3.gguf");
}

TEST(SpmEncoderVectors, Llama2ByteFallbackAndInvalidUtf8) {
  const LoadedVocab lv(shared_dir() + "/tokenizer-vectors/ggml-vocab-llama-spm.gguf");
  const SpmEncoder enc(lv.vocab);
  std::vector<TokenId> ids;
  enc.encode("\xFF", false, ids);
  EXPECT_EQ(ids, (std::vector<TokenId>{*lv.vocab.byte_token(0xFF)}));
  ids.clear();
  enc.encode("a\x80", false, ids);
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(lv.vocab.text(ids[0]), "a");
  EXPECT_EQ(ids[1], *lv.vocab.byte_token(0x80));
}

// ---- Gemma 3 against HF --------------------------------------------------------------------

TEST(SpmEncoderGemma, MatchesHuggingFace) {
  const std::string cases_path = source_dir() + "/tests/data/tokenizer/spm_gemma_cases.json";
  const auto j = nlohmann::json::parse(read_all(cases_path));
  const std::string model = source_dir() + "/models/" + j.at("model").get<std::string>();
  ASSERT_TRUE(std::ifstream(model).good())
      << model << " is missing: run scripts/setup to download the test models";
  const LoadedVocab lv(model);
  ASSERT_FALSE(lv.vocab.add_space_prefix());
  const SpmEncoder enc(lv.vocab);
  ASSERT_GE(j.at("cases").size(), 20u);
  // "ids" come from SentencePiece; they equal HF's except for runs of >= 32 spaces, where the
  // file also lists "hf_ids" (see tools/gen_spm_cases.py and the report in spm.h).
  for (const auto& c : j.at("cases")) {
    const auto text = c.at("text").get<std::string>();
    std::vector<TokenId> ids;
    enc.encode(text, lv.vocab.add_space_prefix(), ids);
    EXPECT_EQ(ids, c.at("ids").get<std::vector<TokenId>>()) << ::testing::PrintToString(text);
  }
}

// ---- scale ---------------------------------------------------------------------------------

// Joins token texts (byte tokens as their byte) to compare with the escaped input.
std::string render(const Vocab& v, const std::vector<TokenId>& ids) {
  std::string out;
  for (TokenId id : ids) {
    if (v.type(id) == TokenType::kByte) {
      out += static_cast<char>(std::stoi(v.text(id).substr(3, 2), nullptr, 16));
    } else {
      out += v.text(id);
    }
  }
  return out;
}

std::string escaped(std::string_view s, bool prefix) {
  std::string out = prefix ? kSp : "";
  for (char c : s) out += c == ' ' ? kSp : std::string(1, c);
  return out;
}

TEST(SpmEncoderScale, LongInputsAreFastAndLossless) {
  const LoadedVocab lv(shared_dir() + "/tokenizer-vectors/ggml-vocab-phi-3.gguf");
  const SpmEncoder enc(lv.vocab);
  std::mt19937 rng(42);
  const std::string words[] = {"the ", "tokenizer ", "héllo ", "🦙", "  ", "\n", "a", "=", "x1 "};
  std::string mixed;
  while (mixed.size() < 100000) mixed += words[rng() % std::size(words)];
  std::string raw;  // arbitrary bytes, mostly invalid UTF-8
  for (int i = 0; i < 100000; ++i) raw += static_cast<char>(rng() & 0xFF);
  const std::string inputs[] = {std::string(100000, 'a'), std::string(100000, ' '), mixed, raw};
  for (const auto& in : inputs) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<TokenId> ids;
    enc.encode(in, true, ids);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(s, 5.0) << "100 KB took " << s << " s: quadratic behaviour?";
    EXPECT_EQ(render(lv.vocab, ids), escaped(in, true));
    EXPECT_LT(ids.size(), in.size() + 2);
  }
}

}  // namespace
}  // namespace folio::tokenizer
