// Runs every case of every reference vector file in shared/tokenizer-vectors
// (ids produced by the Hugging Face tokenizers; see the README there):
// encode with no BOS/EOS and special text as plain text must give exactly the
// expected ids, and decoding them must give back the input.
#include <gtest/gtest.h>

#include "test_util.h"
#include "tokenizer/detokenizer.h"
#include "tokenizer/utf8.h"

namespace folio::tokenizer {
namespace {

using namespace testing;

constexpr std::string_view kSeparator = "\n__ggml_vocab_test__\n";

std::vector<std::string> split_cases(std::string inp) {
  // The file ends with a separator; the newlines around it belong to it.
  if (inp.size() >= kSeparator.size() &&
      inp.compare(inp.size() - kSeparator.size(), kSeparator.size(), kSeparator) == 0) {
    inp.resize(inp.size() - kSeparator.size());
  }
  std::vector<std::string> cases;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t next = inp.find(kSeparator, pos);
    cases.push_back(inp.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
    if (next == std::string::npos) break;
    pos = next + kSeparator.size();
  }
  return cases;
}

std::vector<std::string> split_lines(const std::string& out) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos < out.size()) {
    std::size_t nl = out.find('\n', pos);
    if (nl == std::string::npos) nl = out.size();
    lines.push_back(out.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

class VectorsTest : public ::testing::TestWithParam<const char*> {};

TEST_P(VectorsTest, EveryCaseEncodesAndDecodesExactly) {
  const std::string base = vectors_dir() + "/ggml-vocab-" + GetParam() + ".gguf";
  ASSERT_TRUE(file_exists(base)) << base << " is missing";
  const Tokenizer tok = load_tokenizer(base);
  const auto cases = split_cases(read_file(base + ".inp"));
  const auto expected = split_lines(read_file(base + ".out"));
  ASSERT_EQ(cases.size(), expected.size()) << "case/expectation count mismatch in " << base;
  ASSERT_GT(cases.size(), 10u);

  Tokenizer::Session session(tok);
  int failures = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    std::vector<TokenId> ids;
    session.encode(cases[i], {.add_special = false, .parse_special = false}, ids);
    const auto want = parse_ids(expected[i]);
    EXPECT_EQ(join_ids(ids), join_ids(want)) << "case " << i << ": '" << cases[i] << "'";
    if (ids != want) ++failures;

    // Lossless round trip (every case here is valid UTF-8 the vocabularies cover).
    EXPECT_EQ(tok.decode(want), cases[i]) << "decode, case " << i;
    // The streaming detokenizer gives the same text, one id at a time.
    StreamingDetokenizer stream(tok);
    std::string streamed;
    for (TokenId id : want) streamed += stream.push(id);
    streamed += stream.flush();
    EXPECT_EQ(streamed, cases[i]) << "streaming decode, case " << i;
  }
  EXPECT_EQ(failures, 0);
}

INSTANTIATE_TEST_SUITE_P(AllFiles, VectorsTest,
                         ::testing::Values("gpt-2", "starcoder", "deepseek-llm", "llama-spm",
                                           "phi-3"),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace folio::tokenizer
