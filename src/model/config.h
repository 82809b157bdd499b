// model/config.h: a model's hyper-parameters, read from GGUF metadata.
//
// Keys follow llama.cpp's convention "<arch>.<name>" where <arch> is
// general.architecture, so one reader serves every architecture; nothing is
// hard-coded per model except where the file format itself is silent (see
// sliding_window_pattern). Per-layer values (head counts, feed-forward width)
// may be stored either as one integer or as an array with one entry per layer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace folio::gguf {
class GgufFile;
}

namespace folio::model {

struct RopeScaling {
  std::string type = "none";           // <arch>.rope.scaling.type: none, linear, yarn, longrope
  double factor = 1.0;                 // <arch>.rope.scaling.factor (or legacy rope.scale_linear)
  std::uint64_t original_context = 0;  // <arch>.rope.scaling.original_context_length (0 = unset)
  double attn_factor = 1.0;            // <arch>.rope.scaling.attn_factor
  double beta_fast = 32.0;             // <arch>.rope.scaling.yarn_beta_fast (YaRN)
  double beta_slow = 1.0;              // <arch>.rope.scaling.yarn_beta_slow (YaRN)
};

// What differs between layers. Uniform models have identical entries.
struct LayerConfig {
  std::uint32_t n_head = 0;
  std::uint32_t n_head_kv = 0;
  std::uint32_t n_ff = 0;
  bool sliding = false;  // attends within sliding_window tokens only
};

struct ModelConfig {
  std::string arch;  // general.architecture
  std::string name;  // general.name ("" when absent)

  std::uint32_t n_layer = 0;      // block_count
  std::uint32_t n_embd = 0;       // embedding_length
  std::uint64_t n_ctx_train = 0;  // context_length
  std::uint32_t n_vocab = 0;      // size of tokenizer.ggml.tokens (else <arch>.vocab_size)

  // Layer 0's values; see `layers` for models where they vary.
  std::uint32_t n_head = 0;      // attention.head_count
  std::uint32_t n_head_kv = 0;   // attention.head_count_kv (default: n_head)
  std::uint32_t n_ff = 0;        // feed_forward_length
  std::uint32_t head_dim_k = 0;  // attention.key_length (default: n_embd / n_head)
  std::uint32_t head_dim_v = 0;  // attention.value_length (default: n_embd / n_head)

  std::uint32_t n_rot = 0;          // rope.dimension_count (default: head_dim_k)
  double rope_freq_base = 10000.0;  // rope.freq_base
  RopeScaling rope_scaling;
  // RoPE base of the sliding-window layers, which then take no context
  // scaling (HF's rope_parameters["sliding_attention"]): rope.freq_base_swa,
  // or 10,000 for gemma3 (its converter never wrote the key; llama.cpp and HF
  // use 10,000). 0: the sliding layers rotate as the others do.
  double rope_freq_base_swa = 0.0;

  // Attention scores are q.k * attention_scale (attention.scale; default
  // 1/sqrt(head_dim_k), which is Gemma 3's 1/sqrt(query_pre_attn_scalar)
  // for every size but 27B, whose files set the key).
  double attention_scale = 0.0;
  double attn_softcap = 0.0;   // attn_logit_softcapping: s = c tanh(s / c) (0: none)
  double final_softcap = 0.0;  // final_logit_softcapping on the logits (0: none)

  double norm_eps = 0.0;    // attention.layer_norm_rms_epsilon or layer_norm_epsilon
  bool norm_is_rms = true;  // which of the two the file gave

  std::uint32_t sliding_window = 0;          // attention.sliding_window (0: none)
  std::uint32_t sliding_window_pattern = 0;  // every Nth layer is global (0: all sliding)

  std::vector<LayerConfig> layers;  // n_layer entries

  // Number of layers attending within the sliding window.
  std::uint32_t n_sliding_layers() const;
  // K and V elements one token adds to the cache across all layers
  // (sum over layers of n_head_kv * (head_dim_k + head_dim_v)).
  std::uint64_t kv_elements_per_token() const;
  // K and V elements for one sequence of `tokens` tokens, with sliding-window
  // layers holding at most `sliding_window` tokens. Throws folio::Error on overflow.
  std::uint64_t kv_elements_for(std::uint64_t tokens) const;
};

// Reads the config of the architecture named by general.architecture. Throws
// folio::Error naming the key when a required one is missing, has the wrong
// type, or holds an impossible value (zero layers, heads not dividing ...).
ModelConfig from_gguf(const gguf::GgufFile& file);

}  // namespace folio::model
