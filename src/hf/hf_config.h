// hf/hf_config.h: a checkpoint's config.json read into what folio's model
// needs, and written out as the GGUF metadata llama.cpp's converter writes.
//
// Supported: LlamaForCausalLM (llama), Qwen2ForCausalLM (qwen2) and
// Gemma3ForCausalLM (gemma3), plain or quantized by GPTQ (checkpoint_format
// gptq / gptq_v2) or AWQ (version gemm). Anything in config.json that would
// change the model's arithmetic and folio does not implement (a rope_scaling
// type, Qwen2's sliding window, another quant_method) is refused with an
// error naming the field, never ignored.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gguf/writer.h"

namespace folio::hf {

using MetaEntries = std::vector<std::pair<std::string, gguf::MetaValue>>;

enum class QuantMethod { None, Gptq, Awq };

struct QuantConfig {
  QuantMethod method = QuantMethod::None;
  int bits = 0;
  std::int64_t group_size = -1;  // -1: one group per row
  bool desc_act = false;
  bool sym = true;
  bool gptq_v1 = true;           // checkpoint_format "gptq" (zeros stored minus one)
  std::string describe() const;  // "GPTQ v1 4-bit g128 sym act-order"
};

struct HfConfig {
  std::string hf_arch;           // "LlamaForCausalLM"
  std::string arch;              // GGUF's: "llama", "qwen2", "gemma3"
  std::string prefix;            // tensor name prefix of the decoder: "model." (see resolve_names)
  std::string head = "lm_head";  // the output head's module name
  bool multimodal = false;       // Gemma3ForConditionalGeneration: text model + vision tower
  std::uint32_t n_layer = 0, n_embd = 0, n_ff = 0, n_head = 0, n_head_kv = 0;
  std::uint32_t head_dim = 0, n_ctx = 0, n_vocab = 0;
  double rms_eps = 1e-6, rope_theta = 10000.0;
  double rope_theta_local = 0.0;       // gemma3 sliding layers
  std::uint32_t sliding_window = 0;    // gemma3
  std::vector<bool> sliding;           // per layer (gemma3)
  double query_pre_attn_scalar = 0.0;  // gemma3: scores scale 1/sqrt(this)
  double rope_linear_factor = 0.0;     // rope_scaling {"type": "linear"}
  bool tie_embeddings = false;
  QuantConfig quant;
};

// DIR/config.json as JSON (the tokenizer reads ids from it too), with the
// quantization settings of an older checkpoint's quantize_config.json (GPTQ)
// or quant_config.json (AWQ) as its quantization_config when it has none.
// Throws folio::Error when a file is missing or not JSON.
nlohmann::json read_config_json(const std::string& dir);
// Throws folio::Error naming `what` and the field.
HfConfig parse_config(const nlohmann::json& j, const std::string& what);
std::string config_path(const std::string& dir);

// general.* and <arch>.* metadata (not the tokenizer's).
MetaEntries model_metadata(const HfConfig& c, const std::string& name);

}  // namespace folio::hf
