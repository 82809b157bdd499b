// model/llama.cpp: the `llama` architecture family (Llama 1/2/3, SmolLM2,
// Mistral 7B and others llama.cpp converts as "llama").
//
// RoPE rotates ADJACENT pairs (x[2i], x[2i+1]): llama.cpp's converter
// permuted the rows of attn_q/attn_k so that this equals HF's rotate_half
// (halves) on the original weights. HF transformers undoes the permutation
// when it loads a GGUF; the fidelity tests compare the two numerically.
#include <string>

#include "base/error.h"
#include "model/decoder_weights.h"

namespace folio::model {

DecoderWeights load_llama(const WeightLoader& loader, const ModelConfig& config) {
  if (loader.has("rope_freqs.weight")) {
    // Llama 3.1+ scales RoPE frequencies per dimension; the rope kernel does not take factors yet.
    throw Error("model '" + config.name +
                "' uses per-dimension RoPE frequency factors (rope_freqs.weight, Llama 3.1 "
                "style), which folio does not support yet");
  }
  if (loader.has("blk.0.ffn_gate_inp.weight")) {
    throw Error("model '" + config.name +
                "' is a mixture-of-experts model (ffn_gate_inp), which folio does not support yet");
  }
  return load_decoder(loader, config, /*qkv_bias=*/false);
}

}  // namespace folio::model
