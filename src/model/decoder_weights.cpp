// model/decoder_weights.cpp: loading the tensors shared by Llama-like models
// (GGUF names as written by llama.cpp's converter).
#include "model/decoder_weights.h"

#include <string>

#include "base/error.h"

namespace folio::model {

std::string layer_tensor(std::size_t layer, const char* name) {
  return "blk." + std::to_string(layer) + "." + name;
}

DecoderWeights load_decoder(const WeightLoader& ld, const ModelConfig& c, bool qkv_bias) {
  if (c.head_dim_k != c.head_dim_v) {
    throw Error("model '" + c.name + "': key and value head sizes differ (" +
                std::to_string(c.head_dim_k) + " vs " + std::to_string(c.head_dim_v) +
                "), which folio does not support yet");
  }
  const std::size_t d = c.n_embd, hd = c.head_dim_k;
  DecoderWeights w;
  w.tok_embd = ld.embedding("token_embd.weight", c.n_vocab, d);
  w.layers.reserve(c.n_layer);
  for (std::size_t i = 0; i < c.n_layer; ++i) {
    const LayerConfig& lc = c.layers[i];
    const std::size_t q_dim = lc.n_head * hd, kv_dim = lc.n_head_kv * hd;
    LayerWeights l;
    l.attn_norm = ld.vector(layer_tensor(i, "attn_norm.weight"), d);
    l.wq = ld.linear(layer_tensor(i, "attn_q.weight"), q_dim, d);
    l.wk = ld.linear(layer_tensor(i, "attn_k.weight"), kv_dim, d);
    l.wv = ld.linear(layer_tensor(i, "attn_v.weight"), kv_dim, d);
    if (qkv_bias) {
      l.wq.bias = ld.vector(layer_tensor(i, "attn_q.bias"), q_dim);
      l.wk.bias = ld.vector(layer_tensor(i, "attn_k.bias"), kv_dim);
      l.wv.bias = ld.vector(layer_tensor(i, "attn_v.bias"), kv_dim);
    }
    l.wo = ld.linear(layer_tensor(i, "attn_output.weight"), d, q_dim);
    l.ffn_norm = ld.vector(layer_tensor(i, "ffn_norm.weight"), d);
    l.w_gate = ld.linear(layer_tensor(i, "ffn_gate.weight"), lc.n_ff, d);
    l.w_up = ld.linear(layer_tensor(i, "ffn_up.weight"), lc.n_ff, d);
    l.w_down = ld.linear(layer_tensor(i, "ffn_down.weight"), d, lc.n_ff);
    w.layers.push_back(std::move(l));
  }
  w.output_norm = ld.vector("output_norm.weight", d);
  w.tied_output = !ld.has("output.weight");
  w.output = ld.linear(w.tied_output ? "token_embd.weight" : "output.weight", c.n_vocab, d);
  return w;
}

}  // namespace folio::model
