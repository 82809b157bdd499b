// engine/engine_config.h: the engine's knobs, named after vLLM's flags.
//
// Zero means "derive a default" where noted; LLMEngine resolves them once
// at construction (see kv_budget.h for the KV memory default) and reports
// the resolved values through LLMEngine::config(). Kernel threads are the
// model runner's (engine/paged_model_runner.h), not the engine core's.
#pragma once

#include <cstdint>

#include "base/attention_window.h"
#include "kernels/kv_row.h"
#include "sched/request.h"
#include "spec/speculative_config.h"

namespace folio::engine {

struct EngineConfig {
  std::int32_t max_model_len = 0;   // 0: the model's training context (capped, see below)
  std::int32_t max_num_seqs = 256;  // sequences running at once
  std::int32_t max_num_batched_tokens = 2048;     // token budget of one step
  std::int32_t long_prefill_token_threshold = 0;  // max prefill tokens per request per step; 0: off
  std::int32_t block_size = 16;                   // tokens per KV block
  std::int64_t kv_cache_memory = 0;               // bytes for K/V; 0: default (kv_budget.h)
  // Upper bound of the default budget; 0: 25% of MemAvailable. Several
  // models in one server split one budget this way (cli/serve_plan.h).
  std::int64_t kv_cache_memory_cap = 0;
  kernels::KvDtype kv_cache_dtype = kernels::KvDtype::kF16;
  bool enable_prefix_caching = true;
  sched::SchedulingPolicy scheduling_policy = sched::SchedulingPolicy::kFcfs;
  spec::SpeculativeConfig speculative;  // --speculative-config; off by default
  // --attention-window / --attention-sinks: the sink + window attention
  // policy of requests that do not choose one (base/attention_window.h);
  // off by default, since it changes outputs.
  AttentionWindow attention_window;
};

// A model without a context length in its metadata gets this many positions.
inline constexpr std::int32_t kFallbackModelLen = 4096;

}  // namespace folio::engine
