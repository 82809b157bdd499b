// model::from_gguf: hyper-parameters read from "<arch>.*" metadata, on files made
// with GgufWriter (every optional key and every error) and on the real models.
// (Lives here because it is a GGUF-metadata test; it links folio_model.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "base/error.h"
#include "gguf/gguf_file.h"
#include "gguf/writer.h"
#include "model/config.h"

namespace folio::model {
namespace {

using gguf::GgufFile;
using gguf::GgufWriter;
using gguf::MetaValue;
using VT = gguf::ValueType;

MetaValue u32(std::int64_t v) {
  return MetaValue::integer(VT::UINT32, v);
}

// A minimal valid "toy" architecture; `extra` entries are appended.
std::vector<std::uint8_t> toy(const std::vector<std::pair<std::string, MetaValue>>& extra,
                              std::vector<std::string> drop = {}) {
  std::vector<std::pair<std::string, MetaValue>> kv = {
      {"general.architecture", MetaValue::string("toy")},
      {"toy.block_count", u32(4)},
      {"toy.embedding_length", u32(64)},
      {"toy.context_length", u32(256)},
      {"toy.feed_forward_length", u32(128)},
      {"toy.attention.head_count", u32(8)},
      {"toy.attention.layer_norm_rms_epsilon", MetaValue::f32(1e-5f)},
      {"tokenizer.ggml.tokens",
       MetaValue::array(VT::STRING, {MetaValue::string("a"), MetaValue::string("b")})},
  };
  GgufWriter w;
  for (auto& [k, v] : kv) {
    if (std::find(drop.begin(), drop.end(), k) == drop.end()) w.add(k, v);
  }
  for (auto& [k, v] : extra) w.add(k, v);
  return w.to_bytes();
}

ModelConfig config_of(const std::vector<std::uint8_t>& bytes) {
  return from_gguf(GgufFile::parse(bytes, "toy.gguf"));
}

void expect_error(const std::vector<std::uint8_t>& bytes, const std::string& needle) {
  try {
    (void)config_of(bytes);
    ADD_FAILURE() << "no error; expected: " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(ModelConfig, DefaultsFollowLlamaCpp) {
  const ModelConfig c = config_of(toy({}));
  EXPECT_EQ(c.arch, "toy");
  EXPECT_EQ(c.n_layer, 4u);
  EXPECT_EQ(c.n_head_kv, 8u);   // head_count_kv defaults to head_count
  EXPECT_EQ(c.head_dim_k, 8u);  // embedding / heads
  EXPECT_EQ(c.head_dim_v, 8u);
  EXPECT_EQ(c.n_rot, 8u);  // rope over the whole head
  EXPECT_EQ(c.rope_freq_base, 10000.0);
  EXPECT_EQ(c.rope_scaling.type, "none");
  EXPECT_EQ(c.n_vocab, 2u);
  EXPECT_EQ(c.sliding_window, 0u);
  EXPECT_EQ(c.n_sliding_layers(), 0u);
  ASSERT_EQ(c.layers.size(), 4u);
  EXPECT_EQ(c.kv_elements_per_token(), 4u * 8 * 16);
  EXPECT_EQ(c.kv_elements_for(100), 100u * 4 * 8 * 16);
}

TEST(ModelConfig, OptionalKeys) {
  const ModelConfig c = config_of(toy({
      {"toy.attention.head_count_kv", u32(2)},
      {"toy.attention.key_length", u32(16)},
      {"toy.attention.value_length", u32(12)},
      {"toy.rope.freq_base", MetaValue::f32(500000.0f)},
      {"toy.rope.dimension_count", u32(8)},
      {"toy.rope.scaling.type", MetaValue::string("yarn")},
      {"toy.rope.scaling.factor", MetaValue::f32(4.0f)},
      {"toy.rope.scaling.original_context_length", u32(64)},
  }));
  EXPECT_EQ(c.n_head_kv, 2u);
  EXPECT_EQ(c.head_dim_k, 16u);
  EXPECT_EQ(c.head_dim_v, 12u);
  EXPECT_EQ(c.n_rot, 8u);
  EXPECT_EQ(c.rope_freq_base, 500000.0);
  EXPECT_EQ(c.rope_scaling.type, "yarn");
  EXPECT_EQ(c.rope_scaling.factor, 4.0);
  EXPECT_EQ(c.rope_scaling.original_context, 64u);
  EXPECT_EQ(c.kv_elements_per_token(), 4u * 2 * (16 + 12));
}

TEST(ModelConfig, LegacyKeysAndLayerNorm) {
  const ModelConfig c =
      config_of(toy({{"toy.rope.scale_linear", MetaValue::f32(2.0f)},
                     {"toy.attention.layer_norm_epsilon", MetaValue::f32(1e-6f)},
                     {"toy.vocab_size", u32(99)}},
                    {"toy.attention.layer_norm_rms_epsilon", "tokenizer.ggml.tokens"}));
  EXPECT_EQ(c.rope_scaling.type, "linear");
  EXPECT_EQ(c.rope_scaling.factor, 2.0);
  EXPECT_FALSE(c.norm_is_rms);
  EXPECT_FLOAT_EQ(static_cast<float>(c.norm_eps), 1e-6f);
  EXPECT_EQ(c.n_vocab, 99u);  // no tokens array: <arch>.vocab_size
}

TEST(ModelConfig, PerLayerArrays) {
  const ModelConfig c = config_of(toy(
      {{"toy.attention.head_count_kv",
        MetaValue::array(VT::INT32,
                         {MetaValue::integer(VT::INT32, 1), MetaValue::integer(VT::INT32, 2),
                          MetaValue::integer(VT::INT32, 4), MetaValue::integer(VT::INT32, 0)})}}));
  ASSERT_EQ(c.layers.size(), 4u);
  EXPECT_EQ(c.layers[2].n_head_kv, 4u);
  EXPECT_EQ(c.layers[3].n_head_kv, 0u);
  EXPECT_EQ(c.kv_elements_per_token(), (1u + 2 + 4 + 0) * 16);
  expect_error(toy({{"toy.attention.head_count_kv", MetaValue::array(VT::UINT32, {u32(1)})}}),
               "'toy.attention.head_count_kv' has 1 per-layer entries for 4 layers");
}

TEST(ModelConfig, SlidingWindow) {
  // An explicit pattern: every 2nd layer global.
  ModelConfig c = config_of(toy({{"toy.attention.sliding_window", u32(32)},
                                 {"toy.attention.sliding_window_pattern", u32(2)}}));
  EXPECT_EQ(c.n_sliding_layers(), 2u);
  EXPECT_TRUE(c.layers[0].sliding);
  EXPECT_FALSE(c.layers[1].sliding);
  // 2 sliding layers keep 32 tokens, 2 global layers keep all 100.
  EXPECT_EQ(c.kv_elements_for(100), (2u * 32 + 2u * 100) * 8 * 16);
  EXPECT_EQ(c.kv_elements_for(10), 10u * 4 * 8 * 16);
  // Per-layer bools.
  c = config_of(
      toy({{"toy.attention.sliding_window", u32(32)},
           {"toy.attention.sliding_window_pattern",
            MetaValue::array(VT::BOOL, {MetaValue::boolean(false), MetaValue::boolean(true),
                                        MetaValue::boolean(true), MetaValue::boolean(true)})}}));
  EXPECT_EQ(c.n_sliding_layers(), 3u);
  EXPECT_FALSE(c.layers[0].sliding);
  // No pattern and an architecture without a known default: every layer slides.
  c = config_of(toy({{"toy.attention.sliding_window", u32(32)}}));
  EXPECT_EQ(c.n_sliding_layers(), 4u);
}

TEST(ModelConfig, ErrorsNameTheKey) {
  expect_error(toy({}, {"toy.block_count"}),
               "metadata 'toy.block_count' is missing; it is required for a 'toy' model");
  expect_error(toy({}, {"toy.attention.head_count"}), "'toy.attention.head_count' is missing");
  expect_error(toy({}, {"toy.feed_forward_length"}), "'toy.feed_forward_length' is missing");
  expect_error(toy({}, {"general.architecture"}), "lacks required metadata 'general.architecture'");
  expect_error(toy({}, {"toy.attention.layer_norm_rms_epsilon"}),
               "'toy.attention.layer_norm_rms_epsilon' is missing (and so is "
               "'toy.attention.layer_norm_epsilon')");
  expect_error(toy({}, {"tokenizer.ggml.tokens"}),
               "neither 'tokenizer.ggml.tokens' nor 'toy.vocab_size'");
  expect_error(toy({{"toy.attention.head_count_kv", u32(3)}}),
               "'toy.attention.head_count_kv' (layer 0: 3) does not divide the head count 8");
  expect_error(toy({{"toy.rope.dimension_count", u32(9)}}),
               "'toy.rope.dimension_count' = 9 exceeds the head size 8");
  expect_error(toy({{"toy.rope.scaling.factor", MetaValue::f32(0.0f)}}),
               "'toy.rope.scaling.factor' = 0.000000 must be positive");
  expect_error(toy({{"toy.rope.scaling.yarn_beta_fast", MetaValue::f32(0.5f)}}),
               "'toy.rope.scaling.yarn_beta_fast' and yarn_beta_slow must satisfy");
  expect_error(toy({{"toy.rope.scaling.yarn_ext_factor", MetaValue::f32(0.5f)}}),
               "'toy.rope.scaling.yarn_ext_factor' is set; this YaRN variant is not supported yet");
  auto w = [](std::int64_t n) { return toy({{"toy.block_count", u32(n)}}, {"toy.block_count"}); };
  expect_error(w(0), "'toy.block_count' = 0 is not between 1 and 65536");
  expect_error(w(4000000000), "'toy.block_count' = 4000000000 is not between 1 and 65536");
  expect_error(toy({{"toy.block_count", MetaValue::string("4")}}, {"toy.block_count"}),
               "'toy.block_count' has type string, expected an unsigned integer");
  expect_error(toy({{"toy.embedding_length", u32(60)}}, {"toy.embedding_length"}),
               "'toy.attention.key_length' is missing and embedding_length 60 is not a multiple of "
               "the head count 8");
  EXPECT_THROW((void)config_of(toy({})).kv_elements_for(~0ull), Error);  // overflows 64 bits
  // With every layer sliding the window caps the count, so the same length is fine.
  EXPECT_EQ(config_of(toy({{"toy.attention.sliding_window", u32(8)}})).kv_elements_for(~0ull),
            8u * 4 * 8 * 16);
}

std::string model_path(const std::string& file) {
  std::string p = std::string(FOLIO_SOURCE_DIR) + "/models/" + file;
  if (!std::filesystem::exists(p)) ADD_FAILURE() << p << " is missing: run scripts/setup";
  return p;
}

TEST(ModelConfig, SmolLM2) {
  const ModelConfig c = from_gguf(GgufFile::open(model_path("SmolLM2-135M-Instruct.Q4_1.gguf")));
  EXPECT_EQ(c.arch, "llama");
  EXPECT_EQ(c.n_layer, 30u);
  EXPECT_EQ(c.n_embd, 576u);
  EXPECT_EQ(c.n_ff, 1536u);
  EXPECT_EQ(c.n_head, 9u);
  EXPECT_EQ(c.n_head_kv, 3u);
  EXPECT_EQ(c.head_dim_k, 64u);
  EXPECT_EQ(c.n_rot, 64u);
  EXPECT_EQ(c.rope_freq_base, 100000.0);
  EXPECT_EQ(c.n_ctx_train, 8192u);
  EXPECT_EQ(c.n_vocab, 49152u);
  EXPECT_EQ(c.sliding_window, 0u);
  EXPECT_EQ(2 * c.kv_elements_per_token(), 23040u);  // f16 bytes per token: 2 x 30 x 3 x 64 x 2
}

TEST(ModelConfig, Gemma3) {
  const ModelConfig c = from_gguf(GgufFile::open(model_path("gemma-3-270m-q4_k_m.gguf")));
  EXPECT_EQ(c.arch, "gemma3");
  EXPECT_EQ(c.n_layer, 18u);
  EXPECT_EQ(c.n_head, 4u);
  EXPECT_EQ(c.n_head_kv, 1u);
  EXPECT_EQ(c.head_dim_k, 256u);  // key_length, not 640 / 4
  EXPECT_EQ(c.n_ctx_train, 32768u);
  EXPECT_EQ(c.n_vocab, 262144u);
  EXPECT_EQ(c.sliding_window, 512u);
  EXPECT_EQ(c.sliding_window_pattern, 6u);
  for (std::uint32_t i = 0; i < 18; ++i)
    EXPECT_EQ(c.layers[i].sliding, (i + 1) % 6 != 0) << "layer " << i;
  EXPECT_EQ(c.kv_elements_for(4096), (15u * 512 + 3u * 4096) * 512);
  // Not in the file: llama.cpp's and HF's defaults for Gemma 3.
  EXPECT_EQ(c.rope_freq_base, 1e6);
  EXPECT_EQ(c.rope_freq_base_swa, 10000.0);
  EXPECT_DOUBLE_EQ(c.attention_scale, 1.0 / 16);  // 1 / sqrt(query_pre_attn_scalar 256)
  EXPECT_EQ(c.attn_softcap, 0.0);
  EXPECT_EQ(c.final_softcap, 0.0);
}

TEST(ModelConfig, ScoreScaleSoftCapsAndSlidingRope) {
  ModelConfig c = config_of(toy({}));
  EXPECT_DOUBLE_EQ(c.attention_scale, 1.0 / std::sqrt(8.0));  // head_dim 64 / 8
  EXPECT_EQ(c.rope_freq_base_swa, 0.0);                       // sliding layers rotate as the others
  c = config_of(toy({{"toy.attention.scale", MetaValue::f32(0.125f)},
                     {"toy.attn_logit_softcapping", MetaValue::f32(50.0f)},
                     {"toy.final_logit_softcapping", MetaValue::f32(30.0f)},
                     {"toy.rope.freq_base_swa", MetaValue::f32(5000.0f)}}));
  EXPECT_EQ(c.attention_scale, 0.125);
  EXPECT_EQ(c.attn_softcap, 50.0);
  EXPECT_EQ(c.final_softcap, 30.0);
  EXPECT_EQ(c.rope_freq_base_swa, 5000.0);
  expect_error(toy({{"toy.attention.scale", MetaValue::f32(0.0f)}}), "'toy.attention.scale' is 0");
  expect_error(toy({{"toy.final_logit_softcapping", MetaValue::f32(-1.0f)}}),
               "'toy.final_logit_softcapping' = -1.000000 is invalid");
  expect_error(toy({{"toy.rope.freq_base_swa", MetaValue::f32(-1.0f)}}),
               "'toy.rope.freq_base_swa' = -1.000000 is negative");
}

}  // namespace
}  // namespace folio::model
