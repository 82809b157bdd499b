// model/gemma3.cpp: the `gemma3` architecture family (Gemma 3 text models).
//
// Beyond the Llama tensors: QK-norm (attn_q_norm / attn_k_norm, one weight
// per head dimension shared by all heads, applied before RoPE) and sandwich
// norms (post_attention_norm and post_ffw_norm on each block's output before
// the residual add). llama.cpp's converter stores every Gemma norm weight as
// 1 + w, so the forward pass multiplies by the stored weight as it is (HF's
// loader subtracts the 1 that Gemma3RMSNorm adds back). The rest of what
// differs is in ArchTraits and ModelConfig: GeGLU, embeddings scaled by
// sqrt(n_embd), NeoX RoPE with base 10,000 on the sliding layers, the
// sliding-window pattern (config.cpp) and the tied output head.
#include <string>

#include "model/decoder_weights.h"

namespace folio::model {

DecoderWeights load_gemma3(const WeightLoader& loader, const ModelConfig& config) {
  DecoderWeights w = load_decoder(loader, config, /*qkv_bias=*/false);
  const std::size_t d = config.n_embd, hd = config.head_dim_k;
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    LayerWeights& l = w.layers[i];
    l.q_norm = loader.vector(layer_tensor(i, "attn_q_norm.weight"), hd);
    l.k_norm = loader.vector(layer_tensor(i, "attn_k_norm.weight"), hd);
    l.post_attn_norm = loader.vector(layer_tensor(i, "post_attention_norm.weight"), d);
    l.post_ffn_norm = loader.vector(layer_tensor(i, "post_ffw_norm.weight"), d);
  }
  return w;
}

}  // namespace folio::model
