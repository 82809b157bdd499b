// model/qwen2.cpp: the `qwen2` architecture family (Qwen1.5, Qwen2, Qwen2.5).
//
// Differs from llama in two ways: attn_q/k/v carry biases, and RoPE is NeoX
// style (rotate halves): the converter does not permute Q/K rows for qwen2.
#include "model/decoder_weights.h"

namespace folio::model {

DecoderWeights load_qwen2(const WeightLoader& loader, const ModelConfig& config) {
  return load_decoder(loader, config, /*qkv_bias=*/true);
}

}  // namespace folio::model
