// hf::tokenizer_metadata: Hugging Face tokenizer directories -> GGUF tokenizer.* metadata.
//
// Real data (tools/gen_hf_tokenizer_data.py): what transformers writes (save_pretrained) for
// SmolLM2's and Gemma 3's GGUF tokenizers (tests/data/hf/smollm2/, committed;
// models/hf/gemma-3-270m-tokenizer/) and for the upstream vocabularies of shared/tokenizer-vectors
// (models/hf/vectors/). Converted back they must give the GGUF's own metadata and, through
// folio's Tokenizer, the HF golden ids (tests/data/tokenizer/*.jsonl) and the upstream ids.
// Those encoding checks need folio_tokenizer linked into hf_test. Hand-written tokenizer.json
// cases pin each rule and each error message; a sweep of type-confused inputs must only ever
// throw folio::Error.
#include "hf/hf_tokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "base/error.h"
#include "gguf/gguf_file.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"

namespace folio::hf {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

const std::string kSource = FOLIO_SOURCE_DIR;

// ---- helpers -----------------------------------------------------------------------------

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "folio_hf_tok_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  void write_text(const std::string& name, const std::string& text) const {
    std::ofstream(file(name), std::ios::binary) << text;
  }
  void write(const std::string& name, const Json& j) const { write_text(name, j.dump()); }

 private:
  std::string path_;
};

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The metadata as a parsed GGUF image (what folio's tokenizer reads).
struct Image {
  std::vector<std::uint8_t> bytes;
  std::optional<gguf::GgufFile> file;
};

std::unique_ptr<Image> to_image(const MetaEntries& meta) {
  gguf::GgufWriter w;
  for (const auto& [k, v] : meta) w.add(k, v);
  auto im = std::make_unique<Image>();
  im->bytes = w.to_bytes();
  im->file.emplace(gguf::GgufFile::parse(im->bytes));
  return im;
}

std::vector<std::string> strings(const gguf::GgufFile& f, const std::string& key) {
  std::vector<std::string> out;
  if (const auto* a = f.get_array(key)) {
    for (const auto& v : *a) out.emplace_back(v.as_string(key));
  }
  return out;
}
std::vector<std::int64_t> ints(const gguf::GgufFile& f, const std::string& key) {
  std::vector<std::int64_t> out;
  if (const auto* a = f.get_array(key)) {
    for (const auto& v : *a) out.push_back(v.as_int(key));
  }
  return out;
}
std::vector<double> floats(const gguf::GgufFile& f, const std::string& key) {
  std::vector<double> out;
  if (const auto* a = f.get_array(key)) {
    for (const auto& v : *a) out.push_back(v.as_float(key));
  }
  return out;
}

// Converts `dir` and returns its image; `config` defaults to dir/config.json or {}.
std::unique_ptr<Image> convert(const std::string& dir, std::optional<Json> config = {}) {
  if (!config) {
    const std::string text = read_file(dir + "/config.json");
    config = text.empty() ? Json::object() : Json::parse(text);
  }
  return to_image(tokenizer_metadata(dir, *config));
}

std::string error_of(const std::string& dir, const Json& config = Json::object()) {
  try {
    tokenizer_metadata(dir, config);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A byte-level BPE tokenizer.json (GPT-2 style) with special and plain added tokens.
Json byte_level() {
  return Json::parse(R"({
    "version": "1.0",
    "added_tokens": [
      {"id": 0, "content": "<|endoftext|>", "special": true, "normalized": false},
      {"id": 6, "content": "<tool>", "special": false, "normalized": false},
      {"id": 7, "content": "<|im_end|>", "special": false, "normalized": false}],
    "normalizer": null,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true,
                      "use_regex": true},
    "post_processor": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false,
                       "use_regex": true},
    "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true,
                "use_regex": true},
    "model": {"type": "BPE", "dropout": null, "unk_token": null, "byte_fallback": false,
              "ignore_merges": false,
              "vocab": {"<|endoftext|>": 0, "a": 1, "b": 2, "c": 3, "ab": 4, "abc": 5},
              "merges": ["a b", "ab c"]}})");
}

// A SentencePiece-style BPE tokenizer.json (Llama 2 style: Prepend + Replace normalizer).
Json sentencepiece() {
  return Json::parse(R"({
    "added_tokens": [
      {"id": 1, "content": "<s>", "special": true, "normalized": false},
      {"id": 2, "content": "</s>", "special": true, "normalized": false},
      {"id": 12, "content": "▁▁", "special": false, "normalized": true}],
    "normalizer": {"type": "Sequence", "normalizers": [
      {"type": "Prepend", "prepend": "▁"},
      {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
    "pre_tokenizer": null,
    "post_processor": {"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
      "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
    "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": true, "fuse_unk": true,
      "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x41>": 3, "▁": 4, "a": 5, "b": 6, "c": 7,
                "bc": 8, "ab": 9, "abc": 10, "▁a": 11, "▁▁": 12},
      "merges": ["b c", "a b", "a bc", "ab c", "▁ a"]}})");
}

class HfTokenizer : public ::testing::Test {
 protected:
  TempDir dir;
  std::string tok_path() const { return dir.file("tokenizer.json"); }
  // The error message converting tokenizer.json = j (it starts with the file's path).
  std::string error_for(const Json& j, const Json& config = Json::object()) const {
    dir.write("tokenizer.json", j);
    return error_of(dir.path(), config);
  }
  std::unique_ptr<Image> convert_json(const Json& j, const Json& config = Json::object()) const {
    dir.write("tokenizer.json", j);
    return convert(dir.path(), config);
  }
};

// ---- real checkpoints ----------------------------------------------------------------------

const std::string kSmolGguf = kSource + "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
const std::string kSmolDir = kSource + "/tests/data/hf/smollm2";
const std::string kGemmaGguf = kSource + "/models/gemma-3-270m-q4_k_m.gguf";
const std::string kGemmaDir = kSource + "/models/hf/gemma-3-270m-tokenizer";

bool exists(const std::string& p) {
  return fs::exists(p);
}

TEST(HfTokenizerReal, SmolLM2MetadataEqualsTheGguf) {
  if (!exists(kSmolGguf)) GTEST_SKIP() << kSmolGguf << " is missing (scripts/setup downloads it)";
  const auto im = convert(kSmolDir);
  const gguf::GgufFile& ours = *im->file;
  const gguf::GgufFile want = gguf::GgufFile::open(kSmolGguf);
  for (const char* key :
       {"tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.chat_template"}) {
    EXPECT_EQ(ours.get_string(key), want.get_string(key)) << key;
  }
  for (const char* key : {"tokenizer.ggml.tokens", "tokenizer.ggml.merges"}) {
    EXPECT_EQ(strings(ours, key), strings(want, key)) << key;
  }
  EXPECT_EQ(ints(ours, "tokenizer.ggml.token_type"), ints(want, "tokenizer.ggml.token_type"));
  for (const char* key : {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                          "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.padding_token_id"}) {
    EXPECT_EQ(ours.get_int(key), want.get_int(key)) << key;
  }
  EXPECT_EQ(ours.get_bool("tokenizer.ggml.add_bos_token"),
            want.get_bool("tokenizer.ggml.add_bos_token"));
  EXPECT_EQ(ours.get_bool("tokenizer.ggml.add_eos_token"), false);
  EXPECT_EQ(ours.find("tokenizer.ggml.eot_token_id"), nullptr);
}

// Every golden case of `golden` encodes (with and without special-token parsing) to HF's ids
// through a Tokenizer built from the converted metadata.
void expect_goldens(const gguf::GgufFile& file, const std::string& golden) {
  const tokenizer::Tokenizer tok = tokenizer::Tokenizer::from_gguf(file);
  tokenizer::Tokenizer::Session session(tok);
  std::istringstream lines(read_file(kSource + "/tests/data/tokenizer/" + golden));
  std::string line;
  std::getline(lines, line);  // header
  int n = 0, failures = 0;
  while (std::getline(lines, line)) {
    const Json rec = Json::parse(line);
    const std::string text = rec.at("text");
    const auto want = rec.at("ids").get<std::vector<TokenId>>();
    const auto want_plain = rec.value("ids_plain", want);
    std::vector<TokenId> ids, plain;
    session.encode(text, {.add_special = false, .parse_special = true}, ids);
    session.encode(text, {.add_special = false, .parse_special = false}, plain);
    EXPECT_EQ(ids, want) << "case " << n << ": " << text;
    EXPECT_EQ(plain, want_plain) << "plain, case " << n << ": " << text;
    failures += (ids != want) + (plain != want_plain);
    ++n;
  }
  EXPECT_GE(n, 200);
  EXPECT_EQ(failures, 0) << "of " << n << " cases";
}

TEST(HfTokenizerReal, SmolLM2EncodesTheHfGoldens) {
  if (!exists(kSmolGguf)) GTEST_SKIP() << kSmolGguf << " is missing (scripts/setup downloads it)";
  expect_goldens(*convert(kSmolDir)->file, "smollm2.jsonl");
}

TEST(HfTokenizerReal, Gemma3MetadataMatchesTheGguf) {
  if (!exists(kGemmaGguf)) GTEST_SKIP() << kGemmaGguf << " is missing (scripts/setup)";
  if (!exists(kGemmaDir)) {
    GTEST_SKIP() << kGemmaDir << " is missing: run tools/gen_hf_tokenizer_data.py";
  }
  const auto im = convert(kGemmaDir);
  const gguf::GgufFile& ours = *im->file;
  const gguf::GgufFile want = gguf::GgufFile::open(kGemmaGguf);
  EXPECT_EQ(ours.get_string("tokenizer.ggml.model"), "llama");
  EXPECT_EQ(ours.get_string("tokenizer.ggml.pre"), "default");
  for (const char* key : {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                          "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.padding_token_id"}) {
    EXPECT_EQ(ours.get_int(key), want.get_int(key)) << key;
  }
  for (const char* key : {"tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token",
                          "tokenizer.ggml.add_space_prefix"}) {
    EXPECT_EQ(ours.get_bool(key), want.get_bool(key)) << key;
  }
  EXPECT_EQ(ours.get_int("tokenizer.ggml.eot_token_id"), 106);  // generation_config's list
  // transformers' GGUF loader keeps Gemma's 30 user-defined space runs (2..31 spaces) as plain
  // vocabulary entries "▁▁".., which HF reaches through merges; everything else is identical.
  const auto tokens = strings(ours, "tokenizer.ggml.tokens");
  const auto types = ints(ours, "tokenizer.ggml.token_type");
  const auto want_tokens = strings(want, "tokenizer.ggml.tokens");
  const auto want_types = ints(want, "tokenizer.ggml.token_type");
  ASSERT_EQ(tokens.size(), want_tokens.size());
  ASSERT_EQ(types.size(), want_types.size());
  int space_runs = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == want_tokens[i] && types[i] == want_types[i]) continue;
    const bool run = want_types[i] == 4 && types[i] == 1 &&
                     want_tokens[i] == std::string(want_tokens[i].size(), ' ') &&
                     tokens[i].size() == 3 * want_tokens[i].size();
    EXPECT_TRUE(run) << "token " << i << ": '" << tokens[i] << "' type " << types[i] << ", GGUF '"
                     << want_tokens[i] << "' type " << want_types[i];
    space_runs += run;
  }
  EXPECT_EQ(space_runs, 30);
}

TEST(HfTokenizerReal, Gemma3EncodesTheHfGoldens) {
  if (!exists(kGemmaGguf)) GTEST_SKIP() << kGemmaGguf << " is missing (scripts/setup)";
  if (!exists(kGemmaDir)) {
    GTEST_SKIP() << kGemmaDir << " is missing: run tools/gen_hf_tokenizer_data.py";
  }
  // Scores from merge ranks make folio's score-ordered merging follow HF's merges exactly,
  // including the cases gen_tokenizer_goldens.py flags as divergent from the GGUF (space runs
  // over 16, which these merges cut 16 + 16 as HF does).
  expect_goldens(*convert(kGemmaDir)->file, "gemma3.jsonl");
}

// The upstream vocabularies of shared/tokenizer-vectors, as transformers saves them from the
// vocab-only GGUFs: the same tokens (and merges, pre-tokenizer) as the GGUF, and through folio
// the upstream Hugging Face / SentencePiece ids of every case (plain text, no BOS).
class HfTokenizerVectors : public ::testing::TestWithParam<const char*> {};

TEST_P(HfTokenizerVectors, ConvertedVocabularyGivesTheUpstreamIds) {
  const std::string dir = kSource + "/models/hf/vectors/" + GetParam();
  const std::string base =
      std::string(FOLIO_SHARED_DIR) + "/tokenizer-vectors/ggml-vocab-" + GetParam() + ".gguf";
  if (!exists(base)) GTEST_SKIP() << base << " is missing";
  if (!exists(dir)) GTEST_SKIP() << dir << " is missing: run tools/gen_hf_tokenizer_data.py";
  const auto im = convert(dir);
  const gguf::GgufFile want = gguf::GgufFile::open(base);
  for (const char* key : {"tokenizer.ggml.tokens", "tokenizer.ggml.merges"}) {
    EXPECT_EQ(strings(*im->file, key), strings(want, key)) << key;
  }
  EXPECT_EQ(im->file->get_string("tokenizer.ggml.pre"), want.get_string("tokenizer.ggml.pre"));
  const tokenizer::Tokenizer tok = tokenizer::Tokenizer::from_gguf(*im->file);
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::string inp = read_file(base + ".inp");
  if (inp.size() >= sep.size() && inp.compare(inp.size() - sep.size(), sep.size(), sep) == 0) {
    inp.resize(inp.size() - sep.size());
  }
  std::istringstream out(read_file(base + ".out"));
  int n = 0;
  for (std::size_t pos = 0; pos != std::string::npos; ++n) {
    const std::size_t next = inp.find(sep, pos);
    const std::string text = inp.substr(pos, next == std::string::npos ? next : next - pos);
    pos = next == std::string::npos ? next : next + sep.size();
    std::string line;
    std::getline(out, line);
    std::vector<TokenId> want_ids;
    std::istringstream ids(line);
    for (TokenId id = 0; ids >> id;) want_ids.push_back(id);
    EXPECT_EQ(tok.encode(text), want_ids) << "case " << n << ": " << text;
  }
  EXPECT_GT(n, 40);
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, HfTokenizerVectors,
                         ::testing::Values("gpt-2", "starcoder", "llama-spm", "phi-3"),
                         [](const auto& p) {
                           std::string name = p.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// ---- byte-level BPE ------------------------------------------------------------------------

TEST_F(HfTokenizer, ByteLevelTokensTypesMerges) {
  const auto im = convert_json(byte_level());
  const gguf::GgufFile& f = *im->file;
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(f.get_string("tokenizer.ggml.pre"), "gpt-2");
  EXPECT_EQ(strings(f, "tokenizer.ggml.tokens"),
            (std::vector<std::string>{"<|endoftext|>", "a", "b", "c", "ab", "abc", "<tool>",
                                      "<|im_end|>"}));
  // special -> CONTROL; plain added -> USER_DEFINED, unless it looks special ("<|...|>").
  EXPECT_EQ(ints(f, "tokenizer.ggml.token_type"),
            (std::vector<std::int64_t>{3, 1, 1, 1, 1, 1, 4, 3}));
  EXPECT_EQ(strings(f, "tokenizer.ggml.merges"), (std::vector<std::string>{"a b", "ab c"}));
  EXPECT_EQ(f.find("tokenizer.ggml.scores"), nullptr);
  EXPECT_EQ(f.get_bool("tokenizer.ggml.add_bos_token"), false);
  EXPECT_EQ(f.get_bool("tokenizer.ggml.add_eos_token"), false);
  EXPECT_EQ(f.find("tokenizer.ggml.bos_token_id"), nullptr);
  EXPECT_EQ(f.find("tokenizer.chat_template"), nullptr);
}

TEST_F(HfTokenizer, ArrayFormMerges) {
  Json j = byte_level();
  j["model"]["vocab"]["x\xC4\xA0y"] = 8;
  j["model"]["vocab"]["x\xC4\xA0yc"] = 9;
  j["model"]["merges"] = Json::parse(R"([["a", "b"], ["ab", "c"], ["x y", "c"]])");
  const auto im = convert_json(j);
  // A space inside a part is written as U+0120, as llama.cpp does.
  EXPECT_EQ(strings(*im->file, "tokenizer.ggml.merges"),
            (std::vector<std::string>{"a b", "ab c", "x\xC4\xA0y c"}));
  const auto tok = tokenizer::Tokenizer::from_gguf(*im->file);
  EXPECT_EQ(tok.encode("abcab"), (std::vector<TokenId>{5, 4}));
  EXPECT_EQ(tok.encode("<tool>ba"), (std::vector<TokenId>{6, 2, 1}));
}

TEST_F(HfTokenizer, BadMerges) {
  const std::string at = tok_path() + ": model.merges";
  Json j = byte_level();
  j["model"]["merges"] = {"a  b"};
  EXPECT_EQ(error_for(j), at + "[0]: expected \"left right\" (two non-empty parts and one space), "
                               "found \"a  b\"");
  j["model"]["merges"] = {"a b", "a z"};
  EXPECT_EQ(error_for(j), at + "[1]: 'z' is not a token");
  j["model"]["merges"] = {"b c"};
  EXPECT_EQ(error_for(j), at + "[0]: 'bc' is not a token");
  j["model"]["merges"] = Json::parse(R"([["a", "b", "c"]])");
  EXPECT_EQ(error_for(j), at + "[0]: expected [left, right]");
  j["model"]["merges"] = 3;
  EXPECT_EQ(error_for(j), at + ": expected an array, found number");
}

// Each pre-tokenizer structure names one of folio's pre-tokenizer families.
TEST_F(HfTokenizer, PreTokenizerNames) {
  const Json byte_level_regex = {{"type", "ByteLevel"},
                                 {"add_prefix_space", false},
                                 {"trim_offsets", true},
                                 {"use_regex", true}};
  const Json byte_level_plain = {{"type", "ByteLevel"},
                                 {"add_prefix_space", false},
                                 {"trim_offsets", true},
                                 {"use_regex", false}};
  const Json digits = {{"type", "Digits"}, {"individual_digits", true}};
  auto split = [](const std::string& re) {
    return Json{{"type", "Split"},
                {"pattern", {{"Regex", re}}},
                {"behavior", "Isolated"},
                {"invert", false}};
  };
  const std::string llama3 =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  const std::string qwen2 =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  struct Case {
    Json pre;
    Json config;
    bool ignore_merges;
    const char* name;
  };
  const std::vector<Case> cases = {
      {byte_level_regex, Json::object(), false, "gpt-2"},
      {{{"type", "Sequence"}, {"pretokenizers", {digits, byte_level_regex}}},
       Json::object(),
       false,
       "smollm"},
      {{{"type", "Sequence"}, {"pretokenizers", {digits, byte_level_regex}}},
       {{"model_type", "starcoder2"}},
       false,
       "starcoder"},
      {{{"type", "Sequence"}, {"pretokenizers", {split(llama3), byte_level_plain}}},
       Json::object(),
       true,
       "llama-bpe"},
      {{{"type", "Sequence"}, {"pretokenizers", {split(qwen2), byte_level_plain}}},
       Json::object(),
       false,
       "qwen2"},
  };
  for (const Case& c : cases) {
    Json j = byte_level();
    j["pre_tokenizer"] = c.pre;
    j["model"]["ignore_merges"] = c.ignore_merges;
    const auto im = convert_json(j, c.config);
    EXPECT_EQ(im->file->get_string("tokenizer.ggml.pre"), c.name);
    EXPECT_NO_THROW(tokenizer::PreTokenizer::for_name(c.name)) << c.name;
  }
  // Llama 3's regex with ignore_merges false is not what folio's llama-bpe does.
  Json j = byte_level();
  j["pre_tokenizer"] = cases[3].pre;
  EXPECT_EQ(error_for(j),
            tok_path() +
                ": model: ignore_merges is false but folio's 'llama-bpe' pre-tokenizer "
                "implies true");
  j["model"]["ignore_merges"] = true;
  j["normalizer"] = {{"type", "NFC"}};  // Qwen2's normalizer is accepted (not applied)
  EXPECT_EQ(convert_json(j)->file->get_string("tokenizer.ggml.pre"), "llama-bpe");
}

TEST_F(HfTokenizer, UnknownPreTokenizerSaysWhatItSaw) {
  Json j = byte_level();
  j["pre_tokenizer"] = Json::parse(R"({"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"Regex": "\\p{N}{1,5}"}, "behavior": "Isolated",
       "invert": false},
      {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]})");
  EXPECT_EQ(error_for(j),
            tok_path() +
                ": pre_tokenizer: unsupported byte-level pre-tokenizer "
                R"(Split({"Regex":"\\p{N}{1,5}"}, Isolated) + ByteLevel(add_prefix_space=false, )"
                "use_regex=false) (folio knows ByteLevel = gpt-2; Digits(individual_digits) + "
                "ByteLevel = smollm/starcoder; Split(Llama 3 regex) + ByteLevel(use_regex=false) "
                "= llama-bpe; Split(Qwen2 regex) + ByteLevel(use_regex=false) = qwen2)");
  j["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}};
  EXPECT_EQ(error_for(j),
            tok_path() + ": pre_tokenizer: ByteLevel add_prefix_space=true is not supported");
  j["pre_tokenizer"] = {{"type", "Whitespace"}};
  EXPECT_EQ(error_for(j), tok_path() +
                              ": a BPE model with neither a ByteLevel pre-tokenizer nor "
                              "SentencePiece-style spaces (byte_fallback, Metaspace or a ' ' -> "
                              "'\xE2\x96\x81' normalizer) is not supported");
  j = byte_level();
  j["normalizer"] = {{"type", "Lowercase"}};
  EXPECT_EQ(error_for(j), tok_path() + R"(: normalizer: unsupported normalizer for byte-level )"
                                       R"(BPE: {"type":"Lowercase"})");
}

// ---- the id space --------------------------------------------------------------------------

TEST_F(HfTokenizer, IdsMustBeDense) {
  Json j = byte_level();
  j["added_tokens"] = Json::array();
  j["model"]["merges"] = Json::array();
  j["model"]["vocab"] = {{"a", 0}, {"b", 1}, {"c", 5}};
  EXPECT_EQ(error_for(j), tok_path() +
                              R"(: model.vocab["c"]: id 5 of 'c' leaves holes: 3 )"
                              "entries of model.vocab and added_tokens must have ids 0..2");
  // An added token repeating a vocab entry fills no new id: 0, 1, 3 leaves 2 open.
  j["model"]["vocab"] = {{"a", 0}, {"b", 1}, {"<s>", 3}};
  j["added_tokens"] = Json::parse(R"([{"id": 3, "content": "<s>", "special": true}])");
  EXPECT_EQ(error_for(j), tok_path() +
                              ": no token has id 2 (ids of model.vocab and added_tokens "
                              "must run 0..3 without holes)");
}

TEST_F(HfTokenizer, DuplicateIds) {
  Json j = byte_level();
  j["added_tokens"] = Json::array();
  j["model"]["merges"] = Json::array();
  j["model"]["vocab"] = {{"a", 0}, {"b", 0}, {"c", 1}};
  EXPECT_EQ(error_for(j), tok_path() + R"(: model.vocab["b"]: id 0 is used by both 'a' and 'b')");
  j["model"]["vocab"] = {{"a", 0}, {"b", 1}};
  j["added_tokens"] = Json::parse(R"([{"id": 1, "content": "<x>", "special": true}])");
  EXPECT_EQ(error_for(j),
            tok_path() + ": added_tokens[0].id: id 1 is '<x>' here but 'b' in model.vocab");
}

TEST_F(HfTokenizer, PadsToConfigVocabSize) {
  const auto im = convert_json(byte_level(), {{"vocab_size", 10}});
  const auto tokens = strings(*im->file, "tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 10u);
  EXPECT_EQ(tokens[8], "[PAD8]");
  EXPECT_EQ(tokens[9], "[PAD9]");
  EXPECT_EQ(ints(*im->file, "tokenizer.ggml.token_type")[9], 5);  // UNUSED
  // Gemma 3 multimodal configs keep it under text_config.
  EXPECT_EQ(strings(*convert_json(byte_level(), {{"text_config", {{"vocab_size", 9}}}})->file,
                    "tokenizer.ggml.tokens")
                .size(),
            9u);
  const std::string cfg = dir.file("config.json");
  EXPECT_EQ(error_for(byte_level(), {{"vocab_size", 5}}),
            cfg + ": vocab_size: 5 is smaller than the tokenizer's 8 tokens");
  EXPECT_EQ(error_for(byte_level(), {{"vocab_size", 1000000000}}),
            cfg +
                ": vocab_size: 1000000000 would pad the tokenizer's 8 tokens with more than as "
                "many unused ones");
  EXPECT_EQ(error_for(byte_level(), Json::array()), cfg + ": expected a JSON object, found array");
}

// ---- special tokens and flags --------------------------------------------------------------

TEST_F(HfTokenizer, SpecialIdsFromTokenizerConfig) {
  dir.write("tokenizer_config.json", Json::parse(R"({"bos_token": "<|endoftext|>",
      "eos_token": {"content": "<|im_end|>", "special": true}, "unk_token": "<nope>",
      "pad_token": null})"));
  // tokenizer_config.json names win over config.json ids.
  const auto im = convert_json(byte_level(), {{"bos_token_id", 1}, {"pad_token_id", 2}});
  const gguf::GgufFile& f = *im->file;
  EXPECT_EQ(f.get_int("tokenizer.ggml.bos_token_id"), 0);
  EXPECT_EQ(f.get_int("tokenizer.ggml.eos_token_id"), 7);
  EXPECT_EQ(f.get_int("tokenizer.ggml.padding_token_id"), 2);
  EXPECT_EQ(f.find("tokenizer.ggml.unknown_token_id"), nullptr);  // an unknown name is skipped
  dir.write("tokenizer_config.json", Json::parse(R"({"bos_token": "<nope>"})"));
  EXPECT_EQ(error_for(byte_level()),
            dir.file("tokenizer_config.json") + ": bos_token: '<nope>' is not a token");
}

TEST_F(HfTokenizer, EosListsAndEndOfTurn) {
  // config.json: [end of text, end of turn] -> eos and eot.
  auto im = convert_json(byte_level(), {{"eos_token_id", {0, 7}}, {"pad_token_id", -1}});
  EXPECT_EQ(im->file->get_int("tokenizer.ggml.eos_token_id"), 0);
  EXPECT_EQ(im->file->get_int("tokenizer.ggml.eot_token_id"), 7);
  EXPECT_EQ(im->file->find("tokenizer.ggml.padding_token_id"), nullptr);  // -1: none
  // generation_config.json fills what config.json lacks; text_config is read too.
  dir.write("generation_config.json",
            Json::parse(R"({"eos_token_id": [0, 7], "bos_token_id": 1})"));
  im = convert_json(byte_level(), {{"text_config", {{"bos_token_id", 2}}}});
  EXPECT_EQ(im->file->get_int("tokenizer.ggml.bos_token_id"), 2);
  EXPECT_EQ(im->file->get_int("tokenizer.ggml.eos_token_id"), 0);
  EXPECT_EQ(im->file->get_int("tokenizer.ggml.eot_token_id"), 7);
  // No end-of-turn text among the list: no eot.
  im = convert_json(byte_level(), {{"eos_token_id", {7, 0}}});
  EXPECT_EQ(im->file->get_int("tokenizer.ggml.eos_token_id"), 7);
  EXPECT_EQ(im->file->find("tokenizer.ggml.eot_token_id"), nullptr);
  fs::remove(dir.file("generation_config.json"));
  EXPECT_EQ(error_for(byte_level(), {{"eos_token_id", {0, 99}}}),
            dir.file("config.json") +
                ": eos_token_id[1]: 99 is not a token id (the vocabulary has 8 tokens)");
  EXPECT_EQ(error_for(byte_level(), {{"bos_token_id", "<s>"}}),
            dir.file("config.json") + ": bos_token_id: expected an integer, found string");
}

TEST_F(HfTokenizer, AddBosFromPostProcessorThenTokenizerConfig) {
  Json j = byte_level();
  j["post_processor"] = Json::parse(R"({"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}},
                 {"Sequence": {"id": "A", "type_id": 0}}],
      "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [0],
                                           "tokens": ["<|endoftext|>"]}}})");
  auto im = convert_json(j);  // no tokenizer_config.json: the template defines bos
  EXPECT_EQ(im->file->get_bool("tokenizer.ggml.add_bos_token"), true);
  EXPECT_EQ(im->file->get_bool("tokenizer.ggml.add_eos_token"), false);
  EXPECT_EQ(im->file->get_int("tokenizer.ggml.bos_token_id"), 0);
  dir.write("tokenizer_config.json", Json::parse(R"({"bos_token": "<|im_end|>"})"));
  EXPECT_EQ(error_for(j), tok_path() +
                              ": post_processor.single[0]: adds token 0 "
                              "('<|endoftext|>'), not the bos token 7");
  // The post-processor decides before tokenizer_config.json's flags (as in llama.cpp).
  dir.write("tokenizer_config.json",
            Json::parse(R"({"add_bos_token": true, "add_eos_token": true})"));
  im = convert_json(byte_level());  // ByteLevel post-processor: adds nothing
  EXPECT_EQ(im->file->get_bool("tokenizer.ggml.add_bos_token"), false);
  EXPECT_EQ(im->file->get_bool("tokenizer.ggml.add_eos_token"), false);
  j = byte_level();
  j.erase("post_processor");
  im = convert_json(j);
  EXPECT_EQ(im->file->get_bool("tokenizer.ggml.add_bos_token"), true);
  EXPECT_EQ(im->file->get_bool("tokenizer.ggml.add_eos_token"), true);
}

TEST_F(HfTokenizer, ChatTemplateSources) {
  auto chat = [&] {
    return std::string(
        convert_json(byte_level())->file->get_string("tokenizer.chat_template").value_or("(none)"));
  };
  dir.write("chat_template.json", Json::parse(R"({"chat_template": "from json"})"));
  EXPECT_EQ(chat(), "from json");
  dir.write_text("chat_template.jinja", "from jinja {{ x }}\n");
  EXPECT_EQ(chat(), "from jinja {{ x }}\n");
  dir.write("tokenizer_config.json", Json::parse(R"({"chat_template": [
      {"name": "tool_use", "template": "tools"}, {"name": "default", "template": "default"}]})"));
  EXPECT_EQ(chat(), "default");
  dir.write("tokenizer_config.json", Json::parse(R"({"chat_template": "string"})"));
  EXPECT_EQ(chat(), "string");
  dir.write("tokenizer_config.json",
            Json::parse(R"({"chat_template": [{"name": "tool_use", "template": "tools"}]})"));
  EXPECT_EQ(error_for(byte_level()), dir.file("tokenizer_config.json") +
                                         ": chat_template: a list of templates without one "
                                         "named 'default'");
}

// ---- SentencePiece-style --------------------------------------------------------------------

TEST_F(HfTokenizer, SentencePieceBpeScoresFollowMergeRanks) {
  const auto im = convert_json(sentencepiece());
  const gguf::GgufFile& f = *im->file;
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "llama");
  EXPECT_EQ(f.get_string("tokenizer.ggml.pre"), "default");
  EXPECT_EQ(f.find("tokenizer.ggml.merges"), nullptr);
  EXPECT_EQ(f.get_bool("tokenizer.ggml.add_space_prefix"), true);  // Prepend("▁")
  EXPECT_EQ(f.get_bool("tokenizer.ggml.add_bos_token"), true);     // the template adds <s>
  EXPECT_EQ(f.get_int("tokenizer.ggml.bos_token_id"), 1);
  // A user-defined "▁▁" is stored with real spaces, as llama.cpp pre-normalizes it.
  const auto tokens = strings(f, "tokenizer.ggml.tokens");
  EXPECT_EQ(tokens[12], "  ");
  //                                         <unk> <s> </s> <0x41> ▁  a  b  c  bc ab abc ▁a ▁▁
  EXPECT_EQ(ints(f, "tokenizer.ggml.token_type"),
            (std::vector<std::int64_t>{2, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1, 4}));
  // Minus the rank of each token's first merge; -1000 for control / user-defined tokens.
  EXPECT_EQ(floats(f, "tokenizer.ggml.scores"),
            (std::vector<double>{0, -1000, -1000, 0, 0, 0, 0, 0, 0, -1, -2, -4, -1000}));
  // What HF's BPE gives: "▁abc": b+c (rank 0), then a+bc (2); "▁▁" matched as added token.
  const auto tok = tokenizer::Tokenizer::from_gguf(f);
  EXPECT_EQ(tok.encode("abc"), (std::vector<TokenId>{4, 10}));
  EXPECT_EQ(tok.encode("ab"), (std::vector<TokenId>{4, 9}));
  EXPECT_EQ(tok.encode("ab  "), (std::vector<TokenId>{4, 9, 12}));
  EXPECT_EQ(tok.encode("A"), (std::vector<TokenId>{4, 3}));  // byte fallback
  EXPECT_EQ(tok.encode("ab", {.add_special = true}), (std::vector<TokenId>{1, 4, 9}));
}

TEST_F(HfTokenizer, SentencePieceMergesThatScoresCannotExpress) {
  const std::string at = tok_path() + ": model.merges: ";
  Json j = sentencepiece();
  j["model"]["vocab"]["ca"] = 13;  // no merge "c a": folio would form it, HF never does
  EXPECT_EQ(error_for(j), at + "'ca' can be formed from 'c' + 'a', which is not a merge: folio's "
                               "SentencePiece encoder (merging by token score) would form it "
                               "where Hugging Face does not");
  j = sentencepiece();
  j["model"]["vocab"]["xa"] = 13;  // 'x' is no token, but folio merges unknown characters too
  EXPECT_EQ(error_for(j), at + "'xa' can be formed from 'x' + 'a', which is not a merge: folio's "
                               "SentencePiece encoder (merging by token score) would form it "
                               "where Hugging Face does not");
  j = sentencepiece();
  j["model"]["vocab"]["<0x42>"] = 13;
  j["model"]["merges"].push_back("b b");
  j["model"]["vocab"]["bb"] = 14;
  j["added_tokens"].push_back({{"id", 14}, {"content", "bb"}, {"special", true}});
  EXPECT_EQ(error_for(j), tok_path() +
                              ": model.merges[5]: merges two normal tokens into 'bb', "
                              "which folio's SentencePiece encoder never produces from "
                              "text");
  j = sentencepiece();
  j["model"]["byte_fallback"] = false;
  EXPECT_EQ(error_for(j), tok_path() +
                              ": model: byte_fallback is false but the vocabulary has "
                              "<0xXX> tokens, which folio's SentencePiece encoder would "
                              "use for unknown characters");
}

TEST_F(HfTokenizer, SentencePieceNormalizersAndMetaspace) {
  Json j = sentencepiece();
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = {
      {"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "never"}, {"split", false}};
  EXPECT_EQ(convert_json(j)->file->get_bool("tokenizer.ggml.add_space_prefix"), false);
  j["pre_tokenizer"]["prepend_scheme"] = "first";
  EXPECT_EQ(convert_json(j)->file->get_bool("tokenizer.ggml.add_space_prefix"), true);
  // Gemma 3: Replace(" " -> "▁") then a Split on " " that never matches.
  j["normalizer"] = {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "▁"}};
  j["pre_tokenizer"] = {{"type", "Split"},
                        {"pattern", {{"String", " "}}},
                        {"behavior", "MergedWithPrevious"},
                        {"invert", false}};
  EXPECT_EQ(convert_json(j)->file->get_bool("tokenizer.ggml.add_space_prefix"), false);
  j["normalizer"] = {{"type", "NFKC"}};
  EXPECT_EQ(error_for(j), tok_path() + R"(: normalizer: unsupported normalizer {"type":"NFKC"} )"
                                       "(folio's SentencePiece path handles Replace(' ', '▁') "
                                       "and Prepend('▁'))");
  j["normalizer"] = nullptr;
  EXPECT_EQ(error_for(j),
            tok_path() + R"(: pre_tokenizer: unsupported pre-tokenizer for a SentencePiece-style )"
                         R"(model: {"behavior":"MergedWithPrevious","invert":false,"pattern":)"
                         R"({"String":" "},"type":"Split"})");
  j["pre_tokenizer"] = nullptr;
  EXPECT_EQ(error_for(j), tok_path() +
                              ": neither the normalizer nor the pre-tokenizer turns ' ' "
                              "into '▁'");
}

TEST_F(HfTokenizer, Unigram) {
  Json j = Json::parse(R"({
    "added_tokens": [{"id": 0, "content": "<pad>", "special": true}],
    "normalizer": null,
    "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
                      "split": true},
    "model": {"type": "Unigram", "unk_id": 1, "byte_fallback": false,
              "vocab": [["<pad>", 0.0], ["<unk>", 0.0], ["▁", -2.0], ["a", -3.0],
                        ["▁a", -1.5], ["b", -4.25]]}})");
  const auto im = convert_json(j);
  const gguf::GgufFile& f = *im->file;
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "llama");
  EXPECT_EQ(ints(f, "tokenizer.ggml.token_type"), (std::vector<std::int64_t>{3, 2, 1, 1, 1, 1}));
  EXPECT_EQ(floats(f, "tokenizer.ggml.scores"), (std::vector<double>{0, 0, -2, -3, -1.5, -4.25}));
  EXPECT_EQ(f.get_bool("tokenizer.ggml.add_space_prefix"), true);
  // split=true: HF never lets a piece cross a "▁", folio's encoder would.
  j["model"]["vocab"].push_back({"a▁b", -9.0});
  EXPECT_EQ(error_for(j), tok_path() +
                              ": pre_tokenizer: Metaspace split=true with token 'a▁b' "
                              "holding an inner '▁': folio's encoder does not split "
                              "there");
  j["model"]["vocab"][1] = {"<unk>", 1e300};
  EXPECT_EQ(error_for(j), tok_path() + ": model.vocab[1][1]: score out of range");
}

// ---- malformed input --------------------------------------------------------------------------

TEST_F(HfTokenizer, MissingAndMalformedFiles) {
  EXPECT_EQ(error_of(dir.path()),
            tok_path() + ": missing (folio converts tokenizers from tokenizer.json only)");
  dir.write_text("tokenizer.json", std::string(R"({"model": {"type": "BPE",)"));
  const std::string e = error_of(dir.path());
  EXPECT_EQ(e.rfind(tok_path() + ": invalid JSON: ", 0), 0u) << e;
  EXPECT_NE(e.find("parse error at line 1"), std::string::npos) << e;
  dir.write_text("tokenizer.json", std::string(100000, '['));
  EXPECT_EQ(error_of(dir.path()), tok_path() + ": JSON nested deeper than 64 levels at byte 64");
  dir.write_text("tokenizer.json", std::string("[1, 2]"));
  EXPECT_EQ(error_of(dir.path()), tok_path() + ": expected a JSON object at the top level");
  EXPECT_EQ(error_for(Json::object()), tok_path() + ": model: missing");
  Json j = byte_level();
  j["model"]["type"] = "WordPiece";
  EXPECT_EQ(error_for(j), tok_path() +
                              ": model.type: unsupported model type 'WordPiece' (folio "
                              "converts BPE and Unigram tokenizers)");
  j = byte_level();
  j["model"]["vocab"]["a"] = "1";
  EXPECT_EQ(error_for(j), tok_path() + R"(: model.vocab["a"]: expected an integer, found string)");
  j = byte_level();
  j["added_tokens"] = Json::object();
  EXPECT_EQ(error_for(j), tok_path() + ": added_tokens: expected an array, found object");
  j = byte_level();
  j["added_tokens"][0].erase("content");
  EXPECT_EQ(error_for(j), tok_path() + ": added_tokens[0].content: missing");
}

// Every field of the fixtures replaced by every kind of wrong value: each conversion either
// succeeds or throws folio::Error, never anything else (a crash fails the whole binary).
TEST_F(HfTokenizer, TypeConfusedInputOnlyThrowsFolioErrors) {
  const std::vector<Json> wrong = {nullptr,
                                   0,
                                   -1,
                                   4294967296,
                                   1e300,
                                   "x",
                                   Json::array(),
                                   Json::object(),
                                   true,
                                   Json::parse("[[[]]]"),
                                   Json::parse(R"({"type": "BPE"})")};
  int converted = 0, refused = 0;
  for (const Json& base : {byte_level(), sentencepiece()}) {
    const Json flat = base.flatten();
    std::vector<std::string> pointers;
    for (const auto& item : flat.items()) {
      // Each leaf and each of its parents.
      for (std::string p = item.key(); !p.empty(); p = p.substr(0, p.rfind('/'))) {
        pointers.push_back(p);
      }
    }
    std::sort(pointers.begin(), pointers.end());
    pointers.erase(std::unique(pointers.begin(), pointers.end()), pointers.end());
    for (const std::string& p : pointers) {
      for (const Json& w : wrong) {
        Json j = base;
        j[Json::json_pointer(p)] = w;
        dir.write("tokenizer.json", j);
        try {
          tokenizer_metadata(dir.path(), Json::object());
          ++converted;
        } catch (const Error&) {
          ++refused;
        } catch (const std::exception& e) {
          ADD_FAILURE() << p << " = " << w.dump() << ": " << e.what();
        }
      }
    }
  }
  EXPECT_GT(refused, 500);
  EXPECT_GT(converted, 50);
}

}  // namespace
}  // namespace folio::hf
