// fuzz/synthetic_vocab.cpp: the in-memory BPE and SentencePiece vocabularies.
#include "synthetic_vocab.h"

#include <cstdio>
#include <set>
#include <utility>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/writer.h"
#include "tokenizer/byte_level.h"

namespace folio::fuzz {
namespace {

using gguf::MetaValue;
using gguf::ValueType;
using tokenizer::TokenType;

struct Entry {
  std::string text;
  float score = 0;
  TokenType type = TokenType::kNormal;
};

MetaValue string_array(const std::vector<std::string>& items) {
  MetaValue::Array a;
  for (const auto& s : items) a.push_back(MetaValue::string(s));
  return MetaValue::array(ValueType::STRING, std::move(a));
}

tokenizer::Tokenizer build(const std::string& model, const std::vector<Entry>& entries,
                           const std::vector<std::string>& merges, const std::string& pre,
                           const std::vector<std::pair<const char*, std::int64_t>>& ids,
                           const std::vector<std::pair<const char*, bool>>& flags) {
  gguf::GgufWriter w;
  w.add("tokenizer.ggml.model", MetaValue::string(model));
  if (!pre.empty()) w.add("tokenizer.ggml.pre", MetaValue::string(pre));
  std::vector<std::string> texts;
  MetaValue::Array scores, types;
  for (const Entry& e : entries) {
    texts.push_back(e.text);
    scores.push_back(MetaValue::f32(e.score));
    types.push_back(MetaValue::integer(ValueType::INT32, static_cast<std::int32_t>(e.type)));
  }
  w.add("tokenizer.ggml.tokens", string_array(texts));
  w.add("tokenizer.ggml.scores", MetaValue::array(ValueType::FLOAT32, std::move(scores)));
  w.add("tokenizer.ggml.token_type", MetaValue::array(ValueType::INT32, std::move(types)));
  if (!merges.empty()) w.add("tokenizer.ggml.merges", string_array(merges));
  for (const auto& [key, id] : ids) w.add(key, MetaValue::integer(ValueType::UINT32, id));
  for (const auto& [key, on] : flags) w.add(key, MetaValue::boolean(on));
  // The Vocab copies every text out of the file, so the image may go.
  const std::vector<std::uint8_t> image = w.to_bytes();
  return tokenizer::Tokenizer::from_gguf(gguf::GgufFile::parse(image, "synthetic vocab"));
}

// Raw bytes -> their byte-level (GPT-2 map) token text.
std::string byte_level(const std::string& raw) {
  std::string out;
  for (const char c : raw) out += tokenizer::byte_level::encode_byte(static_cast<std::uint8_t>(c));
  return out;
}

}  // namespace

tokenizer::Tokenizer synthetic_bpe(const std::string& pre) {
  std::vector<Entry> entries;
  for (int b = 0; b < 256; ++b)
    entries.push_back({byte_level(std::string(1, static_cast<char>(b)))});
  // Merges as raw byte pairs, in priority order; each adds its result as a token.
  const std::pair<const char*, const char*> pairs[] = {
      {" ", "t"},           {"h", "e"},       {" t", "he"},     {"i", "n"},
      {"e", "r"},           {"a", "n"},       {"o", "n"},       {" ", "a"},
      {"r", "e"},           {"l", "l"},       {"he", "ll"},     {"hell", "o"},
      {" ", "w"},           {"o", "r"},       {" w", "or"},     {" wor", "l"},
      {" worl", "d"},       {"{", "\""},      {"\"", ":"},      {"\"", ","},
      {"\"", "}"},          {" ", " "},       {"  ", "  "},     {"\n", "\n"},
      {"1", "2"},           {"12", "3"},      {"\xC3", "\xA9"}, {"\xE2", "\x82"},
      {"\xE2\x82", "\xAC"}, {"\xF0", "\x9F"}, {"\xE4", "\xB8"}, {"\xE4\xB8", "\xAD"},
      {"m", "e"},           {"a", "me"},      {"n", "ame"},
  };
  std::vector<std::string> merges;
  std::set<std::string> seen;
  for (const Entry& e : entries) seen.insert(e.text);
  for (const auto& [l, r] : pairs) {
    const std::string lt = byte_level(l), rt = byte_level(r), joined = lt + rt;
    merges.push_back(lt + " " + rt);
    if (seen.insert(joined).second) entries.push_back({joined});
  }
  const auto eot = static_cast<std::int64_t>(entries.size());
  entries.push_back({"<|endoftext|>", 0, TokenType::kControl});
  entries.push_back({"<|im_start|>", 0, TokenType::kControl});
  entries.push_back({"<|im_end|>", 0, TokenType::kControl});
  entries.push_back({"<tool_call>", 0, TokenType::kUserDefined});
  entries.push_back({"</tool_call>", 0, TokenType::kUserDefined});
  return build("gpt2", entries, merges, pre,
               {{"tokenizer.ggml.bos_token_id", eot}, {"tokenizer.ggml.eos_token_id", eot}}, {});
}

tokenizer::Tokenizer synthetic_spm(bool byte_tokens, bool add_space_prefix) {
  std::vector<Entry> entries = {{"<unk>", 0, TokenType::kUnknown},
                                {"<s>", 0, TokenType::kControl},
                                {"</s>", 0, TokenType::kControl}};
  if (byte_tokens) {
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      entries.push_back({name, 0, TokenType::kByte});
    }
  }
  const std::string sp = "\xE2\x96\x81";  // U+2581, SentencePiece's space
  float score = -1;
  for (char c = 'a'; c <= 'z'; ++c) entries.push_back({std::string(1, c), score -= 0.01F});
  for (const char* s : {",", ".", "!", "0", "1", "\xC3\xA9", "\xE4\xB8\xAD"})
    entries.push_back({s, score -= 0.01F});
  entries.push_back({sp, -2});
  for (const char* s : {"th", "he", "the", "in", "an", "er", "on"})
    entries.push_back({s, score -= 0.1F});
  for (const char* s : {"t", "the", "a", "an", "in", "w", "on"})
    entries.push_back({sp + s, score -= 0.1F});
  entries.push_back({sp + sp, -5});
  entries.push_back({"  ", 0, TokenType::kUserDefined});  // Gemma-style space run, frozen
  entries.push_back({"<unused0>", -100, TokenType::kUnused});
  return build("llama", entries, {}, "",
               {{"tokenizer.ggml.unknown_token_id", 0},
                {"tokenizer.ggml.bos_token_id", 1},
                {"tokenizer.ggml.eos_token_id", 2}},
               {{"tokenizer.ggml.add_space_prefix", add_space_prefix}});
}

}  // namespace folio::fuzz
