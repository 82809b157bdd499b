#include "model/config.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>
#include <utility>

#include "base/error.h"
#include "gguf/gguf_file.h"

namespace folio::model {

namespace {

// Far above any real model. They keep a hostile file from sizing `layers` at
// 2^32 and keep the per-token KV arithmetic below 2^50 (no overflow).
constexpr std::uint64_t kMaxLayers = 1u << 16;
constexpr std::uint32_t kMaxHeads = 1u << 16;
constexpr std::uint32_t kMaxHeadDim = 1u << 16;

// Reads "<arch>.<name>" keys from one file, with errors naming the key.
class Keys {
 public:
  Keys(const gguf::GgufFile& f, std::string arch) : f_(f), arch_(std::move(arch)) {}

  std::string key(std::string_view name) const { return arch_ + "." + std::string(name); }

  [[noreturn]] void fail(std::string_view name, const std::string& why) const {
    throw Error("GGUF file '" + f_.source() + "': metadata '" + key(name) + "' " + why);
  }

  std::optional<std::uint64_t> get_uint(std::string_view name) const {
    return f_.get_uint(key(name));
  }

  std::uint32_t require_u32(std::string_view name) const {
    const auto v = get_uint(name);
    if (!v) fail(name, "is missing; it is required for a '" + arch_ + "' model");
    return to_u32(name, *v);
  }

  std::uint32_t to_u32(std::string_view name, std::uint64_t v) const {
    if (v > 0xffffffffu) fail(name, "= " + std::to_string(v) + " is out of range");
    return static_cast<std::uint32_t>(v);
  }

  // A per-layer value stored either as one integer or as an array of n_layer integers.
  std::vector<std::uint32_t> per_layer(std::string_view name, std::uint32_t n_layer,
                                       std::optional<std::uint32_t> fallback) const {
    const gguf::Value* v = f_.find(key(name));
    if (v == nullptr) {
      if (!fallback) fail(name, "is missing; it is required for a '" + arch_ + "' model");
      return std::vector<std::uint32_t>(n_layer, *fallback);
    }
    if (v->type() != gguf::ValueType::ARRAY) {
      return std::vector<std::uint32_t>(n_layer, to_u32(name, v->as_uint(key(name))));
    }
    const auto& items = v->as_array(key(name));
    if (items.size() != n_layer) {
      fail(name, "has " + std::to_string(items.size()) + " per-layer entries for " +
                     std::to_string(n_layer) + " layers");
    }
    std::vector<std::uint32_t> out;
    out.reserve(n_layer);
    for (const gguf::Value& item : items) out.push_back(to_u32(name, item.as_uint(key(name))));
    return out;
  }

  const gguf::GgufFile& file() const { return f_; }
  const std::string& arch() const { return arch_; }

 private:
  const gguf::GgufFile& f_;
  std::string arch_;
};

// Layers whose attention is global when the file does not say (llama.cpp
// hard-codes these per architecture, because the converters never wrote them):
// every Nth layer is global, the others use the sliding window.
std::uint32_t default_sliding_pattern(std::string_view arch) {
  if (arch == "gemma3") return 6;  // 5 local : 1 global (Gemma 3 report)
  if (arch == "gemma2") return 2;  // alternating local / global
  if (arch == "cohere2") return 4;
  return 0;  // sliding_window alone (e.g. Mistral v0.1): every layer slides
}

void read_sliding(const Keys& k, ModelConfig& c) {
  c.sliding_window =
      k.to_u32("attention.sliding_window", k.get_uint("attention.sliding_window").value_or(0));
  if (c.sliding_window == 0) return;
  const gguf::Value* p = k.file().find(k.key("attention.sliding_window_pattern"));
  if (p != nullptr && p->type() == gguf::ValueType::ARRAY) {
    // One bool per layer: true = sliding.
    const auto& items = p->as_array(k.key("attention.sliding_window_pattern"));
    if (items.size() != c.n_layer) {
      k.fail("attention.sliding_window_pattern", "has " + std::to_string(items.size()) +
                                                     " entries for " + std::to_string(c.n_layer) +
                                                     " layers");
    }
    for (std::size_t i = 0; i < items.size(); ++i) {
      c.layers[i].sliding = items[i].as_bool(k.key("attention.sliding_window_pattern"));
    }
    return;
  }
  c.sliding_window_pattern = p != nullptr
                                 ? k.to_u32("attention.sliding_window_pattern",
                                            p->as_uint(k.key("attention.sliding_window_pattern")))
                                 : default_sliding_pattern(k.arch());
  const std::uint32_t n = c.sliding_window_pattern;
  for (std::uint32_t i = 0; i < c.n_layer; ++i) c.layers[i].sliding = n == 0 || i % n < n - 1;
}

void read_rope(const Keys& k, ModelConfig& c) {
  const gguf::GgufFile& f = k.file();
  c.rope_freq_base = f.get_float(k.key("rope.freq_base")).value_or(10000.0);
  c.n_rot =
      k.to_u32("rope.dimension_count", k.get_uint("rope.dimension_count").value_or(c.head_dim_k));
  if (c.n_rot > c.head_dim_k) {
    k.fail("rope.dimension_count", "= " + std::to_string(c.n_rot) + " exceeds the head size " +
                                       std::to_string(c.head_dim_k));
  }
  RopeScaling& s = c.rope_scaling;
  if (const auto t = f.get_string(k.key("rope.scaling.type"))) s.type = std::string(*t);
  if (const auto v = f.get_float(k.key("rope.scaling.factor"))) {
    s.factor = *v;
  } else if (const auto lin = f.get_float(k.key("rope.scale_linear"))) {  // older converters
    s.factor = *lin;
    s.type = "linear";
  }
  c.rope_freq_base_swa =
      f.get_float(k.key("rope.freq_base_swa")).value_or(k.arch() == "gemma3" ? 10000.0 : 0.0);
  if (!(c.rope_freq_base_swa >= 0.0))
    k.fail("rope.freq_base_swa", "= " + std::to_string(c.rope_freq_base_swa) + " is negative");
  s.original_context = k.get_uint("rope.scaling.original_context_length").value_or(0);
  s.attn_factor = f.get_float(k.key("rope.scaling.attn_factor")).value_or(1.0);
  s.beta_fast = f.get_float(k.key("rope.scaling.yarn_beta_fast")).value_or(32.0);
  s.beta_slow = f.get_float(k.key("rope.scaling.yarn_beta_slow")).value_or(1.0);
  if (!(s.factor > 0.0))
    k.fail("rope.scaling.factor", "= " + std::to_string(s.factor) + " must be positive");
  if (!(s.beta_fast > s.beta_slow && s.beta_slow > 0.0)) {
    k.fail("rope.scaling.yarn_beta_fast",
           "and yarn_beta_slow must satisfy beta_fast > beta_slow > 0");
  }
  // YaRN variants folio does not implement: refuse rather than compute another function.
  for (const char* key : {"rope.scaling.yarn_ext_factor", "rope.scaling.yarn_attn_factor",
                          "rope.scaling.yarn_log_multiplier"}) {
    if (f.find(k.key(key)) != nullptr)
      k.fail(key, "is set; this YaRN variant is not supported yet");
  }
}

void read_heads(const Keys& k, ModelConfig& c) {
  const std::vector<std::uint32_t> head =
      k.per_layer("attention.head_count", c.n_layer, std::nullopt);
  const std::vector<std::uint32_t> head_kv =
      k.per_layer("attention.head_count_kv", c.n_layer, head[0]);
  const std::vector<std::uint32_t> ff = k.per_layer("feed_forward_length", c.n_layer, std::nullopt);
  c.layers.resize(c.n_layer);
  for (std::uint32_t i = 0; i < c.n_layer; ++i) {
    if (head[i] > kMaxHeads) {
      k.fail("attention.head_count", "= " + std::to_string(head[i]) + " is implausibly large");
    }
    // Grouped-query attention: each KV head serves n_head / n_head_kv query heads.
    if (head_kv[i] > head[i] || (head_kv[i] != 0 && head[i] % head_kv[i] != 0)) {
      k.fail("attention.head_count_kv",
             "(layer " + std::to_string(i) + ": " + std::to_string(head_kv[i]) +
                 ") does not divide the head count " + std::to_string(head[i]));
    }
    c.layers[i] = {head[i], head_kv[i], ff[i], false};
  }
  c.n_head = head[0];
  c.n_head_kv = head_kv[0];
  c.n_ff = ff[0];
  if (c.n_head == 0 &&
      (!k.get_uint("attention.key_length") || !k.get_uint("attention.value_length"))) {
    k.fail("attention.head_count", "is 0, so the head size cannot be derived");
  }
  // Head sizes default to n_embd / n_head (llama.cpp's rule).
  const std::uint32_t def = c.n_head == 0 ? 0 : c.n_embd / c.n_head;
  if (c.n_head != 0 && c.n_embd % c.n_head != 0 && !k.get_uint("attention.key_length")) {
    k.fail("attention.key_length", "is missing and embedding_length " + std::to_string(c.n_embd) +
                                       " is not a multiple of the head count " +
                                       std::to_string(c.n_head));
  }
  c.head_dim_k = k.to_u32("attention.key_length", k.get_uint("attention.key_length").value_or(def));
  c.head_dim_v =
      k.to_u32("attention.value_length", k.get_uint("attention.value_length").value_or(def));
  if (c.head_dim_k > kMaxHeadDim || c.head_dim_v > kMaxHeadDim) {
    k.fail("attention.key_length", "/ value_length (" + std::to_string(c.head_dim_k) + " / " +
                                       std::to_string(c.head_dim_v) + ") is implausibly large");
  }
}

// Score scale and soft-capping (Gemma 2 writes the caps; absent means none).
void read_scores(const Keys& k, ModelConfig& c) {
  const gguf::GgufFile& f = k.file();
  c.attention_scale = f.get_float(k.key("attention.scale"))
                          .value_or(1.0 / std::sqrt(static_cast<double>(c.head_dim_k)));
  c.attn_softcap = f.get_float(k.key("attn_logit_softcapping")).value_or(0.0);
  c.final_softcap = f.get_float(k.key("final_logit_softcapping")).value_or(0.0);
  for (const auto& [name, v] : {std::pair{"attention.scale", c.attention_scale},
                                {"attn_logit_softcapping", c.attn_softcap},
                                {"final_logit_softcapping", c.final_softcap}}) {
    if (!(v >= 0.0) || !std::isfinite(v)) k.fail(name, "= " + std::to_string(v) + " is invalid");
  }
  if (c.attention_scale == 0.0) k.fail("attention.scale", "is 0");
}

std::uint32_t read_vocab_size(const Keys& k) {
  if (const auto* tokens = k.file().get_array("tokenizer.ggml.tokens")) {
    return k.to_u32("vocab_size", tokens->size());
  }
  if (const auto n = k.get_uint("vocab_size")) return k.to_u32("vocab_size", *n);
  throw Error("GGUF file '" + k.file().source() + "' has neither 'tokenizer.ggml.tokens' nor '" +
              k.key("vocab_size") + "', so the vocabulary size is unknown");
}

}  // namespace

std::uint32_t ModelConfig::n_sliding_layers() const {
  if (sliding_window == 0) return 0;
  return static_cast<std::uint32_t>(
      std::count_if(layers.begin(), layers.end(), [](const LayerConfig& l) { return l.sliding; }));
}

std::uint64_t ModelConfig::kv_elements_per_token() const {
  std::uint64_t n = 0;
  for (const LayerConfig& l : layers)
    n += std::uint64_t{l.n_head_kv} * (std::uint64_t{head_dim_k} + head_dim_v);
  return n;
}

std::uint64_t ModelConfig::kv_elements_for(std::uint64_t tokens) const {
  std::uint64_t n = 0;
  for (const LayerConfig& l : layers) {
    const std::uint64_t kept = (l.sliding && sliding_window != 0)
                                   ? std::min<std::uint64_t>(tokens, sliding_window)
                                   : tokens;
    const std::uint64_t per_token =
        std::uint64_t{l.n_head_kv} * (std::uint64_t{head_dim_k} + head_dim_v);
    std::uint64_t layer = 0;
    if (__builtin_mul_overflow(per_token, kept, &layer) || __builtin_add_overflow(n, layer, &n)) {
      throw Error("the KV cache for " + std::to_string(tokens) + " tokens overflows 64 bits");
    }
  }
  return n;
}

ModelConfig from_gguf(const gguf::GgufFile& file) {
  ModelConfig c;
  c.arch = std::string(file.require_string("general.architecture"));
  if (c.arch.empty())
    throw Error("GGUF file '" + file.source() + "': 'general.architecture' is empty");
  c.name = std::string(file.get_string("general.name").value_or(""));
  const Keys k(file, c.arch);

  c.n_layer = k.require_u32("block_count");
  if (c.n_layer == 0 || c.n_layer > kMaxLayers) {
    k.fail("block_count", "= " + std::to_string(c.n_layer) + " is not between 1 and " +
                              std::to_string(kMaxLayers));
  }
  c.n_embd = k.require_u32("embedding_length");
  if (c.n_embd == 0) k.fail("embedding_length", "is 0");
  c.n_ctx_train = k.require_u32("context_length");
  read_heads(k, c);
  read_rope(k, c);

  if (const auto eps = file.get_float(k.key("attention.layer_norm_rms_epsilon"))) {
    c.norm_eps = *eps;
  } else if (const auto eps2 = file.get_float(k.key("attention.layer_norm_epsilon"))) {
    c.norm_eps = *eps2;
    c.norm_is_rms = false;
  } else {
    k.fail(
        "attention.layer_norm_rms_epsilon",
        "is missing (and so is '" + k.key("attention.layer_norm_epsilon") + "'); one is required");
  }
  read_sliding(k, c);
  read_scores(k, c);
  c.n_vocab = read_vocab_size(k);
  return c;
}

}  // namespace folio::model
