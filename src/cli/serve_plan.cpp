// cli/serve_plan.cpp: the serve plan from flags or a JSON config file.
#include "cli/serve_plan.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "cli/text_file.h"
#include "engine/kv_budget.h"
#include "kv/kv_sizing.h"
#include "route/learned_head.h"
#include "server/served_model.h"

namespace folio::cli {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw Error(where + ": " + what);
}

std::string need_string(const json& v, const std::string& where) {
  if (!v.is_string()) fail(where, "must be a string");
  return v.get<std::string>();
}

int need_int(const json& v, const std::string& where) {
  if (!v.is_number_integer()) fail(where, "must be an integer");
  const auto i = v.get<std::int64_t>();
  if (i < -1 || i > (std::int64_t{1} << 30)) fail(where, "is out of range");
  return static_cast<int>(i);
}

std::vector<std::string> string_list(const json& v, const std::string& where) {
  if (v.is_string()) return {v.get<std::string>()};
  if (!v.is_array()) fail(where, "must be a string or a list of strings");
  std::vector<std::string> out;
  for (const json& e : v) out.push_back(need_string(e, where));
  return out;
}

std::vector<std::string> check_lacks(std::vector<std::string> lacks, const std::string& where) {
  for (const std::string& f : lacks) {
    const auto* end = std::end(server::kRouteFeatures);
    if (std::find_if(std::begin(server::kRouteFeatures), end,
                     [&](const char* k) { return f == k; }) == end) {
      fail(where, "`" + f + "` is not a routable feature (tools, structured_output, logprobs)");
    }
  }
  return lacks;
}

// One entry of "models".
ServeModelPlan model_entry(const json& e, const EngineFlags& defaults, const std::string& where) {
  if (!e.is_object()) fail(where, "must be an object");
  ServeModelPlan m;
  m.engine = defaults;
  m.engine.kv_cache_memory.clear();  // a share of the total unless set here
  EngineFlags& f = m.engine;
  for (const auto& [key, v] : e.items()) {
    const std::string at = where + "." + key;
    if (key == "model") {
      m.path = need_string(v, at);
    } else if (key == "served_model_name") {
      m.names = string_list(v, at);
    } else if (key == "chat_template") {
      m.chat_template = need_string(v, at);
    } else if (key == "lacks") {
      m.lacks = check_lacks(string_list(v, at), at);
    } else if (key == "max_model_len") {
      f.max_model_len = need_int(v, at);
    } else if (key == "max_num_seqs") {
      f.max_num_seqs = need_int(v, at);
    } else if (key == "max_num_batched_tokens") {
      f.max_num_batched_tokens = need_int(v, at);
    } else if (key == "long_prefill_token_threshold") {
      f.long_prefill_token_threshold = need_int(v, at);
    } else if (key == "block_size") {
      f.block_size = need_int(v, at);
    } else if (key == "kv_cache_memory") {
      f.kv_cache_memory =
          v.is_number_integer() ? std::to_string(v.get<std::int64_t>()) : need_string(v, at);
    } else if (key == "kv_cache_dtype") {
      f.kv_cache_dtype = need_string(v, at);
    } else if (key == "enable_prefix_caching") {
      if (!v.is_boolean()) fail(at, "must be true or false");
      f.enable_prefix_caching = v.get<bool>();
    } else if (key == "scheduling_policy") {
      f.scheduling_policy = need_string(v, at);
    } else if (key == "speculative_config") {
      f.speculative_config = v.is_string() ? v.get<std::string>() : v.dump();
    } else if (key == "attention_window") {
      f.attention_window = need_int(v, at);
    } else if (key == "attention_sinks") {
      f.attention_sinks = need_int(v, at);
    } else if (key == "activation_bits") {
      f.activation_bits = need_int(v, at);
    } else if (key == "threads") {
      fail(at, "is not per model: every model shares the -t/--threads kernel threads");
    } else {
      fail(at, "is not a model setting folio knows");
    }
  }
  if (m.path.empty()) fail(where, "needs \"model\" (a GGUF file or checkpoint directory)");
  to_engine_config(f);  // flag-level checks now, naming the model entry on failure
  return m;
}

// A policy's "head" file, read now so a bad one stops start-up. A share
// calibrates on the feature score of the built-in sample only, which a head
// would change: with a head the threshold is given (train_head.py prints
// the one for a share).
void load_head(route::PolicyConfig& c) {
  if (c.head_path.empty()) return;
  if (c.large_share) {
    throw Error(
        "route policy: \"large_share\" cannot be calibrated with a learned \"head\"; give "
        "\"threshold\" (bench/route/train_head.py prints the threshold for a share)");
  }
  c.policy.head = std::make_shared<const route::LearnedHead>(route::load_learned_head(c.head_path));
}

VirtualModelPlan virtual_entry(const json& e, const std::string& where) {
  if (!e.is_object()) fail(where, "must be an object");
  VirtualModelPlan v;
  for (const auto& [key, val] : e.items()) {
    const std::string at = where + "." + key;
    if (key == "name") {
      v.name = need_string(val, at);
    } else if (key == "small") {
      v.small = need_string(val, at);
    } else if (key == "large") {
      v.large = need_string(val, at);
    } else if (key == "policy") {
      try {
        v.policy = route::parse_policy_config(val);
        load_head(v.policy);
      } catch (const Error& err) {
        fail(at, err.what());
      }
    } else if (key == "cascade") {
      try {
        v.cascade = server::parse_cascade_policy(val);
      } catch (const Error& err) {
        fail(at, err.what());
      }
    } else {
      fail(at, "is not a virtual-model setting (name, small, large, policy, cascade)");
    }
  }
  if (v.name.empty() || v.small.empty() || v.large.empty()) {
    fail(where, "needs \"name\", \"small\" and \"large\"");
  }
  return v;
}

}  // namespace

ServePlan plan_from_flags(const std::vector<std::string>& models,
                          const std::vector<std::string>& served_names,
                          const std::string& chat_template, const EngineFlags& engine,
                          const std::string& route_policy_json,
                          const std::string& route_cascade_json) {
  ServePlan plan;
  const std::vector<std::string> paths = models.empty() ? std::vector<std::string>{""} : models;
  if (paths.size() > 1 && !served_names.empty() && served_names.size() != paths.size()) {
    throw Error("--served-model-name: with " + std::to_string(paths.size()) +
                " models give one name per model (in -m order), or use --config for several "
                "names per model");
  }
  for (std::size_t i = 0; i < paths.size(); ++i) {
    ServeModelPlan m;
    m.path = paths[i];
    m.engine = engine;
    m.chat_template = chat_template;
    if (paths.size() == 1) {
      m.names = served_names;
    } else {
      if (!served_names.empty()) m.names = {served_names[i]};
      m.engine.kv_cache_memory.clear();
    }
    plan.models.push_back(std::move(m));
  }
  if (paths.size() > 1) {
    plan.total_kv_memory = engine.kv_cache_memory;
    VirtualModelPlan v{.name = "auto", .small = "", .large = "", .policy = {}, .cascade = {}};
    if (!route_policy_json.empty()) {
      json j;
      try {
        j = json::parse(route_policy_json);
      } catch (const json::exception& e) {
        throw Error(std::string("--route-policy is not valid JSON: ") + e.what());
      }
      try {
        v.policy = route::parse_policy_config(j);
        load_head(v.policy);
      } catch (const Error& e) {
        throw Error(std::string("--route-policy: ") + e.what());
      }
    }
    if (!route_cascade_json.empty()) {
      try {
        v.cascade = server::parse_cascade_policy(json::parse(route_cascade_json));
      } catch (const json::exception& e) {
        throw Error(std::string("--route-cascade is not valid JSON: ") + e.what());
      } catch (const Error& e) {
        throw Error(std::string("--route-cascade: ") + e.what());
      }
    }
    plan.virtuals.push_back(std::move(v));
  } else if (!route_policy_json.empty() || !route_cascade_json.empty()) {
    throw Error("--route-policy and --route-cascade need two or more models (-m A -m B)");
  }
  return plan;
}

ServePlan plan_from_config(const std::string& path, const EngineFlags& engine,
                           const std::string& chat_template) {
  const std::string text = read_text_file(path);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw Error("--config " + path + " is not valid JSON: " + e.what());
  }
  const std::string where = "--config " + path;
  if (!j.is_object()) fail(where, "must hold a JSON object");
  ServePlan plan;
  plan.total_kv_memory = engine.kv_cache_memory;
  bool has_virtuals = false;
  for (const auto& [key, v] : j.items()) {
    if (key == "models") {
      if (!v.is_array() || v.empty()) fail(where, "\"models\" must be a non-empty list");
      for (std::size_t i = 0; i < v.size(); ++i) {
        plan.models.push_back(
            model_entry(v[i], engine, where + ": models[" + std::to_string(i) + "]"));
        if (plan.models.back().chat_template.empty())
          plan.models.back().chat_template = chat_template;
      }
    } else if (key == "virtual_models") {
      if (!v.is_array()) fail(where, "\"virtual_models\" must be a list");
      has_virtuals = true;
      for (std::size_t i = 0; i < v.size(); ++i) {
        plan.virtuals.push_back(
            virtual_entry(v[i], where + ": virtual_models[" + std::to_string(i) + "]"));
      }
    } else {
      fail(where, "\"" + key + "\" is not a config key (models, virtual_models)");
    }
  }
  if (plan.models.empty()) fail(where, "needs \"models\"");
  // One model: the command line's --kv-cache-memory is its own, unless it sets one.
  std::string& only_kv = plan.models.front().engine.kv_cache_memory;
  if (plan.models.size() == 1 && only_kv.empty()) only_kv = engine.kv_cache_memory;
  if (!has_virtuals && plan.models.size() > 1) {
    plan.virtuals.push_back(
        VirtualModelPlan{.name = "auto", .small = "", .large = "", .policy = {}, .cascade = {}});
  }
  return plan;
}

KvSplit split_kv_budget(const ServePlan& plan) {
  KvSplit split;
  std::vector<std::int64_t>& caps = split.caps;
  caps.assign(plan.models.size(), 0);
  if (plan.models.size() < 2) return split;
  const std::int64_t total = plan.total_kv_memory.empty()
                                 ? engine::default_kv_cap()
                                 : kv::parse_byte_size(plan.total_kv_memory);
  std::int64_t fixed = 0;
  std::int64_t shared = 0;
  for (const ServeModelPlan& m : plan.models) {
    if (m.engine.kv_cache_memory.empty()) {
      ++shared;
    } else {
      fixed += kv::parse_byte_size(m.engine.kv_cache_memory);
    }
  }
  if (fixed > total || (fixed == total && shared > 0)) {
    throw Error("the models' own kv_cache_memory (" + std::to_string(fixed >> 20) +
                " MiB) leaves nothing of the KV budget (" + std::to_string(total >> 20) +
                " MiB, --kv-cache-memory) for the others");
  }
  for (std::size_t i = 0; i < caps.size(); ++i) {
    if (plan.models[i].engine.kv_cache_memory.empty()) caps[i] = (total - fixed) / shared;
  }
  split.total = total;
  return split;
}

}  // namespace folio::cli
