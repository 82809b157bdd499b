// Structured output in the engine with the real model: every constrained
// sample (greedy, sampled at several temperatures and seeds, n > 1,
// batched, with n-gram speculation) is a sentence of its grammar and ends
// where the grammar is complete or on EOS where it may end; greedy outputs
// are the same alone, batched and speculated.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine_fixture.h"
#include "grammar/compiled_grammar.h"
#include "grammar/gbnf_parser.h"
#include "grammar/matcher.h"
#include "grammar/token_vocab.h"

namespace folio::engine::testing {
namespace {

const char* kObject = R"(
root   ::= "{" ws "\"name\"" ws ":" ws string "," ws "\"age\"" ws ":" ws int ws "," ws "\"tags\"" ws ":" ws "[" ws (string (ws "," ws string){0,3})? ws "]" ws "}"
string ::= "\"" ([^"\\\x00-\x1F] | "\\" ["\\/bfnrt]){0,24} "\""
int    ::= "-"? ([0-9] | [1-9] [0-9]{1,5})
ws     ::= [ \n]{0,2}
)";

std::shared_ptr<const grammar::CompiledGrammar> compiled(const char* gbnf) {
  static const auto vocab = grammar::TokenVocab::from_tokenizer(smollm().tok);
  return std::make_shared<const grammar::CompiledGrammar>(grammar::parse_gbnf(gbnf), vocab);
}

// The sample's text; checks it is a complete sentence of `g`.
std::string check_sentence(const std::shared_ptr<const grammar::CompiledGrammar>& g,
                           const SampleResult& r) {
  std::vector<TokenId> text = r.tokens;
  EXPECT_EQ(r.finish, FinishReason::kStop);
  if (!text.empty() && text.back() == smollm().eos.front()) text.pop_back();
  grammar::GrammarMatcher m(g, smollm().eos);
  for (const TokenId id : text) EXPECT_TRUE(m.accept_token(id)) << "token " << id;
  EXPECT_TRUE(m.can_end());
  return smollm().tok.decode(text);
}

EngineRequest constrained(std::uint64_t id, const std::string& prompt, sampling::SamplingParams p,
                          std::shared_ptr<const grammar::CompiledGrammar> g, std::int32_t n = 1) {
  EngineRequest r = req(id, smollm().tok.encode(prompt, {.add_special = true}), std::move(p), n);
  r.grammar = std::move(g);
  return r;
}

TEST(EngineGrammar, GreedyAndSampledOutputsParse) {
  const auto g = compiled(kObject);
  auto e = make_engine(small_config());
  std::vector<std::shared_ptr<OutputChannel>> chans;
  sampling::SamplingParams greedy_p;
  greedy_p.temperature = 0;
  greedy_p.max_tokens = 200;
  chans.push_back(e->add_request(constrained(1, "Describe a person as JSON:", greedy_p, g)));
  for (int k = 0; k < 6; ++k) {
    sampling::SamplingParams p;
    p.temperature = 0.4f + 0.15f * static_cast<float>(k);
    p.seed = 100 + k;
    p.max_tokens = 200;
    chans.push_back(e->add_request(constrained(2 + k, "A user record:", p, g, k == 5 ? 3 : 1)));
  }
  e->run_until_idle();
  int parsed = 0;
  for (std::size_t c = 0; c < chans.size(); ++c) {
    const int n = c == chans.size() - 1 ? 3 : 1;
    for (const SampleResult& r : collect(chans[c]->drain(), n)) {
      if (r.finish == FinishReason::kLength) continue;  // ran out of tokens mid-document
      const std::string text = check_sentence(g, r);
      const auto j = nlohmann::json::parse(text, nullptr, false);
      ASSERT_FALSE(j.is_discarded()) << text;
      EXPECT_TRUE(j.at("name").is_string()) << text;
      EXPECT_TRUE(j.at("age").is_number_integer()) << text;
      EXPECT_TRUE(j.at("tags").is_array()) << text;
      ++parsed;
    }
  }
  EXPECT_GE(parsed, 6);
}

TEST(EngineGrammar, GreedyIsTheSameAloneBatchedAndSpeculated) {
  const auto g = compiled(R"(root ::= "[" [0-9]{1,3} ("," " "? [0-9]{1,3}){2,8} "]")");
  sampling::SamplingParams p;
  p.temperature = 0;
  p.max_tokens = 100;
  const std::string prompt = "Count: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13. Again as a list:";
  auto alone = make_engine(small_config());
  auto ch = alone->add_request(constrained(1, prompt, p, g));
  alone->run_until_idle();
  const SampleResult ref = collect(ch->drain(), 1)[0];
  EXPECT_EQ(ref.finish, FinishReason::kStop);  // complete: the last token is text, kept
  check_sentence(g, ref);

  EngineConfig sc = small_config();
  sc.speculative.method = spec::SpecMethod::kNgram;
  sc.speculative.num_speculative_tokens = 4;
  sc.speculative.prompt_lookup_min = 1;
  sc.speculative.prompt_lookup_max = 3;
  sc.speculative.adaptive = false;
  sc.speculative.max_batch_rows = 0;
  for (const bool speculate : {false, true}) {
    auto e = make_engine(speculate ? sc : small_config());
    std::vector<std::shared_ptr<OutputChannel>> chans;
    for (int i = 0; i < 4; ++i) chans.push_back(e->add_request(constrained(10 + i, prompt, p, g)));
    chans.push_back(e->add_request(req(20, random_prompt(3, 17), p)));  // a free neighbour
    e->run_until_idle();
    for (int i = 0; i < 4; ++i) {
      const SampleResult r = collect(chans[static_cast<std::size_t>(i)]->drain(), 1)[0];
      EXPECT_EQ(r.tokens, ref.tokens) << (speculate ? "speculated" : "batched");
      EXPECT_EQ(r.finish, ref.finish);
    }
  }
}

}  // namespace
}  // namespace folio::engine::testing
