// hf/hf_weights.cpp: checkpoint tensors -> GGUF tensors (see hf_weights.h).
#include "hf/hf_weights.h"

#include <cstring>
#include <set>

#include "base/error.h"
#include "base/fp16.h"
#include "hf/packed_int.h"

namespace folio::hf {

namespace {

std::string shape_str(const std::vector<std::uint64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

float element_f32(const SafeTensor& t, std::uint64_t i) {
  switch (t.dtype) {
    case Dtype::F32: {
      float v = 0;
      std::memcpy(&v, t.data.data() + i * 4, 4);
      return v;
    }
    case Dtype::F64: {
      double v = 0;
      std::memcpy(&v, t.data.data() + i * 8, 8);
      return static_cast<float>(v);
    }
    case Dtype::F16:
    case Dtype::BF16: {
      std::uint16_t h = 0;
      std::memcpy(&h, t.data.data() + i * 2, 2);
      return t.dtype == Dtype::F16 ? fp16_to_f32(h) : bf16_to_f32(h);
    }
    default:
      throw Error("tensor '" + t.name + "' has dtype " + std::string(dtype_name(t.dtype)) +
                  ", not a float type");
  }
}

class Converter {
 public:
  Converter(const Checkpoint& ck, const HfConfig& c) : ck_(ck), c_(c) {}

  ConvertedWeights run() {
    const std::string p = c_.prefix;
    const bool gemma = c_.arch == "gemma3";
    const std::uint64_t d = c_.n_embd;
    dense(p + "embed_tokens.weight", "token_embd.weight", c_.n_vocab, d, 0);
    for (std::uint32_t i = 0; i < c_.n_layer; ++i) {
      const std::string h = p + "layers." + std::to_string(i) + ".";
      const std::string g = "blk." + std::to_string(i) + ".";
      for (const BlockLinear& l : block_linears(c_, i)) {
        linear(l.hf, l.gguf, l.rows, l.cols, l.rope_heads, l.bias);
      }
      vec(h + "input_layernorm.weight", g + "attn_norm.weight", d, gemma);
      if (gemma) {
        vec(h + "post_attention_layernorm.weight", g + "post_attention_norm.weight", d, true);
        vec(h + "pre_feedforward_layernorm.weight", g + "ffn_norm.weight", d, true);
        vec(h + "post_feedforward_layernorm.weight", g + "post_ffw_norm.weight", d, true);
        vec(h + "self_attn.q_norm.weight", g + "attn_q_norm.weight", c_.head_dim, true);
        vec(h + "self_attn.k_norm.weight", g + "attn_k_norm.weight", c_.head_dim, true);
      } else {
        vec(h + "post_attention_layernorm.weight", g + "ffn_norm.weight", d, false);
      }
    }
    vec(p + "norm.weight", "output_norm.weight", d, gemma);
    if (!c_.tie_embeddings) {
      linear(c_.head, "output", c_.n_vocab, d, 0, false);
    } else if (ck_.find(c_.head + ".weight") != nullptr) {
      used_.insert(c_.head + ".weight");  // tied: the embedding is the head
    }
    std::size_t n_vision = 0;
    for (const std::string& n : ck_.names()) {
      if (used_.count(n) != 0) continue;
      if (c_.multimodal && is_vision_tensor(n)) {
        ++n_vision;
        continue;
      }
      if (n.size() > 14 && n.ends_with("rotary_emb.inv_freq")) continue;  // derived, not a weight
      throw Error("checkpoint tensor '" + n + "' has no place in folio's " + c_.arch + " (" +
                  c_.hf_arch + "); refusing to ignore it");
    }
    if (n_vision != 0) {
      out_.notes.push_back("vision tower and projector: " + std::to_string(n_vision) +
                           " tensors not loaded (folio serves the language model)");
    }
    return std::move(out_);
  }

 private:
  const SafeTensor& take(const std::string& name) {
    used_.insert(name);
    return ck_.require(name);
  }

  static void check_shape(const SafeTensor& t, const std::vector<std::uint64_t>& want) {
    if (t.shape != want) {
      throw Error("tensor '" + t.name + "' has shape " + shape_str(t.shape) +
                  " but config.json implies " + shape_str(want));
    }
  }

  std::vector<float> floats(const SafeTensor& t) {
    std::vector<float> v(t.n_elements);
    for (std::uint64_t i = 0; i < t.n_elements; ++i) v[i] = element_f32(t, i);
    return v;
  }

  void vec(const std::string& hf, const std::string& name, std::uint64_t n, bool plus_one) {
    const SafeTensor& t = take(hf);
    check_shape(t, {n});
    std::vector<float> v = floats(t);
    if (plus_one)
      for (float& x : v) x += 1.0f;
    add_f32(name, std::move(v));
  }

  void add_f32(const std::string& name, std::vector<float> v) {
    GgufTensor g;
    g.name = name;
    g.dims = {v.size()};
    g.type = gguf::TensorType::F32;
    g.data.resize(v.size() * 4);
    std::memcpy(g.data.data(), v.data(), g.data.size());
    out_.tensors.push_back(std::move(g));
  }

  void dense(const std::string& hf, const std::string& name, std::uint64_t rows, std::uint64_t cols,
             std::uint32_t perm_heads) {
    const SafeTensor& t = take(hf);
    check_shape(t, {rows, cols});
    GgufTensor g;
    g.name = name;
    g.dims = {cols, rows};
    std::size_t elem = 0;
    switch (t.dtype) {
      case Dtype::F32:
        g.type = gguf::TensorType::F32, elem = 4;
        g.view = t.data;
        break;
      case Dtype::F16:
        g.type = gguf::TensorType::F16, elem = 2;
        g.view = t.data;
        break;
      case Dtype::BF16:
        g.type = gguf::TensorType::BF16, elem = 2;
        g.view = t.data;
        break;
      case Dtype::F64: {
        g.type = gguf::TensorType::F32, elem = 4;
        const std::vector<float> v = floats(t);
        g.data.resize(v.size() * 4);
        std::memcpy(g.data.data(), v.data(), g.data.size());
        break;
      }
      default:
        throw Error("tensor '" + t.name + "' has dtype " + std::string(dtype_name(t.dtype)) +
                    "; a weight must be F32, F16, BF16 or F64");
    }
    if (perm_heads != 0) {
      g.data = permute_rows(g.view.empty() ? std::span<const std::uint8_t>(g.data) : g.view,
                            cols * elem, llama_rope_permutation(rows, perm_heads));
      g.view = {};
    }
    out_.tensors.push_back(std::move(g));
  }

  static I32Matrix i32(const SafeTensor& t) {
    if (t.dtype != Dtype::I32 || t.shape.size() != 2) {
      throw Error("tensor '" + t.name + "' must be a 2-D I32 tensor, is " +
                  std::string(dtype_name(t.dtype)) + " " + shape_str(t.shape));
    }
    return {t.data, t.shape[0], t.shape[1]};
  }
  static F16Matrix f16(const SafeTensor& t) {
    if (t.dtype != Dtype::F16 || t.shape.size() != 2) {
      throw Error("tensor '" + t.name + "' must be a 2-D F16 tensor, is " +
                  std::string(dtype_name(t.dtype)) + " " + shape_str(t.shape));
    }
    return {t.data, t.shape[0], t.shape[1]};
  }

  void linear(const std::string& hf, const std::string& name, std::uint64_t rows,
              std::uint64_t cols, std::uint32_t perm_heads, bool bias_slot) {
    if (ck_.find(hf + ".weight") != nullptr) {
      dense(hf + ".weight", name + ".weight", rows, cols, perm_heads);
    } else if (ck_.find(hf + ".qweight") != nullptr) {
      packed(hf, name, rows, cols, perm_heads);
    } else {
      throw Error("the checkpoint has neither '" + hf + ".weight' nor '" + hf + ".qweight'");
    }
    const std::string b = hf + ".bias";
    if (ck_.find(b) == nullptr) {
      if (bias_slot)
        throw Error("the checkpoint has no tensor '" + b + "' (" + c_.hf_arch +
                    " has q/k/v biases)");
      return;
    }
    const SafeTensor& t = take(b);
    check_shape(t, {rows});
    std::vector<float> v = floats(t);
    if (!bias_slot) {
      for (const float x : v) {
        if (x != 0.0f) {
          throw Error("tensor '" + b + "' is a nonzero bias, which folio's " + c_.arch +
                      " does not have");
        }
      }
      return;  // an all-zero bias changes nothing
    }
    add_f32(name + ".bias", std::move(v));
  }

  void packed(const std::string& hf, const std::string& name, std::uint64_t rows,
              std::uint64_t cols, std::uint32_t perm_heads) {
    const QuantConfig& q = c_.quant;
    if (q.method == QuantMethod::None) {
      throw Error("tensor '" + hf +
                  ".qweight' is packed but config.json has no quantization_config");
    }
    GroupQuant gq;
    if (q.method == QuantMethod::Gptq) {
      std::span<const std::uint8_t> g_idx;
      if (const SafeTensor* gi = ck_.find(hf + ".g_idx")) {
        used_.insert(gi->name);
        if (gi->dtype != Dtype::I32 || gi->shape != std::vector<std::uint64_t>{cols}) {
          throw Error("tensor '" + gi->name + "' must be I32 [" + std::to_string(cols) + "], is " +
                      std::string(dtype_name(gi->dtype)) + " " + shape_str(gi->shape));
        }
        g_idx = gi->data;
      }
      gq = unpack_gptq(hf, q.bits, q.gptq_v1, cols, rows, i32(take(hf + ".qweight")),
                       i32(take(hf + ".qzeros")), f16(take(hf + ".scales")), g_idx, q.group_size);
    } else {
      gq = unpack_awq(hf, cols, rows, i32(take(hf + ".qweight")), i32(take(hf + ".qzeros")),
                      f16(take(hf + ".scales")), q.group_size);
    }
    MappedWeight m = map_to_blocks(gq);
    ++out_.n_packed;
    if (m.exact) {
      ++out_.n_exact;
    } else {
      out_.notes.push_back(name + ".weight: " + std::string(gguf::tensor_type_name(m.type)) + " (" +
                           m.why + ")");
    }
    if (perm_heads != 0) {
      m.data = permute_rows(m.data, m.data.size() / rows, llama_rope_permutation(rows, perm_heads));
    }
    GgufTensor g;
    g.name = name + ".weight";
    g.dims = {cols, rows};
    g.type = m.type;
    g.data = std::move(m.data);
    out_.tensors.push_back(std::move(g));
  }

  const Checkpoint& ck_;
  const HfConfig& c_;
  std::set<std::string> used_;
  ConvertedWeights out_;
};

}  // namespace

std::vector<BlockLinear> block_linears(const HfConfig& c, std::uint32_t layer) {
  const std::string h = c.prefix + "layers." + std::to_string(layer) + ".";
  const std::string g = "blk." + std::to_string(layer) + ".";
  const std::uint64_t d = c.n_embd;
  const std::uint64_t q_dim = std::uint64_t{c.n_head} * c.head_dim;
  const std::uint64_t kv_dim = std::uint64_t{c.n_head_kv} * c.head_dim;
  const bool llama = c.arch == "llama";
  const bool qkv_bias = c.arch == "qwen2";
  return {
      {h + "self_attn.q_proj", g + "attn_q", q_dim, d, llama ? c.n_head : 0, qkv_bias},
      {h + "self_attn.k_proj", g + "attn_k", kv_dim, d, llama ? c.n_head_kv : 0, qkv_bias},
      {h + "self_attn.v_proj", g + "attn_v", kv_dim, d, 0, qkv_bias},
      {h + "self_attn.o_proj", g + "attn_output", d, q_dim, 0, false},
      {h + "mlp.gate_proj", g + "ffn_gate", c.n_ff, d, 0, false},
      {h + "mlp.up_proj", g + "ffn_up", c.n_ff, d, 0, false},
      {h + "mlp.down_proj", g + "ffn_down", d, c.n_ff, 0, false},
  };
}

bool is_vision_tensor(const std::string& name) {
  for (const char* p : {"vision_tower.", "multi_modal_projector.", "model.vision_tower.",
                        "model.multi_modal_projector."}) {
    if (name.starts_with(p)) return true;
  }
  return false;
}

void resolve_names(const Checkpoint& ckpt, HfConfig& c) {
  if (!c.multimodal) return;
  if (ckpt.find("model.language_model.embed_tokens.weight") != nullptr) {
    c.prefix = "model.language_model.";
    c.head = "lm_head";
  } else if (ckpt.find("language_model.model.embed_tokens.weight") != nullptr) {
    c.prefix = "language_model.model.";
    c.head = "language_model.lm_head";
  } else {
    throw Error(c.hf_arch +
                " checkpoint: no language model embeddings (neither "
                "'model.language_model.embed_tokens.weight' nor "
                "'language_model.model.embed_tokens.weight')");
  }
}

ConvertedWeights convert_weights(const Checkpoint& ckpt, const HfConfig& c) {
  return Converter(ckpt, c).run();
}

}  // namespace folio::hf
