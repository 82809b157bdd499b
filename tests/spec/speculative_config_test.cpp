// tests/spec/speculative_config_test.cpp: --speculative-config parsing
// (vLLM's keys and defaults, errors naming the key) and the load rule.
#include "spec/speculative_config.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace folio::spec {
namespace {

std::string error_of(const std::string& json) {
  try {
    parse_speculative_config(json);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SpeculativeConfig, EmptyIsOff) {
  EXPECT_FALSE(parse_speculative_config("").enabled());
  EXPECT_EQ(parse_speculative_config("").describe(), "off");
}

TEST(SpeculativeConfig, NgramAsVllmSpellsIt) {
  const auto c = parse_speculative_config(
      R"({"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4,)"
      R"( "prompt_lookup_min": 2})");
  EXPECT_EQ(c.method, SpecMethod::kNgram);
  EXPECT_EQ(c.num_speculative_tokens, 4);
  EXPECT_EQ(c.prompt_lookup_min, 2);
  EXPECT_EQ(c.prompt_lookup_max, 4);
  EXPECT_EQ(c.max_batch_rows, kDefaultMaxBatchRows);
  EXPECT_EQ(c.disable_by_batch_size, 0);
}

TEST(SpeculativeConfig, LookupDefaultsFollowVllm) {
  auto c = parse_speculative_config(R"({"method": "ngram", "num_speculative_tokens": 3})");
  EXPECT_EQ(c.prompt_lookup_min, 5);
  EXPECT_EQ(c.prompt_lookup_max, 5);
  c = parse_speculative_config(
      R"({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 3})");
  EXPECT_EQ(c.prompt_lookup_min, 3);
  c = parse_speculative_config(
      R"({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 2})");
  EXPECT_EQ(c.prompt_lookup_max, 2);
  // The older spelling: the method in "model".
  c = parse_speculative_config(R"({"model": "[ngram]", "num_speculative_tokens": 2})");
  EXPECT_EQ(c.method, SpecMethod::kNgram);
}

TEST(SpeculativeConfig, ErrorsNameTheKey) {
  EXPECT_NE(error_of("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"num_speculative_tokens": 1e999})").find("number overflow"),
            std::string::npos);
  EXPECT_NE(error_of("[1]").find("expected a JSON object"), std::string::npos);
  EXPECT_NE(error_of(R"({"method": "ngram", "num_speculative_tokens": 2, "lookahead": 1})")
                .find("unknown key \"lookahead\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "ngram", "num_speculative_tokens": "4"})")
                .find("\"num_speculative_tokens\" must be an integer"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "ngram", "num_speculative_tokens": 0})")
                .find("\"num_speculative_tokens\" must be in [1, 16]"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "ngram"})").find("\"num_speculative_tokens\" is required"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"num_speculative_tokens": 2})").find("\"method\" is required"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "nram", "num_speculative_tokens": 2})")
                .find("unknown method \"nram\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "eagle", "num_speculative_tokens": 2})")
                .find("\"eagle\" is not implemented"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "ngram", "num_speculative_tokens": 2,)"
                     R"( "prompt_lookup_min": 4, "prompt_lookup_max": 2})")
                .find("\"prompt_lookup_min\" (4) must be <= \"prompt_lookup_max\" (2)"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "ngram", "num_speculative_tokens": 2, "model": "x.gguf"})")
                .find("\"model\" is not used"),
            std::string::npos);
  EXPECT_EQ(error_of("{").rfind("--speculative-config: ", 0), 0u);
}

TEST(SpeculativeConfig, LoadRuleShrinksDraftsAsTheBatchGrows) {
  SpeculativeConfig c;
  EXPECT_EQ(draft_tokens_per_request(c, 1), 0);  // off
  c.method = SpecMethod::kNgram;
  c.num_speculative_tokens = 4;
  c.max_batch_rows = 32;
  EXPECT_EQ(draft_tokens_per_request(c, 1), 4);
  EXPECT_EQ(draft_tokens_per_request(c, 6), 4);   // 6 x 5 = 30 rows
  EXPECT_EQ(draft_tokens_per_request(c, 8), 3);   // 8 x 4 = 32
  EXPECT_EQ(draft_tokens_per_request(c, 16), 1);  // 16 x 2 = 32
  EXPECT_EQ(draft_tokens_per_request(c, 17), 0);
  c.max_batch_rows = 0;
  EXPECT_EQ(draft_tokens_per_request(c, 100), 4);
  c.disable_by_batch_size = 8;
  EXPECT_EQ(draft_tokens_per_request(c, 7), 4);
  EXPECT_EQ(draft_tokens_per_request(c, 8), 0);
}

}  // namespace
}  // namespace folio::spec

namespace folio::spec {
namespace {

TEST(SpeculativeConfig, LayerSkipKeysAndLayerLists) {
  auto c = parse_speculative_config(
      R"({"method": "layer_skip", "num_speculative_tokens": 3, "num_layers": 6})");
  EXPECT_EQ(c.method, SpecMethod::kLayerSkip);
  EXPECT_TRUE(c.drafts_with_model());
  EXPECT_EQ(c.layer_selection, "ends");
  EXPECT_EQ(draft_layer_list(c, 10), (std::vector<std::size_t>{0, 1, 2, 7, 8, 9}));
  c.layer_selection = "first";
  EXPECT_EQ(draft_layer_list(c, 10), (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
  c.num_layers = 5;
  c.layer_selection = "ends";
  EXPECT_EQ(draft_layer_list(c, 10), (std::vector<std::size_t>{0, 1, 2, 8, 9}));
  c.num_layers = 0;  // the default
  EXPECT_EQ(draft_layer_list(c, 30).size(), 24u);
  c.num_layers = 11;
  EXPECT_THROW(draft_layer_list(c, 10), Error);
  EXPECT_NE(error_of(R"({"method": "layer_skip", "num_speculative_tokens": 3,)"
                     R"( "layer_selection": "middle"})")
                .find("\"layer_selection\" must be"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "ngram", "num_speculative_tokens": 3, "num_layers": 4})")
                .find("are for method \"layer_skip\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "layer_skip", "num_speculative_tokens": 3,)"
                     R"( "prompt_lookup_max": 4})")
                .find("are for method \"ngram\""),
            std::string::npos);
}

}  // namespace
}  // namespace folio::spec

namespace folio::spec {
namespace {

TEST(SpeculativeConfig, AdaptiveDraftLengthFollowsAcceptance) {
  // acceptance^j >= 0.3: 0.9 -> 11, 0.7 -> 3, 0.5 -> 1, 0.25 -> 0.
  EXPECT_EQ(adaptive_draft_length(1.0, 4), 4);
  EXPECT_EQ(adaptive_draft_length(0.9, 16), 11);
  EXPECT_EQ(adaptive_draft_length(0.7, 16), 3);
  EXPECT_EQ(adaptive_draft_length(0.5, 16), 1);
  EXPECT_EQ(adaptive_draft_length(0.25, 16), 0);
  // The row's cost as measured on a machine: at 0.1, acceptance^j >= 0.1.
  EXPECT_EQ(adaptive_draft_length(0.5, 16, {.row = 0.1}), 3);
  EXPECT_EQ(adaptive_draft_length(0.25, 16, {.row = 0.1}), 1);
  EXPECT_EQ(adaptive_draft_length(0.9, 16, {.row = 0.95}), 0);
  // A draft that costs 0.6 of a step: acceptance^j >= 0.9; at 0.8, none.
  EXPECT_EQ(adaptive_draft_length(0.95, 16, {.draft = 0.6}), 2);
  EXPECT_EQ(adaptive_draft_length(0.85, 16, {.draft = 0.6}), 0);
  EXPECT_EQ(adaptive_draft_length(1.0, 16, {.draft = 0.8}), 0);
  // A round pays when its expected tokens exceed its drafts' cost.
  EXPECT_TRUE(round_pays(0.9, 3, {.draft = 0}, 0));    // 2.44 > 0.9
  EXPECT_TRUE(round_pays(1.0, 4, {.draft = 0.2}, 0));  // 4 > 2.0
  // 4 < 3.88 + 0.67: a step's worth per token.
  EXPECT_FALSE(round_pays(1.0, 4, {.draft = 0.67}, 1.0));
  EXPECT_FALSE(round_pays(0.5, 1, {.draft = 0.25}, 0));  // 0.5 < 0.55
  AcceptanceEstimate costly;  // charged one spare forward a round until measured
  EXPECT_EQ(costly.draft_length(4, {.draft = 0.67}), 0);       // 4 < 3.88 + 0.67
  for (int i = 0; i < 40; ++i) costly.observe_forwards(4, 4);  // runs of K: no spare forward
  EXPECT_LT(costly.spare, 0.01);
  EXPECT_EQ(costly.draft_length(4, {.draft = 0.67}), 4);  // 4 > 3.88
  costly.observe_forwards(5, 4);  // draft_p_min stopped the run: one forward spare
  EXPECT_NEAR(costly.spare, 0.3, 0.01);
  EXPECT_EQ(costly.draft_length(4, {.draft = 0.67}), 0);  // 4 < 3.88 + 0.2
  EXPECT_EQ(costly.draft_length(4, {.draft = 0.1}), 4);
  // A drafter that costs about a step per token never probes: the probe's
  // catch-up (kProbeEvery rows) could not pay even if every draft held.
  EXPECT_FALSE(probe_pays(4, {.draft = 0.67}, 0.3, AcceptanceEstimate::kProbeEvery));
  for (int i = 0; i < 3 * AcceptanceEstimate::kProbeEvery; ++i)
    EXPECT_EQ(costly.draft_length(4, {.draft = 0.67}), 0);
  // A cheap one (a third of a step, rows at 0.15) whose estimate fell below
  // its cost probes every kProbeEvery steps: 4 > 4 x 0.48 + 0.33 x (1 + 1 +
  // 15 x 0.15).
  const DraftCosts cheap{.row = 0.15, .draft = 0.33};
  EXPECT_TRUE(probe_pays(4, cheap, 1.0, AcceptanceEstimate::kProbeEvery));
  EXPECT_TRUE(probe_pays(4, {.row = 0.9}, 5.0, 100));  // free drafts always may
  AcceptanceEstimate fell;
  for (int i = 0; i < 12; ++i) fell.observe(4, 0);
  int model_probes = 0;
  for (int i = 0; i < 2 * AcceptanceEstimate::kProbeEvery; ++i)
    model_probes += fell.draft_length(4, cheap);
  EXPECT_EQ(model_probes, 2 * 4);  // probes of the round it judged
  AcceptanceEstimate e;
  EXPECT_EQ(e.draft_length(4), 4);  // optimistic start
  for (int i = 0; i < 12; ++i) e.observe(4, 0);
  EXPECT_LT(e.value(), 0.05);
  int probes = 0;
  for (int i = 0; i < 2 * AcceptanceEstimate::kProbeEvery; ++i) probes += e.draft_length(4);
  EXPECT_EQ(probes, 2);  // one one-token probe per kProbeEvery steps
  for (int i = 0; i < 12; ++i) e.observe(4, 4);
  EXPECT_EQ(e.draft_length(4), 4);  // recovered
  // Tokens, not rounds: both sums decay by 0.7 a round, then the round's
  // 1 accepted of 2 judged adds to them.
  const double accepted = e.accepted, judged = e.judged;
  e.observe(4, 1);
  EXPECT_DOUBLE_EQ(e.value(), (0.7 * accepted + 1) / (0.7 * judged + 2));
  // One first-token miss after rounds of four accepted weighs one token
  // against theirs: the estimate stays high (an average of the rounds'
  // ratios would fall to 0.7), so a cheap model drafter keeps drafting.
  AcceptanceEstimate steady;
  for (int i = 0; i < 12; ++i) steady.observe(4, 4);
  steady.observe(4, 0);
  EXPECT_GT(steady.value(), 0.9);
  EXPECT_GE(steady.draft_length(4, cheap), 3);
  EXPECT_EQ(AcceptanceEstimate{}.value(), 1.0);  // optimistic start: kPriorTokens of as many
  EXPECT_FALSE(parse_speculative_config(
                   R"({"method": "ngram", "num_speculative_tokens": 2, "adaptive": false})")
                   .adaptive);
  EXPECT_NE(error_of(R"({"method": "ngram", "num_speculative_tokens": 2, "adaptive": 1})")
                .find("\"adaptive\" must be true or false"),
            std::string::npos);
  // row_cost: pinned, or measured (-1) when absent; out of range, of the
  // wrong type or beside "adaptive": false, refused.
  EXPECT_LT(
      parse_speculative_config(R"({"method": "ngram", "num_speculative_tokens": 2})").row_cost, 0);
  const auto pinned = parse_speculative_config(R"({"method": "ngram", "num_speculative_tokens": 2,)"
                                               R"( "row_cost": 0.15})");
  EXPECT_FLOAT_EQ(pinned.row_cost, 0.15f);
  EXPECT_NE(pinned.describe().find(" adaptive row_cost=0.15"), std::string::npos);
  EXPECT_NE(error_of(R"({"method": "ngram", "num_speculative_tokens": 2, "row_cost": 0})")
                .find("\"row_cost\" must be in [0.02, 2], got 0"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "ngram", "num_speculative_tokens": 2, "row_cost": "x"})")
                .find("\"row_cost\" must be a number"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "ngram", "num_speculative_tokens": 2, "row_cost": 0.2,)"
                     R"( "adaptive": false})")
                .find("\"adaptive\": false has no use for it"),
            std::string::npos);
}

}  // namespace
}  // namespace folio::spec

namespace folio::spec {
namespace {

TEST(SpeculativeConfig, DraftModelAsVllmSpellsIt) {
  const auto c = parse_speculative_config(
      R"({"method": "draft_model", "model": "draft.gguf", "num_speculative_tokens": 3,)"
      R"( "draft_p_min": 0.25})");
  EXPECT_EQ(c.method, SpecMethod::kDraftModel);
  EXPECT_TRUE(c.drafts_with_model());
  EXPECT_EQ(c.draft_model, "draft.gguf");
  EXPECT_EQ(c.num_speculative_tokens, 3);
  EXPECT_FLOAT_EQ(c.draft_p_min, 0.25f);
  EXPECT_EQ(c.describe(), "draft_model k=3 model=draft.gguf p_min=0.25 max_batch_rows=8 adaptive");
  EXPECT_LT(c.draft_cost, 0);  // resolved by the engine
  const auto costed = parse_speculative_config(
      R"({"method": "draft_model", "model": "d.gguf", "num_speculative_tokens": 2,)"
      R"( "draft_cost": 0.5})");
  EXPECT_FLOAT_EQ(costed.draft_cost, 0.5f);
  EXPECT_TRUE(costed.draft_cost_pinned);  // not measured
  EXPECT_NE(costed.describe().find(" cost=0.50 max_batch_rows"), std::string::npos);
  auto resolved = c;  // as the engine resolves it from the weight bytes: measured later
  resolved.draft_cost = 0.33f;
  EXPECT_FALSE(resolved.draft_cost_pinned);
  EXPECT_NE(resolved.describe().find(" cost=0.33 until measured "), std::string::npos);
  EXPECT_NE(error_of(R"({"method": "draft_model", "model": "d.gguf", "num_speculative_tokens": 2,)"
                     R"( "draft_cost": 5})")
                .find("\"draft_cost\" must be in [0, 4]"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "draft_model", "num_speculative_tokens": 3})")
                .find("method \"draft_model\" needs \"model\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "draft_model", "model": "", "num_speculative_tokens": 3})")
                .find("needs \"model\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "draft_model", "model": "d.gguf", "num_speculative_tokens": 3,)"
                     R"( "num_layers": 2})")
                .find("are for method \"layer_skip\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "ngram", "num_speculative_tokens": 3, "draft_p_min": 0.1})")
                .find("\"draft_p_min\" / \"draft_cost\" are for methods"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "draft_model", "model": 7, "num_speculative_tokens": 3})")
                .find("\"model\" must be a string"),
            std::string::npos);
}

}  // namespace
}  // namespace folio::spec
