// engine/llm_engine.h: the engine loop of DESIGN.md, one step at a time.
//
//   step():
//     1 plan = scheduler.schedule()             which requests advance by how many tokens
//     2 kv.apply(plan); batch = build(plan)     block tables, COW copies, one ragged batch
//     3 logits = model.forward(batch, kv)       one pass over every scheduled token
//     4 per request needing a token: draw it (sample k of n has its own RNG),
//       stop checks (EOS, stop tokens, stop strings on detokenized text)
//     5 scheduler.update(plan, result)          append, finish, free blocks, cache prefixes
//     6 push one RequestOutput per request that advanced to its own channel
//
// Requests are identified by the caller's ids (unique while live). A request
// with n > 1 runs as one scheduler sequence until its first token, then the
// scheduler forks n-1 children that share its prompt blocks (COW).
//
// Not thread-safe: one thread drives it (EngineLoop, or a tool calling
// run_until_idle()). validate() and stats() may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/engine_config.h"
#include "engine/engine_stats.h"
#include "engine/output_channel.h"
#include "engine/paged_kv_cache.h"
#include "engine/sample_stream.h"
#include "kernels/thread_pool.h"
#include "model/model.h"
#include "sampling/sampling_params.h"
#include "sched/scheduler.h"
#include "tokenizer/tokenizer.h"

namespace folio::engine {

using RequestId = std::uint64_t;

struct GenerateRequest {
  RequestId id = 0;
  std::vector<TokenId> prompt;
  sampling::SamplingParams params;  // max_tokens unset: up to max_model_len
  std::int32_t n = 1;
  std::int32_t priority = 0;  // lower = first (--scheduling-policy priority)
};

class LLMEngine {
 public:
  // `model` (and `tok`, which may be null: no text, no stop strings) must
  // outlive the engine. `eos` are the model's end-of-generation ids. Throws
  // folio::Error for unusable limits or a KV budget below one sequence.
  LLMEngine(const model::Model& model, const tokenizer::Tokenizer* tok, std::vector<TokenId> eos,
            const EngineConfig& config);

  // Throws folio::Error (a message naming the limit) when the request can
  // never run. Thread-safe: reads only immutable configuration.
  void validate(const GenerateRequest& r) const;

  // Queues a request; its outputs arrive on the returned channel (or on
  // `channel` when given). Throws folio::Error as validate(), or for an id
  // that is already live.
  std::shared_ptr<OutputChannel> add_request(GenerateRequest r,
                                             std::shared_ptr<OutputChannel> channel = nullptr);
  // Stops every sample (FinishReason::kAbort) and frees their KV blocks now.
  // Returns false for an unknown (or finished) id.
  bool abort(RequestId id);
  void abort_all();
  // Stops one sample with FinishReason::kStop (e.g. the server matched a stop string).
  bool finish_sample(RequestId id, std::int32_t index);

  // One engine step. Returns false when there was nothing to do.
  bool step();
  void run_until_idle();
  bool has_unfinished() const { return !requests_.empty(); }

  EngineStats stats() const;
  const EngineConfig& config() const { return config_; }  // resolved values
  const model::Model& model() const { return model_; }
  std::int32_t num_kv_blocks() const { return cache_.num_blocks(); }
  std::size_t kv_bytes() const { return cache_.total_bytes(); }
  const sched::Scheduler& scheduler() const { return sched_; }

 private:
  struct Live {
    RequestId id = 0;
    std::shared_ptr<OutputChannel> channel;
    std::vector<std::unique_ptr<SampleStream>> samples;
    std::int32_t num_prompt = 0;
    std::int32_t num_cached = -1;
    double added_at = 0;
    double queued = -1;  // added -> first scheduled (-1: not scheduled yet)
    double ttft = 0;
    bool touched = false;
  };
  struct SeqRef {
    Live* req;
    std::int32_t index;
  };

  void build_batch(const sched::SchedulerOutput& plan);
  sched::ModelRunnerOutput sample(const sched::SchedulerOutput& plan, std::span<const float> logits);
  void commit(const sched::SchedulerOutput& plan, const sched::ModelRunnerOutput& result);
  void fail_plan(const sched::SchedulerOutput& plan, const std::string& what);
  void emit(Live& r, const std::string& error = {});
  void publish_stats();

  const model::Model& model_;
  const tokenizer::Tokenizer* tok_;
  std::vector<TokenId> eos_;
  EngineConfig config_;  // resolved
  std::int32_t num_blocks_;
  std::int32_t vocab_;
  sched::Scheduler sched_;
  PagedKvCache cache_;
  kernels::ThreadPool pool_;
  model::Workspace ws_;
  model::Batch batch_;
  std::unordered_map<RequestId, std::unique_ptr<Live>> requests_;
  std::unordered_map<sched::RequestId, SeqRef> seqs_;  // scheduler sequence -> sample
  std::vector<Live*> touched_;
  std::uint64_t generated_ = 0;

  mutable std::mutex stats_mu_;
  EngineStats stats_;  // guarded by stats_mu_
  StageTimes stage_;   // engine thread only; copied into stats_
  std::uint64_t steps_ = 0, batched_ = 0;
};

}  // namespace folio::engine
