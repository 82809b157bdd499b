// Behaviour of the tokenizer pieces that the reference vectors do not pin down:
// UTF-8 repair, invalid-UTF-8 input, special tokens, BOS/EOS, errors, streaming.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "base/error.h"
#include "test_util.h"
#include "tokenizer/detokenizer.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/utf8.h"

namespace folio::tokenizer {
namespace {

using namespace testing;

const Tokenizer& vocab_tokenizer(const std::string& name) {
  static std::map<std::string, Tokenizer> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    it = cache.emplace(name, load_tokenizer(vectors_dir() + "/ggml-vocab-" + name + ".gguf")).first;
  }
  return it->second;
}

std::string random_bytes(std::mt19937& rng, std::size_t max_len) {
  std::uniform_int_distribution<std::size_t> len(0, max_len);
  std::uniform_int_distribution<int> byte(0, 255), kind(0, 3);
  std::string s(len(rng), '\0');
  for (char& c : s) {
    const int k = kind(rng);  // bias towards ASCII, spaces and UTF-8 lead/continuation bytes
    c = static_cast<char>(k == 0 ? ' ' : k == 1 ? 'a' + byte(rng) % 26 : byte(rng));
  }
  return s;
}

TEST(Utf8, ReplacesMaximalSubparts) {
  // One U+FFFD per maximal ill-formed subpart, as Python's errors="replace".
  EXPECT_EQ(utf8::to_valid("a\xF0\x9F\x98"
                           "b"),
            "a\xEF\xBF\xBD"
            "b");                                                     // truncated emoji
  EXPECT_EQ(utf8::to_valid("\xC0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong
  EXPECT_EQ(utf8::to_valid("\xED\xA0\x80"),                           // surrogate
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(utf8::to_valid("\x80\xFF"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(utf8::to_valid("h\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x9A\x80"),
            "h\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x9A\x80");
}

TEST(PreTokenizer, UnknownNameIsAClearError) {
  try {
    PreTokenizer::for_name("no-such-pre");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("no-such-pre"), std::string::npos) << msg;
    EXPECT_NE(msg.find("smollm"), std::string::npos) << msg;
    EXPECT_NE(msg.find("llama3"), std::string::npos) << msg;
  }
}

TEST(PreTokenizer, EveryFamilyCompilesAndCoversAnyInput) {
  std::mt19937 rng(7);
  PreTokenizerScratch scratch;
  for (const auto& name : PreTokenizer::supported_names()) {
    const auto pre = PreTokenizer::for_name(name);
    for (int i = 0; i < 200; ++i) {
      const std::string s = random_bytes(rng, 64);
      std::vector<Piece> pieces;
      pre.split(s, scratch, pieces);
      std::size_t at = 0;
      for (const Piece& p : pieces) {
        ASSERT_EQ(p.offset, at) << name;
        ASSERT_GT(p.length, 0u) << name;
        at += p.length;
      }
      ASSERT_EQ(at, s.size()) << name;
    }
  }
}

std::vector<std::string> split_text(const char* pre, std::string_view text) {
  const auto p = PreTokenizer::for_name(pre);
  PreTokenizerScratch scratch;
  std::vector<Piece> pieces;
  p.split(text, scratch, pieces);
  std::vector<std::string> out;
  for (const Piece& x : pieces) out.emplace_back(text.substr(x.offset, x.length));
  return out;
}

TEST(PreTokenizer, FollowsHuggingFaceRegexSemantics) {
  using V = std::vector<std::string>;
  // \s+(?!\S): the last space of a run goes with the next word.
  EXPECT_EQ(split_text("gpt-2", "a   b"), (V{"a", "  ", " b"}));
  // U+0085 (NEL) is whitespace for Oniguruma (HF) though not for PCRE2's \s.
  EXPECT_EQ(split_text("gpt-2",
                       "a\xC2\x85\xC2\x85"
                       "b"),
            (V{"a", "\xC2\x85", "\xC2\x85", "b"}));
  // Digits: one by one (StarCoder/SmolLM), up to three (Llama 3), one (Qwen2).
  EXPECT_EQ(split_text("smollm", "x 1234"), (V{"x", " ", "1", "2", "3", "4"}));
  EXPECT_EQ(split_text("llama3", "1234567"), (V{"123", "456", "7"}));
  EXPECT_EQ(split_text("qwen2", "12"), (V{"1", "2"}));
  // Llama 3 contractions are case-insensitive.
  EXPECT_EQ(split_text("llama3", "I'M"), (V{"I", "'M"}));
  // Invalid bytes stand alone and never reach PCRE2.
  EXPECT_EQ(split_text("gpt-2",
                       "ab\xFF"
                       "cd"),
            (V{"ab", "\xFF", "cd"}));
}

TEST(Encode, AnyBytesRoundTripThroughByteLevelBpe) {
  // Byte-level BPE represents every byte its vocabulary has a token for, so
  // decode(encode(x)) == x less the bytes it lacks (StarCoder has no token for
  // 0xC0, 0xC1, 0xF1, 0xF5..0xFF; those are dropped, as HF does). DeepSeek's
  // user-defined "ü" shares its text with the byte character of 0xFC, so a
  // lone 0xFC byte comes back as "ü": that vocabulary is checked on valid text.
  std::mt19937 rng(1);
  for (const char* name : {"gpt-2", "starcoder", "deepseek-llm"}) {
    const Tokenizer& tok = vocab_tokenizer(name);
    const bool valid_only = std::string_view(name) == "deepseek-llm";
    for (int i = 0; i < 300; ++i) {
      const std::string s =
          valid_only ? utf8::to_valid(random_bytes(rng, 80)) : random_bytes(rng, 80);
      std::string representable;
      for (char c : s) {
        const auto b = static_cast<unsigned char>(c);
        const bool lacking = std::string_view(name) == "starcoder" &&
                             (b == 0xC0 || b == 0xC1 || b == 0xF1 || b >= 0xF5);
        if (!lacking) representable += c;
      }
      ASSERT_EQ(tok.decode(tok.encode(s)), representable) << name << " case " << i;
    }
  }
}

TEST(Encode, AnyBytesRoundTripThroughSentencePieceByteFallback) {
  std::mt19937 rng(2);
  for (const char* name : {"llama-spm", "phi-3"}) {
    const Tokenizer& tok = vocab_tokenizer(name);
    for (int i = 0; i < 300; ++i) {
      const std::string s = random_bytes(rng, 80);
      ASSERT_EQ(tok.decode(tok.encode(s)), s) << name << " case " << i;
    }
  }
}

TEST(Encode, HugeWhitespaceRunIsLinearAndLossless) {
  const Tokenizer& tok = vocab_tokenizer("gpt-2");
  const std::string s = std::string(1 << 20, ' ') + "x" + std::string(1 << 16, '\n');
  EXPECT_EQ(tok.decode(tok.encode(s)), s);
}

TEST(Encode, ParseSpecialControlsControlTokens) {
  const Tokenizer& tok = vocab_tokenizer("starcoder");
  const TokenId eot = *tok.vocab().find("<|endoftext|>");
  const auto parsed = tok.encode("a<|endoftext|>b", {.add_special = false, .parse_special = true});
  ASSERT_EQ(parsed.size(), 3u);
  EXPECT_EQ(parsed[1], eot);
  const auto plain = tok.encode("a<|endoftext|>b", {.add_special = false, .parse_special = false});
  EXPECT_EQ(std::count(plain.begin(), plain.end(), eot), 0);
  EXPECT_GT(plain.size(), 3u);
  EXPECT_EQ(tok.decode(plain), "a<|endoftext|>b");
  // Decoding renders control tokens unless asked not to.
  EXPECT_EQ(tok.decode(parsed), "a<|endoftext|>b");
  EXPECT_EQ(tok.decode(parsed, {.render_special = false}), "ab");
}

TEST(Encode, AddSpecialFollowsMetadata) {
  const Tokenizer& ds = vocab_tokenizer("deepseek-llm");  // add_bos = true, add_eos = false
  const auto ids = ds.encode("hi", {.add_special = true});
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.front(), 100000);
  EXPECT_NE(ids.back(), 100001);
  EXPECT_EQ(ds.encode("hi", {.add_special = false}).size() + 1, ids.size());
  const Tokenizer& spm = vocab_tokenizer("llama-spm");  // BOS, space prefix
  const auto s = spm.encode("Hello", {.add_special = true});
  ASSERT_GE(s.size(), 2u);
  EXPECT_EQ(s.front(), 1);
  EXPECT_EQ(spm.decode(s, {.render_special = false}), "Hello");
  EXPECT_EQ(spm.decode(s), "<s> Hello");  // HF: strip only when the text starts with a space
}

TEST(Decode, InvalidIdIsAnError) {
  const Tokenizer& tok = vocab_tokenizer("gpt-2");
  const std::vector<TokenId> bad = {1, -1};
  EXPECT_THROW(tok.decode(bad), Error);
  const std::vector<TokenId> big = {static_cast<TokenId>(tok.vocab().size())};
  EXPECT_THROW(tok.decode(big), Error);
}

TEST(StreamingDetokenizer, EmitsOnlyCompleteUtf8AndMatchesBatchDecode) {
  std::mt19937 rng(3);
  for (const char* name : {"gpt-2", "llama-spm"}) {
    const Tokenizer& tok = vocab_tokenizer(name);
    std::uniform_int_distribution<TokenId> any(0, static_cast<TokenId>(tok.vocab().size() - 1));
    for (int i = 0; i < 300; ++i) {
      std::vector<TokenId> ids;
      // Half the cases: real text cut into byte tokens; half: random ids.
      if (i % 2 == 0) {
        ids = tok.encode(random_bytes(rng, 40));
      } else {
        for (int k = 0; k < 12; ++k) ids.push_back(any(rng));
      }
      StreamingDetokenizer stream(tok);
      std::string all;
      for (TokenId id : ids) {
        const std::string part = stream.push(id);
        ASSERT_EQ(utf8::to_valid(part), part) << "a push returned broken UTF-8";
        all += part;
      }
      all += stream.flush();
      ASSERT_EQ(all, utf8::to_valid(tok.decode(ids))) << name << " case " << i;
    }
  }
}

TEST(StreamingDetokenizer, HoldsASplitCharacterUntilComplete) {
  const Tokenizer& tok = vocab_tokenizer("llama-spm");
  // U+1F680 as four byte tokens.
  const char* bytes[] = {"<0xF0>", "<0x9F>", "<0x9A>", "<0x80>"};
  StreamingDetokenizer stream(tok);
  std::string out;
  for (int i = 0; i < 4; ++i) {
    out = stream.push(*tok.vocab().find(bytes[i]));
    if (i < 3) {
      EXPECT_EQ(out, "");
    }
  }
  EXPECT_EQ(out, "\xF0\x9F\x9A\x80");
  // An incomplete tail becomes U+FFFD only at flush.
  StreamingDetokenizer cut(tok);
  EXPECT_EQ(cut.push(*tok.vocab().find("<0xF0>")), "");
  EXPECT_EQ(cut.push(*tok.vocab().find("<0x9F>")), "");
  EXPECT_EQ(cut.flush(), "\xEF\xBF\xBD");
}

}  // namespace
}  // namespace folio::tokenizer
