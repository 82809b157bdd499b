// cli/serve_plan.h: which models `folio serve` loads, under which names, with
// which engine settings, and which virtual (routed) models it offers.
//
// Two sources, never both:
//   - the command line: MODEL and each -m/--model, in that order; with
//     several models, --served-model-name is absent or gives one name per
//     model, in the same order;
//   - --config FILE (JSON; docs/CONFIG.md), for several names per model,
//     per-model engine settings and virtual models:
//       {"models": [{"model": "a.gguf", "served_model_name": ["a", "small"],
//                    "max_num_seqs": 64, "lacks": ["tools"]}, ...],
//        "virtual_models": [{"name": "auto", "small": "a", "large": "b",
//                            "policy": {"large_share": 0.3},
//                            "cascade": {"min_mean_logprob": -1.0}}]}
//     A model's engine keys (vLLM names) override the command line's flags.
//
// With two or more models and no virtual model, `auto` is added: small is
// the model with the fewest parameters, large the one with the most,
// --route-policy (JSON, route/policy_config.h) its policy and --route-cascade
// (JSON, server/confidence.h) its cascade.
//
// Memory: with several models the command line's --kv-cache-memory is the
// budget of all KV caches together (default: 25% of MemAvailable); a model
// with its own kv_cache_memory takes that much of it, the others share the
// rest equally (each still takes no more than its sequences can use).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/engine_flags.h"
#include "route/policy_config.h"
#include "server/confidence.h"

namespace folio::cli {

struct ServeModelPlan {
  std::string path;                // as given; resolved when loaded
  std::vector<std::string> names;  // empty: the model file's name
  EngineFlags engine;
  std::string chat_template;       // "": the model's own
  std::vector<std::string> lacks;  // server/served_model.h kRouteFeatures
};

struct VirtualModelPlan {
  std::string name;
  std::string small;  // served names; both "" for the implicit `auto` (by size)
  std::string large;
  route::PolicyConfig policy;
  server::CascadePolicy cascade;  // "cascade" / --route-cascade; off by default
};

struct ServePlan {
  std::vector<ServeModelPlan> models;
  std::vector<VirtualModelPlan> virtuals;
  // Several models: the KV budget of all of them (--kv-cache-memory); "":
  // the default (25% of MemAvailable).
  std::string total_kv_memory;
};

// Throws folio::Error naming the flag for inconsistent flags.
ServePlan plan_from_flags(const std::vector<std::string>& models,
                          const std::vector<std::string>& served_names,
                          const std::string& chat_template, const EngineFlags& engine,
                          const std::string& route_policy_json,
                          const std::string& route_cascade_json = "");

// Throws folio::Error naming the file and key for anything it cannot use
// (unknown keys included).
ServePlan plan_from_config(const std::string& path, const EngineFlags& engine,
                           const std::string& chat_template);

// The KV budget of several models, split (computed once, before any model
// takes memory): `total` (--kv-cache-memory, else 25% of MemAvailable now)
// and the cap of each model whose kv_cache_memory is unset (0 for the
// others). A single model keeps the engine's default rule (caps all 0).
// Throws folio::Error when the models' own budgets exceed the total.
struct KvSplit {
  std::int64_t total = 0;
  std::vector<std::int64_t> caps;
};
KvSplit split_kv_budget(const ServePlan& plan);

}  // namespace folio::cli
