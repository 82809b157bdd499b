// tests/spec/draft_vocabulary_test.cpp: a draft model must have the
// target's vocabulary, and the error says where it differs.
#include "spec/draft_vocabulary.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "gguf/gguf_file.h"
#include "gguf/writer.h"

namespace folio::spec {
namespace {

// A SentencePiece-kind vocabulary of `texts` (types: 1, normal) as a GGUF
// in memory, parsed back.
struct MiniVocab {
  explicit MiniVocab(const std::vector<std::string>& texts, int type_of_last = 1) {
    gguf::MetaValue::Array toks, scores, types;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      toks.push_back(gguf::MetaValue::string(texts[i]));
      scores.push_back(gguf::MetaValue::f32(0));
      types.push_back(gguf::MetaValue::integer(gguf::ValueType::INT32,
                                               i + 1 == texts.size() ? type_of_last : 1));
    }
    gguf::GgufWriter w;
    w.add("tokenizer.ggml.model", gguf::MetaValue::string("llama"));
    w.add("tokenizer.ggml.tokens", gguf::MetaValue::array(gguf::ValueType::STRING, toks));
    w.add("tokenizer.ggml.scores", gguf::MetaValue::array(gguf::ValueType::FLOAT32, scores));
    w.add("tokenizer.ggml.token_type", gguf::MetaValue::array(gguf::ValueType::INT32, types));
    image = w.to_bytes();
    file = std::make_unique<gguf::GgufFile>(gguf::GgufFile::parse(image));
    vocab = std::make_unique<tokenizer::Vocab>(tokenizer::Vocab::from_gguf(*file));
  }
  std::vector<std::uint8_t> image;
  std::unique_ptr<gguf::GgufFile> file;
  std::unique_ptr<tokenizer::Vocab> vocab;
};

std::string error_of(const MiniVocab& target, const MiniVocab& draft) {
  try {
    check_draft_vocabulary(*target.vocab, *draft.vocab);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(DraftVocabulary, TheSameVocabularyPasses) {
  const MiniVocab a({"<unk>", "a", "b", "ab"});
  const MiniVocab b({"<unk>", "a", "b", "ab"});
  EXPECT_EQ(error_of(a, b), "");
}

TEST(DraftVocabulary, ErrorsSayWhereTheyDiffer) {
  const MiniVocab target({"<unk>", "a", "b", "ab"});
  EXPECT_NE(
      error_of(target, MiniVocab({"<unk>", "a", "b"})).find("the target has 4 tokens, the draft 3"),
      std::string::npos);
  EXPECT_NE(error_of(target, MiniVocab({"<unk>", "a", "c", "ab"}))
                .find("first differing token id 2: target \"b\", draft \"c\""),
            std::string::npos);
  // Texts are quoted as JSON strings, control bytes escaped.
  EXPECT_NE(error_of(target, MiniVocab({"<unk>", "a\n", "b", "ab"}))
                .find("first differing token id 1: target \"a\", draft \"a\\n\""),
            std::string::npos);
  EXPECT_NE(error_of(target, MiniVocab({"<unk>", "a", "b", "ab"}, 3))
                .find("first differing token id 3 (\"ab\"): token type 1 in the target, 3 in "
                      "the draft"),
            std::string::npos);
}

}  // namespace
}  // namespace folio::spec
