// hf/hf_weights.h: a checkpoint's tensors renamed, reshaped and repacked into
// the GGUF tensors folio's model loads (llama.cpp's names and layouts).
//
//   model.embed_tokens.weight                 -> token_embd.weight
//   model.layers.N.self_attn.q_proj.*         -> blk.N.attn_q.*   (llama: rows permuted to
//                                                interleaved RoPE, as convert_hf_to_gguf does)
//   model.layers.N.mlp.down_proj.*            -> blk.N.ffn_down.*  ... and so on
//   Gemma 3's norms (x * (1 + w) in HF)       -> w + 1 (GGUF's x * w)
// Dense weights keep their dtype (F32 / F16 / BF16; F64 becomes F32), vectors
// become F32. Packed GPTQ / AWQ linears are unpacked and mapped onto blocks
// (packed_int.h). Every tensor of the checkpoint must find its place: one that
// does not (an unknown module, a nonzero bias folio's architecture lacks) is
// an error naming it, never dropped.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gguf/tensor_type.h"
#include "hf/hf_config.h"
#include "hf/safetensors.h"

namespace folio::hf {

struct GgufTensor {
  std::string name;
  std::vector<std::uint64_t> dims;  // ggml order (dims[0] contiguous)
  gguf::TensorType type = gguf::TensorType::F32;
  std::vector<std::uint8_t> data;
  // When not empty, the bytes instead of `data`: a dense tensor used as stored,
  // viewing the checkpoint's mapping (valid while the Checkpoint lives).
  std::span<const std::uint8_t> view;
};

struct ConvertedWeights {
  std::vector<GgufTensor> tensors;
  std::vector<std::string> notes;  // each repacked (inexact) linear and why
  std::size_t n_packed = 0;        // linears unpacked from GPTQ / AWQ
  std::size_t n_exact = 0;         // ... of which mapped without loss
};

// Sets c.prefix and c.head from the checkpoint's names where the layout
// varies: Gemma 3 with vision keeps its language model under
// "language_model.model." (transformers < 4.52) or "model.language_model.".
// Throws folio::Error when neither is there.
void resolve_names(const Checkpoint& ckpt, HfConfig& c);

// The vision tower and projector of a multimodal checkpoint: not loaded
// (folio serves text), said once in the notes.
bool is_vision_tensor(const std::string& name);

ConvertedWeights convert_weights(const Checkpoint& ckpt, const HfConfig& c);

// The seven linears of decoder layer `layer`, both names, and their shapes.
struct BlockLinear {
  std::string hf;                    // "model.layers.3.self_attn.q_proj"
  std::string gguf;                  // "blk.3.attn_q"
  std::uint64_t rows = 0, cols = 0;  // out, in features
  std::uint32_t rope_heads = 0;      // llama q/k: heads whose rows are permuted, else 0
  bool bias = false;                 // the architecture has a bias here (qwen2 q/k/v)
};
std::vector<BlockLinear> block_linears(const HfConfig& c, std::uint32_t layer);

}  // namespace folio::hf
