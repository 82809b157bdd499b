// model/decoder_weights.h: the tensors of a pre-norm decoder-only transformer
// (Llama family), and what distinguishes one architecture family's forward
// pass from another's. Each family's loader lives in its own file
// (llama.cpp, qwen2.cpp, gemma3.cpp) and fills these structs from GGUF
// tensor names. Optional tensors (Gemma's QK-norm and sandwich norms) are
// empty vectors when a family has none; the forward pass applies what is there.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/config.h"
#include "model/weights.h"

namespace folio::model {

enum class FfnActivation {
  kSilu,      // SwiGLU: silu(gate) * up (Llama, Qwen2)
  kGeluTanh,  // GeGLU: gelu_tanh(gate) * up (Gemma)
};

// Per-family differences the shared forward pass honours.
struct ArchTraits {
  std::string_view family;  // "llama", "qwen2", "gemma3"
  bool rope_neox = false;   // rotate halves (NeoX) instead of adjacent pairs (GGUF llama)
  FfnActivation ffn = FfnActivation::kSilu;
  bool embed_scale = false;  // embeddings times f32(sqrt(n_embd)) (Gemma)
};

struct LayerWeights {
  std::vector<float> attn_norm;       // [n_embd]
  Linear wq;                          // [n_head * head_dim x n_embd] (+ bias for qwen2)
  Linear wk;                          // [n_head_kv * head_dim x n_embd]
  Linear wv;                          // [n_head_kv * head_dim x n_embd]
  Linear wo;                          // [n_embd x n_head * head_dim]
  std::vector<float> q_norm;          // [head_dim] per-head RMSNorm of q before RoPE, or empty
  std::vector<float> k_norm;          // [head_dim] the same for k
  std::vector<float> post_attn_norm;  // [n_embd] norm of the attention output, or empty
  std::vector<float> ffn_norm;        // [n_embd]
  Linear w_gate;                      // [n_ff x n_embd]
  Linear w_up;                        // [n_ff x n_embd]
  Linear w_down;                      // [n_embd x n_ff]
  std::vector<float> post_ffn_norm;   // [n_embd] norm of the FFN output, or empty
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
DecoderWeights load_gemma3(const WeightLoader& loader, const ModelConfig& config);

// "blk.<layer>.<name>": the GGUF name of a layer's tensor.
std::string layer_tensor(std::size_t layer, const char* name);

// Shared by the family loaders: the tensors every Llama-like model has.
// `qkv_bias` also loads attn_{q,k,v}.bias.
DecoderWeights load_decoder(const WeightLoader& loader, const ModelConfig& config, bool qkv_bias);

}  // namespace folio::model
