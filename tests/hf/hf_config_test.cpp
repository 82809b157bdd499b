// config.json -> HfConfig -> GGUF metadata: the fields folio needs (old and
// transformers-5 spellings), the quantization configs it maps, and a clear
// refusal naming the field for everything that would change the arithmetic.
#include "hf/hf_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"

namespace folio::hf {
namespace {

using Json = nlohmann::json;

Json llama() {
  return Json::parse(R"({
    "architectures": ["LlamaForCausalLM"], "hidden_size": 576, "intermediate_size": 1536,
    "num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3,
    "max_position_embeddings": 8192, "rms_norm_eps": 1e-5, "rope_theta": 100000.0,
    "vocab_size": 49152, "tie_word_embeddings": true, "hidden_act": "silu"})");
}

void expect_error(const Json& j, const std::string& needle) {
  try {
    parse_config(j, "config.json");
    FAIL() << "accepted; expected an error containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(HfConfig, ReadsLlama) {
  const HfConfig c = parse_config(llama(), "config.json");
  EXPECT_EQ(c.arch, "llama");
  EXPECT_EQ(c.n_layer, 30u);
  EXPECT_EQ(c.head_dim, 64u);
  EXPECT_EQ(c.n_head_kv, 3u);
  EXPECT_EQ(c.rope_theta, 100000.0);
  EXPECT_TRUE(c.tie_embeddings);
  EXPECT_EQ(c.quant.method, QuantMethod::None);
  bool found = false;
  for (const auto& [k, v] : model_metadata(c, "m")) {
    if (k == "llama.attention.head_count_kv") {
      found = true;
      EXPECT_EQ(std::get<std::int64_t>(v.storage()), 3);
    }
  }
  EXPECT_TRUE(found);
}

TEST(HfConfig, ReadsTransformers5RopeParameters) {
  Json j = llama();
  j.erase("rope_theta");
  j["rope_parameters"] = {{"rope_theta", 5e5}, {"rope_type", "default"}};
  EXPECT_EQ(parse_config(j, "config.json").rope_theta, 5e5);
  j["rope_parameters"] = {{"rope_theta", 5e5}, {"rope_type", "linear"}, {"factor", 4.0}};
  EXPECT_EQ(parse_config(j, "config.json").rope_linear_factor, 4.0);
  j["rope_parameters"] = {{"rope_theta", 5e5}, {"rope_type", "llama3"}};
  expect_error(j, "\"llama3\" is not supported");
}

TEST(HfConfig, ReadsGemma3Layers) {
  Json j = Json::parse(R"({
    "architectures": ["Gemma3ForCausalLM"], "hidden_size": 640, "intermediate_size": 2048,
    "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256,
    "vocab_size": 262144, "sliding_window": 512, "hidden_activation": "gelu_pytorch_tanh",
    "layer_types": ["sliding_attention", "sliding_attention", "full_attention"],
    "rope_parameters": {"full_attention": {"rope_theta": 1000000.0, "rope_type": "default"},
                        "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}},
    "query_pre_attn_scalar": 256})");
  const HfConfig c = parse_config(j, "config.json");
  EXPECT_EQ(c.arch, "gemma3");
  EXPECT_EQ(c.sliding, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(c.rope_theta, 1e6);
  EXPECT_EQ(c.rope_theta_local, 1e4);
  EXPECT_TRUE(c.tie_embeddings);
  j["layer_types"] = {"sliding_attention"};
  expect_error(j, "layer_types");
}

TEST(HfConfig, ReadsGemma3WithVisionFromItsTextConfigOverTransformersDefaults) {
  // Gemma 3 4B's config.json as transformers writes it: only what differs from the defaults.
  const Json j = Json::parse(R"({
    "architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
    "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
                    "num_hidden_layers": 34, "sliding_window": 1024,
                    "rope_scaling": {"factor": 8.0, "rope_type": "linear"}},
    "vision_config": {"model_type": "siglip_vision_model"}})");
  const HfConfig c = parse_config(j, "config.json");
  EXPECT_TRUE(c.multimodal);
  EXPECT_EQ(c.arch, "gemma3");
  EXPECT_EQ(c.n_embd, 2560u);
  EXPECT_EQ(c.n_layer, 34u);
  EXPECT_EQ(c.n_head, 8u);  // defaults
  EXPECT_EQ(c.n_head_kv, 4u);
  EXPECT_EQ(c.head_dim, 256u);
  EXPECT_EQ(c.n_vocab, 262208u);
  EXPECT_EQ(c.rope_theta, 1e6);
  EXPECT_EQ(c.rope_linear_factor, 8.0);
  EXPECT_EQ(c.sliding_window, 1024u);
  EXPECT_EQ(c.sliding[5], false);
  EXPECT_EQ(c.sliding[4], true);
  Json bad = j;
  bad.erase("text_config");
  expect_error(bad, "'text_config'");
}

TEST(HfConfig, ReadsQuantizationConfigs) {
  Json j = llama();
  j["quantization_config"] = {{"quant_method", "gptq"}, {"bits", 4},
                              {"group_size", 128},      {"desc_act", true},
                              {"sym", false},           {"checkpoint_format", "gptq_v2"}};
  HfConfig c = parse_config(j, "config.json");
  EXPECT_EQ(c.quant.method, QuantMethod::Gptq);
  EXPECT_FALSE(c.quant.gptq_v1);
  EXPECT_EQ(c.quant.describe(), "GPTQ v2 4-bit g128 asym act-order");
  j["quantization_config"] = {{"quant_method", "awq"},
                              {"bits", 4},
                              {"group_size", 64},
                              {"zero_point", true},
                              {"version", "gemm"}};
  c = parse_config(j, "config.json");
  EXPECT_EQ(c.quant.method, QuantMethod::Awq);
  EXPECT_EQ(c.quant.group_size, 64);
  j["quantization_config"]["version"] = "gemv";
  expect_error(j, "'version'");
  j["quantization_config"] = {{"quant_method", "bitsandbytes"}};
  expect_error(j, "\"bitsandbytes\" is not supported");
  j["quantization_config"] = {{"quant_method", "gptq"}, {"bits", 3}, {"group_size", 128}};
  expect_error(j, "'bits'");
  j["quantization_config"] = {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 0}};
  expect_error(j, "'group_size'");
}

TEST(HfConfig, RefusesWhatWouldChangeTheArithmetic) {
  Json j = llama();
  j["architectures"] = {"MistralForCausalLM"};
  expect_error(j, "MistralForCausalLM is not supported");
  j = llama();
  j["hidden_act"] = "gelu";
  expect_error(j, "'hidden_act'");
  j = llama();
  j["num_key_value_heads"] = 4;
  expect_error(j, "'num_key_value_heads'");
  j = llama();
  j["attention_bias"] = true;
  expect_error(j, "'attention_bias'");
  j = llama();
  j["num_hidden_layers"] = -1;
  expect_error(j, "'num_hidden_layers'");
  j = llama();
  j.erase("hidden_size");
  expect_error(j, "'hidden_size' is missing");
  expect_error(Json::array(), "not a JSON object");
}

}  // namespace
}  // namespace folio::hf

namespace folio::hf {
namespace {

// Older AutoGPTQ / AutoAWQ checkpoints: the settings in a file of their own.
TEST(HfConfig, ReadsQuantizeConfigFilesOfOlderCheckpoints) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("folio_hf_config_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << llama().dump();
  EXPECT_EQ(parse_config(read_config_json(dir.string()), "c").quant.method, QuantMethod::None);
  std::ofstream(dir / "quantize_config.json")
      << R"({"bits": 4, "group_size": 128, "desc_act": false, "sym": true})";
  HfConfig c = parse_config(read_config_json(dir.string()), "c");
  EXPECT_EQ(c.quant.describe(), "GPTQ v1 4-bit g128 sym");
  fs::remove(dir / "quantize_config.json");
  std::ofstream(dir / "quant_config.json")
      << R"({"zero_point": true, "q_group_size": 64, "w_bit": 4, "version": "GEMM"})";
  c = parse_config(read_config_json(dir.string()), "c");
  EXPECT_EQ(c.quant.describe(), "AWQ gemm 4-bit g64 asym");
  std::ofstream(dir / "quant_config.json") << "[1]";
  EXPECT_THROW(read_config_json(dir.string()), Error);
  fs::remove(dir / "config.json");
  EXPECT_THROW(read_config_json(dir.string()), Error);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace folio::hf
