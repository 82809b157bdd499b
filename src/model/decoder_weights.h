// model/decoder_weights.h: the tensors of a pre-norm decoder-only transformer
// (Llama family), and what distinguishes one architecture family's forward
// pass from another's. Each family's loader lives in its own file
// (llama.cpp, qwen2.cpp) and fills these structs from GGUF tensor names.
#pragma once

#include <string_view>
#include <vector>

#include "model/config.h"
#include "model/weights.h"

namespace folio::model {

// Per-family differences the shared forward pass honours.
struct ArchTraits {
  std::string_view family;  // "llama", "qwen2"
  bool rope_neox = false;   // rotate halves (NeoX) instead of adjacent pairs (GGUF llama)
};

struct LayerWeights {
  std::vector<float> attn_norm;  // [n_embd]
  Linear wq;                     // [n_head * head_dim x n_embd] (+ bias for qwen2)
  Linear wk;                     // [n_head_kv * head_dim x n_embd]
  Linear wv;                     // [n_head_kv * head_dim x n_embd]
  Linear wo;                     // [n_embd x n_head * head_dim]
  std::vector<float> ffn_norm;   // [n_embd]
  Linear w_gate;                 // [n_ff x n_embd]
  Linear w_up;                   // [n_ff x n_embd]
  Linear w_down;                 // [n_embd x n_ff]
};

struct DecoderWeights {
  Embedding tok_embd;  // [n_vocab x n_embd]
  std::vector<LayerWeights> layers;
  std::vector<float> output_norm;  // [n_embd]
  Linear output;                   // [n_vocab x n_embd]; token_embd when tied
  bool tied_output = false;
};

// Family loaders. Throw folio::Error naming a missing or misshapen tensor, or
// a feature of the file the forward pass does not implement yet.
DecoderWeights load_llama(const WeightLoader& loader, const ModelConfig& config);
DecoderWeights load_qwen2(const WeightLoader& loader, const ModelConfig& config);

// Shared by the family loaders: the tensors every Llama-like model has.
// `qkv_bias` also loads attn_{q,k,v}.bias.
DecoderWeights load_decoder(const WeightLoader& loader, const ModelConfig& config, bool qkv_bias);

}  // namespace folio::model
