// hf/hf_config.cpp: config.json -> HfConfig -> GGUF metadata (see hf_config.h).
#include "hf/hf_config.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "base/error.h"
#include "hf/json_file.h"

namespace folio::hf {

namespace {

using Json = nlohmann::json;

constexpr std::uint64_t kMaxDim = 1u << 24;

class Reader {
 public:
  Reader(const Json& j, std::string what) : j_(j), what_(std::move(what)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& msg) const {
    throw Error(what_ + ": '" + field + "' " + msg);
  }
  const Json* find(const std::string& field) const {
    const auto it = j_.find(field);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  std::uint32_t u32(const std::string& field) const {
    const Json* v = find(field);
    if (v == nullptr) fail(field, "is missing");
    return u32_of(field, *v);
  }
  std::uint32_t u32_or(const std::string& field, std::uint32_t def) const {
    const Json* v = find(field);
    return v == nullptr ? def : u32_of(field, *v);
  }
  std::uint32_t u32_of(const std::string& field, const Json& v) const {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
        static_cast<std::uint64_t>(v.get<std::int64_t>()) > kMaxDim) {
      fail(field, "= " + v.dump() + " is not an integer between 0 and " + std::to_string(kMaxDim));
    }
    return static_cast<std::uint32_t>(v.get<std::int64_t>());
  }
  double num_or(const std::string& field, double def) const {
    const Json* v = find(field);
    if (v == nullptr) return def;
    if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < 0) {
      fail(field, "= " + v->dump() + " is not a non-negative number");
    }
    return v->get<double>();
  }
  bool bool_or(const std::string& field, bool def) const {
    const Json* v = find(field);
    if (v == nullptr) return def;
    if (!v->is_boolean()) fail(field, "= " + v->dump() + " is not true or false");
    return v->get<bool>();
  }
  std::string str_or(const std::string& field, const std::string& def) const {
    const Json* v = find(field);
    if (v == nullptr) return def;
    if (!v->is_string()) fail(field, "= " + v->dump() + " is not a string");
    return v->get<std::string>();
  }

 private:
  const Json& j_;
  std::string what_;
};

QuantConfig read_quant(const Json& q, const std::string& what) {
  const Reader r(q, what + " quantization_config");
  QuantConfig out;
  const std::string method = r.str_or("quant_method", "");
  if (method == "gptq") {
    out.method = QuantMethod::Gptq;
    const std::string fmt = r.str_or("checkpoint_format", "gptq");
    if (fmt == "gptq") {
      out.gptq_v1 = true;
    } else if (fmt == "gptq_v2") {
      out.gptq_v1 = false;
    } else {
      r.fail("checkpoint_format", "= \"" + fmt + "\" is not supported (gptq and gptq_v2 are)");
    }
    if (r.bool_or("is_marlin_format", false)) r.fail("is_marlin_format", "is true: not supported");
    out.desc_act = r.bool_or("desc_act", false);
    out.sym = r.bool_or("sym", true);
  } else if (method == "awq") {
    out.method = QuantMethod::Awq;
    const std::string version = r.str_or("version", "gemm");
    if (version != "gemm" && version != "GEMM") {
      r.fail("version", "= \"" + version + "\" is not supported (AutoAWQ's gemm is)");
    }
    if (!r.bool_or("zero_point", true)) r.fail("zero_point", "is false: not supported");
    out.sym = false;
  } else {
    r.fail("quant_method", "= \"" + method + "\" is not supported (gptq and awq are)");
  }
  const Json* bits = r.find("bits");
  if (bits == nullptr) bits = r.find("w_bit");
  if (bits == nullptr) r.fail("bits", "is missing");
  out.bits = static_cast<int>(r.u32_of("bits", *bits));
  if (out.bits != 4 && !(out.bits == 8 && out.method == QuantMethod::Gptq)) {
    r.fail("bits", "= " + std::to_string(out.bits) + " is not supported (4, and 8 for GPTQ)");
  }
  const Json* gs = r.find("group_size");
  if (gs == nullptr) gs = r.find("q_group_size");
  if (gs == nullptr) r.fail("group_size", "is missing");
  if (!gs->is_number_integer() || (gs->get<std::int64_t>() <= 0 && gs->get<std::int64_t>() != -1)) {
    r.fail("group_size", "= " + gs->dump() + " is not a positive integer or -1");
  }
  out.group_size = gs->get<std::int64_t>();
  for (const char* f : {"modules_to_not_convert", "modules_in_block_to_quantize"}) {
    const Json* m = r.find(f);
    if (m != nullptr && !(m->is_array() && m->empty())) {
      r.fail(f, "is set: per-module quantization lists are not supported yet");
    }
  }
  return out;
}

}  // namespace

std::string QuantConfig::describe() const {
  if (method == QuantMethod::None) return "none";
  std::string s = method == QuantMethod::Gptq ? (gptq_v1 ? "GPTQ v1" : "GPTQ v2") : "AWQ gemm";
  s += " " + std::to_string(bits) + "-bit ";
  s += group_size == -1 ? "per-channel" : "g" + std::to_string(group_size);
  s += sym ? " sym" : " asym";
  if (desc_act) s += " act-order";
  return s;
}

HfConfig parse_config(const Json& top, const std::string& what) {
  if (!top.is_object()) throw Error(what + " is not a JSON object");
  const Reader rt(top, what);
  HfConfig c;
  const Json* archs = rt.find("architectures");
  if (archs == nullptr || !archs->is_array() || archs->size() != 1 || !(*archs)[0].is_string()) {
    rt.fail("architectures", "must list exactly one architecture");
  }
  c.hf_arch = (*archs)[0].get<std::string>();
  const Json* body = &top;
  std::string body_what = what;
  Json text;  // Gemma 3 with vision: the language model's config over transformers' defaults
  if (c.hf_arch == "LlamaForCausalLM") {
    c.arch = "llama";
  } else if (c.hf_arch == "Qwen2ForCausalLM") {
    c.arch = "qwen2";
  } else if (c.hf_arch == "Gemma3ForCausalLM") {
    c.arch = "gemma3";
  } else if (c.hf_arch == "Gemma3ForConditionalGeneration") {
    c.arch = "gemma3";
    c.multimodal = true;
    const Json* tc = rt.find("text_config");
    if (tc == nullptr || !tc->is_object()) rt.fail("text_config", "is missing or not an object");
    // transformers writes only the fields that differ from Gemma3TextConfig's defaults.
    text = Json::parse(R"({"vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216,
        "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4,
        "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
        "max_position_embeddings": 131072, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
        "query_pre_attn_scalar": 256, "sliding_window": 4096, "rope_local_base_freq": 10000.0,
        "sliding_window_pattern": 6})");
    text.update(*tc);
    if (!text.contains("tie_word_embeddings") && top.contains("tie_word_embeddings")) {
      text["tie_word_embeddings"] = top["tie_word_embeddings"];
    }
    body = &text;
    body_what = what + " text_config";
  } else {
    rt.fail("architectures", "= " + c.hf_arch +
                                 " is not supported (LlamaForCausalLM, Qwen2ForCausalLM, "
                                 "Gemma3ForCausalLM, Gemma3ForConditionalGeneration are)");
  }
  const Reader r(*body, body_what);
  c.prefix = "model.";
  c.n_layer = r.u32("num_hidden_layers");
  c.n_embd = r.u32("hidden_size");
  c.n_ff = r.u32("intermediate_size");
  c.n_head = r.u32("num_attention_heads");
  c.n_head_kv = r.u32_or("num_key_value_heads", c.n_head);
  if (c.n_layer == 0 || c.n_embd == 0 || c.n_head == 0 || c.n_head_kv == 0) {
    throw Error(what + ": num_hidden_layers, hidden_size and the head counts must be positive");
  }
  if (c.n_head % c.n_head_kv != 0) {
    r.fail("num_key_value_heads", "= " + std::to_string(c.n_head_kv) +
                                      " does not divide num_attention_heads " +
                                      std::to_string(c.n_head));
  }
  c.head_dim = r.u32_or("head_dim", c.n_head == 0 ? 0 : c.n_embd / c.n_head);
  if (c.head_dim == 0 || (r.find("head_dim") == nullptr && c.n_embd % c.n_head != 0)) {
    r.fail("head_dim", "cannot be derived from hidden_size / num_attention_heads");
  }
  c.n_ctx = r.u32_or("max_position_embeddings", 2048);
  c.n_vocab = r.u32("vocab_size");
  c.rms_eps = r.num_or("rms_norm_eps", 1e-6);
  c.rope_theta = r.num_or("rope_theta", 10000.0);
  c.tie_embeddings = r.bool_or("tie_word_embeddings", c.arch == "gemma3");
  const std::string act = r.str_or("hidden_act", r.str_or("hidden_activation", "silu"));
  const std::string want_act = c.arch == "gemma3" ? "gelu_pytorch_tanh" : "silu";
  if (act != want_act)
    r.fail("hidden_act", "= \"" + act + "\": folio's " + c.arch + " uses " + want_act);
  // transformers >= 5 writes rope_parameters (per attention type for Gemma 3)
  // where older configs have rope_theta, rope_local_base_freq and rope_scaling.
  const auto rope_scaling = [&](const Json& rs, const std::string& field) {
    const Reader s(rs, what + " " + field);
    const std::string type = s.str_or("rope_type", s.str_or("type", "default"));
    if (type == "linear") {
      c.rope_linear_factor = s.num_or("factor", 0.0);
      if (!(c.rope_linear_factor > 0.0)) s.fail("factor", "must be positive");
    } else if (type != "default") {
      r.fail(field, "type \"" + type + "\" is not supported yet (default and linear are)");
    }
  };
  if (const Json* rs = r.find("rope_scaling")) rope_scaling(*rs, "rope_scaling");
  if (const Json* rp = r.find("rope_parameters")) {
    if (!rp->is_object()) r.fail("rope_parameters", "is not an object");
    const Json* full = rp;
    if (rp->contains("full_attention")) {
      full = &rp->at("full_attention");
      if (rp->contains("sliding_attention")) {
        const Reader s(rp->at("sliding_attention"), what + " rope_parameters.sliding_attention");
        c.rope_theta_local = s.num_or("rope_theta", 10000.0);
        if (s.str_or("rope_type", "default") != "default") {
          s.fail("rope_type", "is not supported for sliding layers (default is)");
        }
      }
    }
    c.rope_theta = Reader(*full, what + " rope_parameters").num_or("rope_theta", c.rope_theta);
    rope_scaling(*full, "rope_parameters");
  }
  if (r.bool_or("use_sliding_window", false)) {
    r.fail("use_sliding_window", "is true: Qwen2's sliding window is not supported");
  }
  for (const char* f : {"attention_bias", "mlp_bias"}) {
    if (c.arch == "llama" && r.bool_or(f, false))
      r.fail(f, "is true: llama biases are not supported");
  }
  if (c.arch == "gemma3") {
    c.sliding_window = r.u32_or("sliding_window", 0);
    if (c.rope_theta_local == 0.0) c.rope_theta_local = r.num_or("rope_local_base_freq", 10000.0);
    c.query_pre_attn_scalar = r.num_or("query_pre_attn_scalar", c.head_dim);
    if (!(c.query_pre_attn_scalar > 0.0)) r.fail("query_pre_attn_scalar", "must be positive");
    for (const char* f : {"attn_logit_softcapping", "final_logit_softcapping"}) {
      if (r.find(f) != nullptr) r.fail(f, "is set: Gemma 3 soft-capping is not supported");
    }
    c.sliding.assign(c.n_layer, false);
    if (const Json* lt = r.find("layer_types")) {
      if (!lt->is_array() || lt->size() != c.n_layer) {
        r.fail("layer_types", "must list one type per layer");
      }
      for (std::uint32_t i = 0; i < c.n_layer; ++i) {
        const Json& t = (*lt)[i];
        if (t == "sliding_attention") {
          c.sliding[i] = true;
        } else if (t != "full_attention") {
          r.fail("layer_types", "holds " + t.dump() + " (sliding_attention / full_attention)");
        }
      }
    } else {
      const std::uint32_t n = r.u32_or("sliding_window_pattern", 6);
      for (std::uint32_t i = 0; i < c.n_layer; ++i) c.sliding[i] = n != 0 && (i + 1) % n != 0;
    }
  }
  if (const Json* q = rt.find("quantization_config")) c.quant = read_quant(*q, what);
  return c;
}

std::string config_path(const std::string& dir) {
  return (std::filesystem::path(dir) / "config.json").string();
}

namespace {

constexpr std::uintmax_t kMaxConfigBytes = std::uintmax_t{64} << 20;

Json parse_file(const std::string& path) {
  auto f = read_json(path, kMaxConfigBytes);
  if (!f) throw Error("cannot read " + path);
  return std::move(f->root);
}

}  // namespace

Json read_config_json(const std::string& dir) {
  const std::string path = config_path(dir);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw Error("'" + dir + "' is not a model: cannot read " + path);
  }
  Json j = parse_file(path);
  // Older AutoGPTQ / AutoAWQ checkpoints keep the quantization settings in a
  // file of their own instead of config.json's quantization_config.
  if (j.is_object() && !j.contains("quantization_config")) {
    for (const auto& [file, method] :
         {std::pair{"quantize_config.json", "gptq"}, std::pair{"quant_config.json", "awq"}}) {
      const std::string q = (std::filesystem::path(dir) / file).string();
      if (!std::filesystem::is_regular_file(q, ec)) continue;
      Json qc = parse_file(q);
      if (!qc.contains("quant_method")) qc["quant_method"] = method;
      j["quantization_config"] = std::move(qc);
      break;
    }
  }
  return j;
}

MetaEntries model_metadata(const HfConfig& c, const std::string& name) {
  using gguf::MetaValue;
  using gguf::ValueType;
  MetaEntries m;
  const auto u32 = [](std::uint32_t v) { return MetaValue::integer(ValueType::UINT32, v); };
  const std::string& a = c.arch;
  m.emplace_back("general.architecture", MetaValue::string(a));
  m.emplace_back("general.name", MetaValue::string(name));
  m.emplace_back(a + ".block_count", u32(c.n_layer));
  m.emplace_back(a + ".context_length", u32(c.n_ctx));
  m.emplace_back(a + ".embedding_length", u32(c.n_embd));
  m.emplace_back(a + ".feed_forward_length", u32(c.n_ff));
  m.emplace_back(a + ".attention.head_count", u32(c.n_head));
  m.emplace_back(a + ".attention.head_count_kv", u32(c.n_head_kv));
  m.emplace_back(a + ".attention.key_length", u32(c.head_dim));
  m.emplace_back(a + ".attention.value_length", u32(c.head_dim));
  m.emplace_back(a + ".rope.dimension_count", u32(c.head_dim));
  m.emplace_back(a + ".rope.freq_base", MetaValue::f32(static_cast<float>(c.rope_theta)));
  m.emplace_back(a + ".attention.layer_norm_rms_epsilon",
                 MetaValue::f32(static_cast<float>(c.rms_eps)));
  m.emplace_back(a + ".vocab_size", u32(c.n_vocab));
  if (c.rope_linear_factor > 0.0) {
    m.emplace_back(a + ".rope.scaling.type", MetaValue::string("linear"));
    m.emplace_back(a + ".rope.scaling.factor",
                   MetaValue::f32(static_cast<float>(c.rope_linear_factor)));
  }
  if (a == "gemma3") {
    m.emplace_back(a + ".rope.freq_base_swa",
                   MetaValue::f32(static_cast<float>(c.rope_theta_local)));
    if (c.sliding_window != 0) {
      m.emplace_back(a + ".attention.sliding_window", u32(c.sliding_window));
      MetaValue::Array pattern;
      for (const bool s : c.sliding) pattern.push_back(MetaValue::boolean(s));
      m.emplace_back(a + ".attention.sliding_window_pattern",
                     MetaValue::array(ValueType::BOOL, std::move(pattern)));
    }
    m.emplace_back(a + ".attention.scale",
                   MetaValue::f32(static_cast<float>(1.0 / std::sqrt(c.query_pre_attn_scalar))));
  }
  if (c.quant.method != QuantMethod::None) {
    m.emplace_back("quantize.source", MetaValue::string(c.quant.describe()));
  }
  return m;
}

}  // namespace folio::hf
