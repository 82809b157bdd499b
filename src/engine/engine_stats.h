// engine/engine_stats.h: counters the engine publishes after every step.
//
// A snapshot is copied under a mutex at the end of each step, so readers on
// other threads (metrics, benchmarks) never touch the engine's live state.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace folio::engine {

// Cumulative seconds per stage of step(); the runner's share is split as it
// reports it (engine/model_runner.h: RunnerTimes). Detokenization is not an
// engine stage: the consumer's OutputProcessor does it, once per token, and
// reports it itself.
struct StageTimes {
  double schedule = 0;   // scheduler.schedule()
  double prepare = 0;    // block tables, COW copies, batch building
  double attention = 0;  // model: attention blocks (projections, RoPE, KV, attention)
  double ffn = 0;        // model: FFN blocks (matmuls, SwiGLU)
  double lm_head = 0;    // model: embedding lookup and output projection
  double sampling = 0;   // logits -> token (sampler chain, draft verification), stop checks
  double update = 0;     // scheduler.update() and output delivery
  double propose = 0;    // speculative decoding: the proposer's drafts for the next step

  std::vector<std::pair<std::string, double>> named() const {
    return {{"schedule", schedule}, {"prepare", prepare}, {"attention", attention},
            {"ffn", ffn},           {"lm_head", lm_head}, {"sampling", sampling},
            {"update", update},     {"propose", propose}};
  }
};

struct EngineStats {
  std::int32_t num_running = 0;
  std::int32_t num_waiting = 0;
  std::int32_t kv_blocks_total = 0;
  std::int32_t kv_blocks_used = 0;
  double kv_cache_usage = 0;              // blocks_used / blocks_total
  std::int64_t kv_live_tokens = 0;        // slots reserved by tables
  std::int64_t kv_allocated_slots = 0;    // slots of used blocks
  std::int64_t prefix_cache_queries = 0;  // tokens looked up
  std::int64_t prefix_cache_hits = 0;     // tokens found
  std::int64_t num_preemptions = 0;
  std::uint64_t num_steps = 0;
  std::uint64_t num_batched_tokens = 0;    // tokens forwarded, all steps
  std::uint64_t num_generated_tokens = 0;  // tokens sampled, all steps
  StageTimes stage;
  // Speculative decoding (vLLM's spec_decode_* counters): verification
  // rounds (a request with >= 1 draft in a step), drafts verified, drafts
  // accepted, and accepted drafts by position in the round.
  std::uint64_t spec_num_drafts = 0;
  std::uint64_t spec_num_draft_tokens = 0;
  std::uint64_t spec_num_accepted_tokens = 0;
  std::vector<std::uint64_t> spec_accepted_per_pos;  // num_speculative_tokens entries
  // What the adaptive rule charges for one verification row, as a fraction
  // of a single-stream step: measured (spec/row_cost.h) or configured; 0
  // without speculative decoding.
  double spec_row_cost = 0;
  // What it charges for one draft forward of a model drafter, the same way
  // (spec/draft_cost.h); 0 for ngram and without speculative decoding.
  double spec_draft_cost = 0;
};

}  // namespace folio::engine
