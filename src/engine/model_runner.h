// engine/model_runner.h: the seam between the engine loop and a model.
//
// The engine core (LLMEngine) owns scheduling, sampling and the request
// bookkeeping; everything that touches a model goes through this interface,
// as vLLM's worker / model runner does:
//
//   1 kv_bytes_per_block(block_size, dtype)   how much one KV block costs
//   2 init_kv({num_blocks, block_size, dtype}) allocate the pool, once
//   3 execute(plan) per step                  apply the plan's KV changes
//                                             (tables, COW copies), run every
//                                             scheduled token, return logits
//
// execute() returns, for each plan entry in order, num_logits rows of
// vocab_size() floats: the logits after each of that entry's last num_logits
// tokens. One row is the next token; k + 1 rows verify k speculative tokens.
//
// Speculative decoding with a model-based drafter (layer_skip, draft_model)
// adds
//
//   4 draft(runs) after a step        for each run, k greedy draft tokens
//                                     after its newest token, written as
//                                     K/V into the slots the scheduler
//                                     reserved ahead (lookahead)
//
// PagedModelRunner (paged_model_runner.h) runs the real model over the paged
// KV cache; tests/engine/fake_model_runner.h is a deterministic fake, so
// engine behaviour (aborts, preemption, step failure, many requests) is
// tested with no model.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/error.h"
#include "kernels/kv_row.h"
#include "kv/kv_groups.h"
#include "sched/scheduler_output.h"

namespace folio::engine {

struct KvLayout {
  std::int32_t num_blocks = 0;
  std::int32_t block_size = 0;  // token positions per block
  kernels::KvDtype dtype = kernels::KvDtype::kF16;
};

// Wall-clock seconds of one execute(), by stage (for /metrics).
struct RunnerTimes {
  double prepare = 0;    // block tables, COW copies, batch building
  double attention = 0;  // model: attention blocks (projections, RoPE, KV, attention)
  double ffn = 0;        // model: FFN blocks
  double lm_head = 0;    // model: embedding lookup and output projection
};

// One sequence to draft for: `tokens` are all its tokens (positions 0 ..
// pos(), what a drafter with K/V of its own catches up on); the newest,
// last(), has no K/V yet. The runner's table for `seq` has slots for
// [pos(), pos() + k).
struct DraftRequest {
  sched::SeqId seq;
  std::span<const TokenId> tokens;  // not empty
  std::int32_t k = 0;
  std::vector<TokenId> out;    // filled: up to k drafts
  std::int32_t rounds = 0;     // filled: draft forwards it was in
  std::int32_t caught_up = 0;  // filled: positions whose K/V a lagging draft
                               // model wrote first (no logits)

  TokenId last() const { return tokens.back(); }
  std::int32_t pos() const { return static_cast<std::int32_t>(tokens.size()) - 1; }
};

struct RunnerOutput {
  std::span<const float> logits;  // [sum of num_logits x vocab_size], plan order
  // For each plan entry with `pool` set, in plan order: the sum of its
  // tokens' final hidden states [hidden_size()] (mean pooling adds these up).
  std::span<const float> pooled;
  RunnerTimes times;
};

class ModelRunner {
 public:
  virtual ~ModelRunner() = default;

  virtual std::int32_t vocab_size() const = 0;
  // Width of the hidden states a pooled plan entry returns; 0: this runner
  // does not pool (a pooling request then fails its step).
  virtual std::int32_t hidden_size() const { return 0; }
  // Positions the model was trained for (the default --max-model-len); 0: unknown.
  virtual std::int64_t context_length() const = 0;
  // The model's KV layer groups (kv/kv_groups.h) for the scheduler's block
  // tables; empty: one group of every layer, all positions kept.
  virtual std::vector<kv::KvGroup> kv_groups() const { return {}; }
  // Bytes one KV block of `block_size` positions takes (one group's layers).
  virtual std::int64_t kv_bytes_per_block(std::int32_t block_size,
                                          kernels::KvDtype dtype) const = 0;
  // Allocates the KV pool (once, before the first execute). Returns its bytes.
  // Throws folio::Error when the memory cannot be had.
  virtual std::int64_t init_kv(const KvLayout& layout) = 0;
  // Runs one step's plan. Throws (folio::Error or another std::exception)
  // when the step fails; the engine then ends the plan's requests with
  // kError and the next plan starts from a consistent state. The returned
  // logits stay valid until the next execute().
  virtual RunnerOutput execute(const sched::SchedulerOutput& plan) = 0;
  // Drafts for speculative decoding (after execute, before the next plan).
  // Returns the seconds the call's draft forwards took (what a draft's cost
  // is measured from, spec/draft_cost.h; 0: not timed). Runners without a
  // drafter throw folio::Error.
  virtual double draft(std::span<DraftRequest> /*requests*/) {
    throw Error("this model runner has no drafter for speculative decoding");
  }
};

}  // namespace folio::engine
