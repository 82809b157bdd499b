// Compares folio's tokenizer with Hugging Face `tokenizers` on the real models'
// vocabularies: every case of tests/data/tokenizer/*.jsonl (written by
// tools/gen_tokenizer_goldens.py) must encode and decode exactly as HF does.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.h"
#include "tokenizer/detokenizer.h"
#include "tokenizer/utf8.h"

namespace folio::tokenizer {
namespace {

using namespace testing;

struct GoldenFile {
  const char* golden;
  const char* model;
};

class HfGoldenTest : public ::testing::TestWithParam<GoldenFile> {};

TEST_P(HfGoldenTest, EveryCaseMatchesHuggingFace) {
  const std::string model = source_dir() + "/models/" + GetParam().model;
  ASSERT_TRUE(file_exists(model)) << model
                                  << " is missing: run scripts/setup to download the models";
  const std::string golden = source_dir() + "/tests/data/tokenizer/" + GetParam().golden;
  ASSERT_TRUE(file_exists(golden)) << golden << " is missing: run tools/gen_tokenizer_goldens.py";
  const Tokenizer tok = load_tokenizer(model);
  Tokenizer::Session session(tok);

  std::istringstream lines(read_file(golden));
  std::string line;
  std::getline(lines, line);  // header
  int n = 0, failures = 0, divergent = 0;
  while (std::getline(lines, line)) {
    const auto rec = nlohmann::json::parse(line);
    const std::string text = rec.at("text");
    const auto want = rec.at("ids").get<std::vector<TokenId>>();
    const auto want_plain =
        rec.contains("ids_plain") ? rec.at("ids_plain").get<std::vector<TokenId>>() : want;
    const std::string want_text = rec.value("decoded", text);

    std::vector<TokenId> ids, plain;
    if (rec.contains("divergence")) {
      // Explained in tools/gen_tokenizer_goldens.py: HF-from-GGUF is not the
      // reference here; folio must still round-trip the text exactly.
      session.encode(text, {.add_special = false, .parse_special = true}, ids);
      EXPECT_EQ(tok.decode(ids), text) << "divergent case " << n << " must round-trip";
      ++n;
      ++divergent;
      continue;
    }
    session.encode(text, {.add_special = false, .parse_special = true}, ids);
    session.encode(text, {.add_special = false, .parse_special = false}, plain);
    EXPECT_EQ(join_ids(ids), join_ids(want)) << "parse_special, case " << n << ": " << text;
    EXPECT_EQ(join_ids(plain), join_ids(want_plain)) << "plain, case " << n << ": " << text;
    const std::string decoded = utf8::to_valid(tok.decode(want));
    EXPECT_EQ(decoded, want_text) << "decode, case " << n;

    StreamingDetokenizer stream(tok);
    std::string streamed;
    for (TokenId id : want) streamed += stream.push(id);
    streamed += stream.flush();
    EXPECT_EQ(streamed, decoded) << "streaming decode, case " << n;

    failures += (ids != want) + (plain != want_plain) + (decoded != want_text);
    ++n;
  }
  EXPECT_GE(n, 200);
  EXPECT_LE(divergent, 2) << "more known divergences than expected";
  if (divergent > 0) std::printf("note: %d case(s) with a documented HF divergence\n", divergent);
  EXPECT_EQ(failures, 0) << "of " << n << " cases";
}

INSTANTIATE_TEST_SUITE_P(Models, HfGoldenTest,
                         ::testing::Values(GoldenFile{"smollm2.jsonl",
                                                      "SmolLM2-135M-Instruct.Q4_1.gguf"},
                                           GoldenFile{"gemma3.jsonl", "gemma-3-270m-q4_k_m.gguf"}),
                         [](const auto& param_info) {
                           std::string n = param_info.param.golden;
                           return n.substr(0, n.find('.'));
                         });

// A chat model whose GGUF names no eot_token_id still stops its turns:
// Gemma's <end_of_turn> (id 106 in HF's tokenizer, gemma3.jsonl; listed
// beside EOS in HF's generation_config) is found by its text as a control
// token. SmolLM2's <|im_end|> is its EOS already.
TEST(SpecialTokens, EndOfTurnIsFoundByTextWhenTheFileNamesNone) {
  const std::string gemma = source_dir() + "/models/gemma-3-270m-q4_k_m.gguf";
  const std::string smol = source_dir() + "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
  ASSERT_TRUE(file_exists(gemma) && file_exists(smol)) << "run scripts/setup";
  const Tokenizer g = load_tokenizer(gemma);
  ASSERT_TRUE(g.vocab().special().eot.has_value());
  EXPECT_EQ(*g.vocab().special().eot, 106);
  EXPECT_EQ(g.vocab().text(106), "<end_of_turn>");
  EXPECT_EQ(g.vocab().special().eos, 1);
  const Tokenizer s = load_tokenizer(smol);
  EXPECT_EQ(s.vocab().special().eot.value_or(-1), s.vocab().special().eos.value_or(-2));
}

}  // namespace
}  // namespace folio::tokenizer
