// `folio info [MODEL]`: what a GGUF file holds and what serving it would cost.
//
// One JSON report is computed (architecture, tokenizer, tensor types,
// parameter and weight totals, KV-cache sizes); `--json` prints it, otherwise
// it is rendered as text. KV bytes per token = sum over layers of
// n_head_kv head rows of K and of V, each of the size the cache stores
// (kernels::kv_head_bytes, the row-size formula the caches store with: f16
// 2 bytes a value; int8 1 byte a value plus an f16 scale per 32), for the
// dtypes --kv-cache-dtype serves.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "base/error.h"
#include "base/huge_page_arena.h"
#include "base/timer.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "cli/deployment_plan.h"
#include "cli/engine_flags.h"
#include "cli/model_file.h"
#include "cli/model_template.h"
#include "engine/engine_config.h"
#include "engine/paged_model_runner.h"
#include "gguf/gguf_file.h"
#include "kernels/cpu_features.h"
#include "kernels/kv_row.h"
#include "kv/kv_groups.h"
#include "kv/kv_sizing.h"
#include "model/config.h"
#include "model/model.h"
#include "spec/draft_vocabulary.h"
#include "spec/speculative_config.h"
#include "tokenizer/vocab.h"

namespace folio::cli {

namespace {

using Json = nlohmann::ordered_json;

struct InfoArgs {
  std::string model;
  std::uint64_t max_model_len = 0;  // 0: the model's context length
  std::uint64_t num_seqs = 1;
  bool json = false;
  bool metadata = false;
  std::string speculative_config;  // validated against the model and described
  int attention_window = 0;        // --attention-window: the paged figures under that policy
  int attention_sinks = -1;
  // `folio serve`'s flags of the same names: the paged figures and the
  // deployment plan are for a server started with them.
  std::int32_t max_num_batched_tokens = engine::EngineConfig{}.max_num_batched_tokens;
  std::int32_t block_size = engine::EngineConfig{}.block_size;
  std::string kv_cache_dtype = "auto";
  std::string kv_cache_memory;  // "": what num_seqs sequences of max_model_len need
  int threads = 0;              // 0: this machine's hardware threads
};

// The KV cache dtypes the engine serves, by their --kv-cache-dtype names.
constexpr kernels::KvDtype kKvDtypes[] = {kernels::KvDtype::kF16, kernels::KvDtype::kI8,
                                          kernels::KvDtype::kI4};

// Bytes of `elements` K/V values, which are whole (K row, V row) pairs of heads.
std::uint64_t kv_bytes(std::uint64_t elements, const model::ModelConfig& c, kernels::KvDtype d) {
  const std::uint64_t pair = std::uint64_t{c.head_dim_k} + c.head_dim_v;
  const std::uint64_t pair_bytes =
      kernels::kv_head_bytes(d, c.head_dim_k) + kernels::kv_head_bytes(d, c.head_dim_v);
  return elements / pair * pair_bytes;  // elements < 2^60 and pair_bytes <= 2 pair: no overflow
}

std::string human(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", bytes, kUnits[u]);
  return buf;
}

// A metadata value as JSON; long arrays are summarised (a vocabulary has 10^5 entries).
Json value_json(const gguf::Value& v) {
  using VT = gguf::ValueType;
  switch (v.type()) {
    case VT::ARRAY: {
      const auto& items = v.as_array("value");
      if (items.size() > 16) {
        return Json{{"array_of", gguf::value_type_name(v.elem_type())}, {"length", items.size()}};
      }
      Json out = Json::array();
      for (const auto& item : items) out.push_back(value_json(item));
      return out;
    }
    case VT::STRING:
      return std::string(v.as_string("value"));
    case VT::BOOL:
      return v.as_bool("value");
    case VT::FLOAT32:
    case VT::FLOAT64:
      return v.as_float("value");
    case VT::UINT64:
      return v.as_uint("value");
    default:
      return v.as_int("value");
  }
}

Json model_json(const model::ModelConfig& c) {
  Json m = {{"architecture", c.arch},
            {"name", c.name},
            {"block_count", c.n_layer},
            {"embedding_length", c.n_embd},
            {"feed_forward_length", c.n_ff},
            {"context_length", c.n_ctx_train},
            {"vocab_size", c.n_vocab},
            {"head_count", c.n_head},
            {"head_count_kv", c.n_head_kv},
            {"head_dim_k", c.head_dim_k},
            {"head_dim_v", c.head_dim_v},
            {"rope",
             {{"freq_base", c.rope_freq_base},
              {"dimension_count", c.n_rot},
              {"scaling",
               {{"type", c.rope_scaling.type},
                {"factor", c.rope_scaling.factor},
                {"original_context_length", c.rope_scaling.original_context}}}}},
            {"norm", c.norm_is_rms ? "rms" : "layer"},
            {"norm_eps", c.norm_eps},
            {"sliding_window", c.sliding_window},
            {"sliding_window_pattern", c.sliding_window_pattern},
            {"sliding_layers", c.n_sliding_layers()},
            {"attention_scale", c.attention_scale},
            {"attn_logit_softcapping", c.attn_softcap},
            {"final_logit_softcapping", c.final_softcap}};
  if (c.rope_freq_base_swa > 0.0) m["rope"]["freq_base_swa"] = c.rope_freq_base_swa;
  const bool uniform =
      std::all_of(c.layers.begin(), c.layers.end(), [&](const model::LayerConfig& l) {
        return l.n_head == c.n_head && l.n_head_kv == c.n_head_kv && l.n_ff == c.n_ff;
      });
  if (!uniform) {
    Json layers = Json::array();
    for (const auto& l : c.layers) {
      layers.push_back({{"head_count", l.n_head},
                        {"head_count_kv", l.n_head_kv},
                        {"feed_forward_length", l.n_ff}});
    }
    m["layers"] = layers;
  }
  return m;
}

Json tokenizer_json(const gguf::GgufFile& f) {
  const auto* tokens = f.get_array("tokenizer.ggml.tokens");
  Json t = {{"model", std::string(f.get_string("tokenizer.ggml.model").value_or(""))},
            {"pre", std::string(f.get_string("tokenizer.ggml.pre").value_or(""))},
            {"vocab_size", tokens ? tokens->size() : 0}};
  // llama.cpp's key names ("seperator" is spelt so in the format).
  static constexpr std::pair<const char*, const char*> kSpecial[] = {
      {"bos", "bos"},     {"eos", "eos"},     {"eot", "eot"},
      {"unk", "unknown"}, {"pad", "padding"}, {"sep", "seperator"}};
  Json special = Json::object();
  for (const auto& [name, key] : kSpecial) {
    if (auto id = f.get_uint(std::string("tokenizer.ggml.") + key + "_token_id"))
      special[name] = *id;
  }
  t["special"] = special;
  if (auto b = f.get_bool("tokenizer.ggml.add_bos_token")) t["add_bos"] = *b;
  t["chat_template"] = model_chat_template_origin(f);
  return t;
}

Json tensors_json(const gguf::GgufFile& f) {
  std::uint64_t params = 0, bytes = 0;
  std::map<std::string, Json> by_type;
  for (const auto& t : f.tensors()) {
    params += t.n_elements;
    bytes += t.n_bytes;
    Json& e = by_type[std::string(gguf::tensor_type_name(t.type))];
    if (e.is_null()) e = {{"count", 0}, {"parameters", 0}, {"bytes", 0}};
    e["count"] = e["count"].get<std::uint64_t>() + 1;
    e["parameters"] = e["parameters"].get<std::uint64_t>() + t.n_elements;
    e["bytes"] = e["bytes"].get<std::uint64_t>() + t.n_bytes;
  }
  Json types = Json::object();
  for (auto& [name, e] : by_type) types[name] = e;
  return {{"count", f.tensors().size()},
          {"parameters", params},
          {"weight_bytes", bytes},
          {"bits_per_weight",
           params ? 8.0 * static_cast<double>(bytes) / static_cast<double>(params) : 0.0},
          {"types", types}};
}

// The most blocks one sequence of `len` positions holds in the engine's
// paged pool (kv/kv_groups.h) at the block size and step budget of `a`.
std::int64_t blocks_per_seq(const model::ModelConfig& c, std::uint64_t len, const InfoArgs& a,
                            const AttentionWindow& policy) {
  const kv::KvGroupLayout layout = engine::PagedKvCache::layout(c);
  return kv::max_blocks_per_seq(layout.groups, a.block_size, static_cast<std::int64_t>(len),
                                a.max_num_batched_tokens, policy);
}

// What the engine's paged pool holds (kv/kv_groups.h) at the block size and
// step budget of `a` (the engine's defaults unless given): blocks of one
// layer group, a sliding group holding its window plus one step;
// `every_position_*` is the same pool keeping every position of every
// layer. Under a sink + window `policy` every group it narrows holds its
// sinks and window plus one step.
Json paged_json(const model::ModelConfig& c, std::uint64_t len, const InfoArgs& a,
                const AttentionWindow& policy) {
  const std::uint64_t num_seqs = a.num_seqs;
  const std::int32_t bs = a.block_size;
  const kv::KvGroupLayout layout = engine::PagedKvCache::layout(c);
  const auto blocks = blocks_per_seq(c, len, a, policy);
  const auto all = kv::every_position_blocks(layout.groups, bs, static_cast<std::int64_t>(len));
  Json groups = Json::array();
  for (const kv::KvGroup& g : layout.groups) groups.push_back(g.window);
  Json per_block = Json::object(), per_seq = Json::object(), per_seq_all = Json::object();
  for (kernels::KvDtype d : kKvDtypes) {
    const auto b = static_cast<std::uint64_t>(engine::PagedKvCache::bytes_per_block(c, bs, d));
    per_block[kernels::kv_dtype_name(d)] = b;
    per_seq[kernels::kv_dtype_name(d)] = b * static_cast<std::uint64_t>(blocks) * num_seqs;
    per_seq_all[kernels::kv_dtype_name(d)] = b * static_cast<std::uint64_t>(all) * num_seqs;
  }
  return {{"block_size", bs},
          {"max_num_batched_tokens", a.max_num_batched_tokens},
          {"group_windows", groups},
          {"layers_per_block", layout.slots},
          {"bytes_per_block", per_block},
          {"blocks_per_seq", blocks},
          {"bytes", per_seq},
          {"every_position_blocks_per_seq", all},
          {"every_position_bytes", per_seq_all},
          {"attention_window", {{"window", policy.window}, {"sinks", policy.sinks}}}};
}

Json kv_json(const model::ModelConfig& c, const InfoArgs& a, const AttentionWindow& policy) {
  const std::uint64_t len = a.max_model_len ? a.max_model_len : c.n_ctx_train;
  const std::uint64_t per_token = c.kv_elements_per_token();
  // Flag ranges keep len * num_seqs * per_token below 2^31 * 2^16 * 2^49: checked anyway.
  std::uint64_t full = 0, windowed = 0;
  if (__builtin_mul_overflow(per_token, len, &full) ||
      __builtin_mul_overflow(full, a.num_seqs, &full) ||
      __builtin_mul_overflow(c.kv_elements_for(len), a.num_seqs, &windowed) ||
      full >= (1ull << 60)) {
    throw Error("the KV cache for --max-model-len " + std::to_string(len) + " x --num-seqs " +
                std::to_string(a.num_seqs) + " is too large to compute");
  }
  Json per = Json::object(), total = Json::object(), win = Json::object();
  for (kernels::KvDtype d : kKvDtypes) {
    per[kernels::kv_dtype_name(d)] = kv_bytes(per_token, c, d);
    total[kernels::kv_dtype_name(d)] = kv_bytes(full, c, d);
    win[kernels::kv_dtype_name(d)] = kv_bytes(windowed, c, d);
  }
  Json kv = {{"elements_per_token", per_token},
             {"bytes_per_token", per},
             {"max_model_len", len},
             {"num_seqs", a.num_seqs},
             {"full_bytes", total}};
  if (c.n_sliding_layers() > 0) {
    // Once a sequence is longer than the window, only the global layers grow.
    std::uint64_t global = 0;
    for (const auto& l : c.layers) {
      if (!l.sliding)
        global += std::uint64_t{l.n_head_kv} * (std::uint64_t{c.head_dim_k} + c.head_dim_v);
    }
    Json beyond = Json::object();
    for (kernels::KvDtype d : kKvDtypes) beyond[kernels::kv_dtype_name(d)] = kv_bytes(global, c, d);
    kv["bytes_per_token_beyond_window"] = beyond;
    kv["windowed_bytes"] = win;
  }
  kv["paged"] = paged_json(c, len, a, policy);
  return kv;
}

// What loading the file for the fast path does: which matrices the kernels
// repack into their SIMD layout, how many bytes that copies, how long it takes.
Json load_json(const gguf::GgufFile& f) {
  try {
    const double t0 = monotonic_seconds();
    const model::Model m = model::Model::load(f, {});
    const double seconds = monotonic_seconds() - t0;
    const kernels::Isa isa = kernels::active_isa();
    return {{"seconds", seconds},
            {"isa", std::string(kernels::isa_name(isa))},
            {"isa_detected", std::string(kernels::isa_name(kernels::detected_isa()))},
            {"cpu_features", kernels::cpu_feature_summary()},
            {"kernels", std::string(kernels::matmul_kernels(isa))},
            // How far ahead the SIMD kernels request the weights they stream (none: scalar).
            {"stream_ahead_bytes",
             isa == kernels::Isa::kScalar ? std::size_t{0} : kernels::stream_ahead()},
            {"repacked_matrices", m.repacked()},
            {"repacked_bytes", m.repacked_bytes()},
            // The mode the panels' huge-page advice meets ("unused": an ASan build's heap).
            {"huge_pages", huge_paged_chunks() ? transparent_huge_pages() : "unused"},
            {"layout",
             m.repacked() > 0 ? "8-row panels (Q4_0/Q4_1/Q5_0/Q5_1/Q8_0/Q4_K/Q6_K)" : "none"}};
  } catch (const Error& e) {
    return {{"error", e.what()}};
  }
}

// What one `folio serve` replica with the flags of `a` asks of a container
// orchestrator (cli/deployment_plan.h): the memory of its parts, their sum
// as the memory request and the kernel threads as the CPU request, and the
// serve flags that keep it within them (--kv-cache-memory, -t). Needs the
// load (`load`: load_json's report) for the repacked bytes.
Json deployment_json(const gguf::GgufFile& f, const model::ModelConfig& c, const InfoArgs& a,
                     const AttentionWindow& policy, const Json& load) {
  if (load.contains("error")) return {{"error", "the model does not load: no plan"}};
  const std::uint64_t len = a.max_model_len ? a.max_model_len : c.n_ctx_train;
  const kernels::KvDtype dtype = kernels::parse_kv_dtype(a.kv_cache_dtype);
  const auto per_block =
      static_cast<std::uint64_t>(engine::PagedKvCache::bytes_per_block(c, a.block_size, dtype));
  const std::uint64_t kv_bytes =
      a.kv_cache_memory.empty()
          ? per_block * static_cast<std::uint64_t>(blocks_per_seq(c, len, a, policy)) * a.num_seqs
          : static_cast<std::uint64_t>(kv::parse_byte_size(a.kv_cache_memory));
  DeploymentInputs in;
  in.file_bytes = f.file_size();
  in.repacked_bytes = load["repacked_bytes"].get<std::uint64_t>();
  in.kv_cache_bytes = kv_bytes;
  in.vocab_size = c.n_vocab;
  in.n_embd = c.n_embd;
  in.n_ff = c.n_ff;
  in.q_dim = std::uint64_t{c.n_head} * c.head_dim_k;
  for (const model::LayerConfig& l : c.layers) {
    in.n_ff = std::max<std::uint64_t>(in.n_ff, l.n_ff);
    in.q_dim = std::max<std::uint64_t>(in.q_dim, std::uint64_t{l.n_head} * c.head_dim_k);
  }
  in.max_num_batched_tokens = static_cast<std::uint64_t>(a.max_num_batched_tokens);
  in.threads = a.threads > 0 ? static_cast<std::uint64_t>(a.threads)
                             : std::max(1u, std::thread::hardware_concurrency());
  const DeploymentPlan plan = plan_deployment(in);
  return {{"serve_flags",
           {{"max_model_len", len},
            {"max_num_seqs", a.num_seqs},
            {"max_num_batched_tokens", a.max_num_batched_tokens},
            {"block_size", a.block_size},
            {"kv_cache_dtype", kernels::kv_dtype_name(dtype)},
            {"kv_cache_memory", kv_bytes},
            {"threads", in.threads}}},
          {"memory_bytes",
           {{"weights_mapped", in.file_bytes},
            {"weights_repacked", in.repacked_bytes},
            {"kv_cache", kv_bytes},
            {"runtime", plan.runtime_bytes}}},
          {"memory_request_bytes", plan.memory_bytes},
          {"cpu_request", plan.cpu},
          {"repacked_at_isa", load["isa"]}};
}

[[noreturn]] void draft_error(const std::string& path, const Error& e) {
  throw Error("--speculative-config: draft model " + path + ": " + e.what());
}

// method draft_model: the draft file `d` checked against the target `f` (one
// vocabulary; thrown otherwise: the user's error) and what it adds per token.
Json draft_json(const gguf::GgufFile& f, const gguf::GgufFile& d,
                const spec::SpeculativeConfig& sc) {
  spec::check_draft_vocabulary(tokenizer::Vocab::from_gguf(f), tokenizer::Vocab::from_gguf(d));
  const model::ModelConfig c = model::from_gguf(d);
  Json per = Json::object();
  for (kernels::KvDtype t : kKvDtypes)
    per[kernels::kv_dtype_name(t)] = kv_bytes(c.kv_elements_per_token(), c, t);
  return {{"path", sc.draft_model},   {"architecture", c.arch},
          {"name", c.name},           {"n_layer", c.n_layer},
          {"n_vocab", c.n_vocab},     {"vocabulary", "same as the target"},
          {"kv_bytes_per_token", per}};
}

// layer_skip / draft_model resolved as the engine resolves them (num_layers,
// draft_cost), with the target (and the draft file `d`, for draft_model)
// loaded; `sc` unchanged when the target does not load (load_json reports why).
spec::SpeculativeConfig resolved(const gguf::GgufFile& f, const spec::SpeculativeConfig& sc,
                                 const gguf::GgufFile* d) {
  std::optional<model::Model> target;
  try {
    target.emplace(model::Model::load(f, {}));
  } catch (const Error&) {
    return sc;
  }
  std::optional<model::Model> draft;
  if (d != nullptr) {
    try {
      draft.emplace(model::Model::load(*d, {}));
    } catch (const Error& e) {
      draft_error(sc.draft_model, e);
    }
  }
  engine::PagedModelRunner runner(*target, 1);
  return runner.configure_speculation(sc, draft ? &*draft : nullptr);
}

Json build_report(const gguf::GgufFile& f, const InfoArgs& a) {
  // A bad --speculative-config is the user's error (thrown), not the file's.
  spec::SpeculativeConfig sc = spec::parse_speculative_config(a.speculative_config);
  // Flag errors come before the file's.
  const AttentionWindow policy = to_attention_window(a.attention_window, a.attention_sinks);
  kernels::parse_kv_dtype(a.kv_cache_dtype);  // throws naming the value
  if (!a.kv_cache_memory.empty() && kv::parse_byte_size(a.kv_cache_memory) <= 0)
    throw Error("--kv-cache-memory must be positive");
  std::int32_t n_layer = 0;
  Json r = {{"file",
             {{"path", f.source()},
              {"version", f.version()},
              {"size_bytes", f.file_size()},
              {"alignment", f.alignment()}}}};
  try {
    const model::ModelConfig c = model::from_gguf(f);
    r["model"] = model_json(c);
    r["tokenizer"] = tokenizer_json(f);
    r["tensors"] = tensors_json(f);
    r["kv_cache"] = kv_json(c, a, policy);
    r["load"] = load_json(f);
    r["deployment"] = deployment_json(f, c, a, policy, r["load"]);
    n_layer = static_cast<std::int32_t>(c.n_layer);
  } catch (const Error& e) {
    // Still describe the file; say why there is no model config.
    r["model_error"] = e.what();
    r["tokenizer"] = tokenizer_json(f);
    r["tensors"] = tensors_json(f);
  }
  if (n_layer > 0) {
    Json sj = {{"method", spec::spec_method_name(sc.method)}};
    if (sc.enabled()) sj["num_speculative_tokens"] = sc.num_speculative_tokens;
    if (sc.method == spec::SpecMethod::kLayerSkip)
      sj["draft_layers"] = spec::draft_layer_list(sc, n_layer);
    std::optional<gguf::GgufFile> draft_file;
    if (sc.method == spec::SpecMethod::kDraftModel) {
      try {
        draft_file.emplace(open_model_file(sc.draft_model));
      } catch (const Error& e) {
        draft_error(sc.draft_model, e);
      }
      sj["draft_model"] = draft_json(f, *draft_file, sc);
    }
    if (sc.drafts_with_model()) {
      sc = resolved(f, sc, draft_file ? &*draft_file : nullptr);
      if (sc.draft_cost >= 0) sj["draft_cost"] = sc.draft_cost;
    }
    sj["description"] = sc.describe();
    r["speculative"] = sj;
  }
  if (a.metadata) {
    Json md = Json::object();
    for (const auto& e : f.metadata()) md[std::string(e.key)] = value_json(e.value);
    r["metadata"] = md;
  }
  return r;
}

// "f16 23040 B | int8 12240 B" for one json object of byte counts.
std::string kv_line(const Json& bytes, bool exact) {
  std::string out;
  for (kernels::KvDtype d : kKvDtypes) {
    const auto b = bytes[kernels::kv_dtype_name(d)].get<std::uint64_t>();
    if (!out.empty()) out += " | ";
    out += std::string(kernels::kv_dtype_name(d)) + " " +
           (exact ? std::to_string(b) + " B" : human(static_cast<double>(b)));
  }
  return out;
}

void print_model(const Json& m) {
  std::printf("model:      %s \"%s\"\n", m["architecture"].get<std::string>().c_str(),
              m["name"].get<std::string>().c_str());
  std::printf("  layers %u, embedding %u, feed-forward %u, context %llu, vocab %u\n",
              m["block_count"].get<unsigned>(), m["embedding_length"].get<unsigned>(),
              m["feed_forward_length"].get<unsigned>(),
              m["context_length"].get<unsigned long long>(), m["vocab_size"].get<unsigned>());
  std::printf("  attention: %u heads, %u KV heads, head dim %u (K) / %u (V)%s\n",
              m["head_count"].get<unsigned>(), m["head_count_kv"].get<unsigned>(),
              m["head_dim_k"].get<unsigned>(), m["head_dim_v"].get<unsigned>(),
              m.contains("layers") ? " (layer 0; varies by layer)" : "");
  const Json& rope = m["rope"];
  std::printf("  rope: base %g, %u dims, scaling %s (factor %g)\n", rope["freq_base"].get<double>(),
              rope["dimension_count"].get<unsigned>(),
              rope["scaling"]["type"].get<std::string>().c_str(),
              rope["scaling"]["factor"].get<double>());
  if (rope.contains("freq_base_swa")) {
    std::printf("        sliding layers: base %g, no scaling\n",
                rope["freq_base_swa"].get<double>());
  }
  std::printf("  norm: %s, eps %g\n", m["norm"].get<std::string>() == "rms" ? "RMS" : "LayerNorm",
              m["norm_eps"].get<double>());
  if (m["sliding_window"].get<unsigned>() != 0) {
    std::printf("  sliding window: %u tokens on %u of %u layers",
                m["sliding_window"].get<unsigned>(), m["sliding_layers"].get<unsigned>(),
                m["block_count"].get<unsigned>());
    const unsigned pattern = m["sliding_window_pattern"].get<unsigned>();
    if (pattern != 0)
      std::printf(" (every %u%s layer is global)", pattern, pattern == 2 ? "nd" : "th");
    std::printf("\n");
  }
  const double cap_a = m["attn_logit_softcapping"].get<double>();
  const double cap_f = m["final_logit_softcapping"].get<double>();
  if (cap_a > 0.0 || cap_f > 0.0) {
    std::printf("  soft-capping: attention %g, final logits %g (0 = none)\n", cap_a, cap_f);
  }
}

void print_text(const Json& r) {
  const Json& file = r["file"];
  std::printf("file:       %s (GGUF v%u, %s, alignment %llu)\n",
              file["path"].get<std::string>().c_str(), file["version"].get<unsigned>(),
              human(file["size_bytes"].get<double>()).c_str(),
              file["alignment"].get<unsigned long long>());
  if (r.contains("model")) print_model(r["model"]);
  if (r.contains("model_error"))
    std::printf("model:      (no config: %s)\n", r["model_error"].get<std::string>().c_str());

  const Json& tok = r["tokenizer"];
  std::string special;
  for (const auto& [name, id] : tok["special"].items()) special += " " + name + " " + id.dump();
  std::printf("tokenizer:  %s (pre \"%s\"), %llu tokens;%s\n",
              tok["model"].get<std::string>().c_str(), tok["pre"].get<std::string>().c_str(),
              tok["vocab_size"].get<unsigned long long>(), special.c_str());
  std::printf("  chat template: %s\n", tok["chat_template"].get<std::string>().c_str());

  const Json& t = r["tensors"];
  std::printf("tensors:    %llu, %llu parameters, %s of weights (%.2f bits/weight)\n",
              t["count"].get<unsigned long long>(), t["parameters"].get<unsigned long long>(),
              human(t["weight_bytes"].get<double>()).c_str(), t["bits_per_weight"].get<double>());
  std::printf("  %-8s %6s %14s %12s\n", "type", "count", "parameters", "bytes");
  for (const auto& [name, e] : t["types"].items()) {
    std::printf("  %-8s %6llu %14llu %12s\n", name.c_str(), e["count"].get<unsigned long long>(),
                e["parameters"].get<unsigned long long>(), human(e["bytes"].get<double>()).c_str());
  }

  if (r.contains("load")) {
    const Json& l = r["load"];
    if (l.contains("isa")) {
      const std::string level =
          l["isa"] == l["isa_detected"]
              ? "the best level of this CPU"
              : "capped by FOLIO_ISA; the CPU supports " + l["isa_detected"].get<std::string>();
      const auto ahead = l["stream_ahead_bytes"].get<std::uint64_t>();
      const std::string requested =
          ahead == 0 ? "" : "; weights requested " + std::to_string(ahead) + " bytes ahead";
      std::printf("kernels:    %s (%s; CPU features: %s%s)\n",
                  l["kernels"].get<std::string>().c_str(), level.c_str(),
                  l["cpu_features"].get<std::string>().c_str(), requested.c_str());
    }
    if (l.contains("error")) {
      std::printf("load:       fails: %s\n", l["error"].get<std::string>().c_str());
    } else if (l["repacked_matrices"].get<std::uint64_t>() == 0) {
      std::printf("load:       %.2f s (%s kernels); weights used in place (no matrix repacked)\n",
                  l["seconds"].get<double>(), l["isa"].get<std::string>().c_str());
    } else {
      // The panels are advised for 2 MiB pages (base/huge_page_arena.h); the mode decides.
      const std::string thp = l["huge_pages"].get<std::string>();
      const char* pages = thp == "always" || thp == "madvise" ? " in 2 MiB pages"
                          : thp == "never"                    ? " in 4 KiB pages"
                                                              : "";
      std::printf(
          "load:       %.2f s (%s kernels); %llu matrices repacked into %s, %s%s (transparent huge "
          "pages: %s)\n",
          l["seconds"].get<double>(), l["isa"].get<std::string>().c_str(),
          l["repacked_matrices"].get<unsigned long long>(), l["layout"].get<std::string>().c_str(),
          human(static_cast<double>(l["repacked_bytes"].get<std::uint64_t>())).c_str(), pages,
          thp.c_str());
    }
  }

  if (r.contains("speculative")) {
    std::printf("speculative decoding: %s\n",
                r["speculative"]["description"].get<std::string>().c_str());
    if (r["speculative"].contains("draft_model")) {
      const Json& d = r["speculative"]["draft_model"];
      std::printf(
          "  draft model: %s (%s, %u layers, same vocabulary), %s of KV per token (f16)\n",
          d["path"].get<std::string>().c_str(), d["architecture"].get<std::string>().c_str(),
          d["n_layer"].get<unsigned>(),
          human(static_cast<double>(d["kv_bytes_per_token"]["f16"].get<std::uint64_t>())).c_str());
    }
    if (r["speculative"].contains("draft_layers"))
      std::printf("  draft layers: %s\n", r["speculative"]["draft_layers"].dump().c_str());
  }
  if (r.contains("kv_cache")) {
    const Json& kv = r["kv_cache"];
    std::printf("KV cache (K+V, all layers):\n  per token: %s\n",
                kv_line(kv["bytes_per_token"], true).c_str());
    const auto seqs = kv["num_seqs"].get<unsigned long long>();
    std::printf("  %llu tokens x %llu seq%s: %s\n", kv["max_model_len"].get<unsigned long long>(),
                seqs, seqs == 1 ? "" : "s", kv_line(kv["full_bytes"], false).c_str());
    if (kv.contains("windowed_bytes")) {
      std::printf("  with the sliding window capping local layers: %s\n",
                  kv_line(kv["windowed_bytes"], false).c_str());
      std::printf("  per token beyond the window (global layers only): %s\n",
                  kv_line(kv["bytes_per_token_beyond_window"], true).c_str());
    }
    const Json& pg = kv["paged"];
    const auto windows = pg["group_windows"].get<std::vector<std::int64_t>>();
    const auto sliding =
        std::count_if(windows.begin(), windows.end(), [](auto w) { return w > 0; });
    std::printf(
        "  paged pool (blocks of %d positions, steps of %d): %zu layer group%s (%zu full, "
        "%ld sliding), %d layers per block of %s\n",
        pg["block_size"].get<int>(), pg["max_num_batched_tokens"].get<int>(), windows.size(),
        windows.size() == 1 ? "" : "s", windows.size() - static_cast<std::size_t>(sliding),
        static_cast<long>(sliding), pg["layers_per_block"].get<int>(),
        kv_line(pg["bytes_per_block"], true).c_str());
    std::printf("    holds at most %lld blocks for %llu x %llu tokens: %s",
                pg["blocks_per_seq"].get<long long>(), seqs,
                kv["max_model_len"].get<unsigned long long>(), kv_line(pg["bytes"], false).c_str());
    const int window = pg["attention_window"]["window"].get<int>();
    if (window > 0)
      std::printf(" under --attention-window %d + %d sinks", window,
                  pg["attention_window"]["sinks"].get<int>());
    if (sliding > 0 || window > 0)
      std::printf(" (every position kept: %lld blocks, %s)",
                  pg["every_position_blocks_per_seq"].get<long long>(),
                  kv_line(pg["every_position_bytes"], false).c_str());
    std::printf("\n");
  }
  if (r.contains("deployment") && !r["deployment"].contains("error")) {
    const Json& d = r["deployment"];
    const Json& m = d["memory_bytes"];
    const auto mib = [](const Json& v) { return human(v.get<double>()); };
    std::printf(
        "deployment: request %s of memory (weights %s mapped + %s repacked + KV %s + runtime "
        "%s) and %llu CPUs; serve with --kv-cache-memory %llu -t %llu\n",
        mib(d["memory_request_bytes"]).c_str(), mib(m["weights_mapped"]).c_str(),
        mib(m["weights_repacked"]).c_str(), mib(m["kv_cache"]).c_str(), mib(m["runtime"]).c_str(),
        d["cpu_request"].get<unsigned long long>(), m["kv_cache"].get<unsigned long long>(),
        d["cpu_request"].get<unsigned long long>());
  }
}

}  // namespace

Command register_info(CLI::App& app) {
  auto* sub = app.add_subcommand("info", "Describe a GGUF model file and what serving it needs");
  auto a = std::make_shared<InfoArgs>();
  sub->add_option("model", a->model,
                  "GGUF file or HF checkpoint directory (default: the default model)");
  sub->add_option("-m,--model", a->model, "GGUF file (same as the positional argument)");
  sub->add_option(
         "--max-model-len", a->max_model_len,
         "tokens per sequence for the KV-cache estimate (default: the model's context length)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 31));
  sub->add_option("--num-seqs,--max-num-seqs", a->num_seqs,
                  "concurrent sequences for the KV-cache estimate and the deployment plan "
                  "(default 1)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 16));
  sub->add_option("--max-num-batched-tokens", a->max_num_batched_tokens,
                  "serve's token budget of one step (paged pool and deployment plan)")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  sub->add_option("--block-size", a->block_size, "serve's tokens per KV block")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  sub->add_option("--kv-cache-dtype", a->kv_cache_dtype,
                  "serve's KV dtype for the deployment plan: auto (f16), f16, f32, int8 or int4")
      ->capture_default_str();
  sub->add_option("--kv-cache-memory", a->kv_cache_memory,
                  "serve's KV pool for the deployment plan, e.g. 512MiB (default: what "
                  "--num-seqs sequences of --max-model-len need)");
  sub->add_option("-t,--threads", a->threads,
                  "serve's kernel threads: the deployment plan's CPU request (0: this machine's)")
      ->check(CLI::Range(0, 1 << 16))
      ->capture_default_str();
  sub->add_flag("--json", a->json, "print the report as one JSON object");
  sub->add_flag("--metadata", a->metadata, "also list every metadata key");
  sub->add_option("--speculative-config", a->speculative_config,
                  "check a speculative-decoding config against this model and describe it");
  add_attention_window_flags(sub, a->attention_window, a->attention_sinks);
  return {sub, [a]() {
            const auto f = open_model_file(resolve_model_path(a->model));
            const Json report = build_report(f, *a);
            if (a->json) {
              // Strings from the file may not be valid UTF-8: replace bad bytes rather than fail.
              std::printf("%s\n",
                          report.dump(2, ' ', false, Json::error_handler_t::replace).c_str());
              return 0;
            }
            print_text(report);
            if (a->metadata) {
              // Text keeps the reader's own rendering (abbreviated arrays, escaped newlines).
              std::printf("metadata:\n");
              for (const auto& e : f.metadata()) {
                std::printf("  %.*s = %s\n", static_cast<int>(e.key.size()), e.key.data(),
                            e.value.to_string().c_str());
              }
            }
            return 0;
          }};
}

}  // namespace folio::cli
