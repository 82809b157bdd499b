// engine/llm_engine.h: the engine core of DESIGN.md, one step at a time.
//
//   step():
//     1 plan = scheduler.schedule()          which requests advance by how many tokens
//     2 out = runner.execute(plan)           KV tables + COW copies, one ragged forward,
//                                            the planned logit rows (engine/model_runner.h)
//     3 per request needing a token: draw it (sample k of n has its own RNG),
//       token-level stops (EOS, stop_token_ids)
//     4 scheduler.update(plan, result)       append, finish, free blocks, cache prefixes
//     5 push one RequestOutput per request that advanced to its own channel
//     6 speculative decoding: the proposer drafts tokens for each caught-up
//       sequence; step 1 of the next step schedules them, step 3 verifies
//       them (spec/rejection.h: lossless) and step 4 keeps the accepted ones
//
// The core emits token ids, logprobs and finish reasons (engine/protocol.h);
// it has no tokenizer. Text and stop strings are the consumer's
// OutputProcessor, which calls finish_sample() when a stop string matches.
//
// A request (RequestId) with n > 1 runs as one scheduler sequence
// (sched::SeqId) until its first token, then the scheduler forks n-1 child
// sequences that share its prompt blocks (COW).
//
// Not thread-safe: one thread drives it (EngineLoop, or a tool calling
// run_until_idle()). limits() and stats() may be used from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/engine_config.h"
#include "engine/engine_stats.h"
#include "engine/model_runner.h"
#include "engine/protocol.h"
#include "engine/request_limits.h"
#include "engine/sample_stream.h"
#include "sched/scheduler.h"
#include "spec/draft_cost.h"
#include "spec/proposer.h"
#include "spec/row_cost.h"

namespace folio::engine {

class LLMEngine {
 public:
  // `runner` must outlive the engine; the engine sizes the KV pool (from
  // config and the runner's block cost) and has the runner allocate it.
  // `eos` are the model's end-of-generation ids. Throws folio::Error for
  // unusable limits or a KV budget below one block. `proposer` drafts
  // speculative tokens when config.speculative is on (nullptr: the one its
  // method names; tests pass their own).
  LLMEngine(ModelRunner& runner, std::vector<TokenId> eos, const EngineConfig& config,
            std::unique_ptr<spec::Proposer> proposer = nullptr);

  // Checks requests before they are added (thread-safe: immutable).
  const RequestLimits& limits() const { return limits_; }

  // Queues an admitted request; its outputs arrive on the returned channel
  // (or on `channel` when given). Throws folio::Error for an id that is
  // already live.
  std::shared_ptr<OutputChannel> add_request(AdmittedRequest r,
                                             std::shared_ptr<OutputChannel> channel = nullptr);
  // Admits (limits().admit, throws folio::Error naming the limit), then queues.
  std::shared_ptr<OutputChannel> add_request(EngineRequest r);
  // Stops every sample (FinishReason::kAbort) and frees their KV blocks now.
  // Returns false for an unknown (or finished) id.
  bool abort(RequestId id);
  void abort_all();
  // Stops one sample with FinishReason::kStop (its consumer matched a stop
  // string) and frees its blocks now. False for an unknown or finished sample.
  bool finish_sample(RequestId id, std::int32_t index);

  // One engine step. Returns false when there was nothing to do.
  bool step();
  void run_until_idle();
  bool has_unfinished() const { return !requests_.empty(); }

  EngineStats stats() const;
  const EngineConfig& config() const { return config_; }  // resolved values
  std::int32_t num_kv_blocks() const { return num_blocks_; }
  std::int64_t kv_bytes() const { return kv_bytes_; }
  const sched::Scheduler& scheduler() const { return sched_; }

 private:
  struct Live {
    RequestId id;
    std::shared_ptr<OutputChannel> channel;
    std::vector<std::unique_ptr<SampleStream>> samples;
    std::int32_t num_prompt = 0;
    std::int32_t num_cached = -1;
    double arrival = 0;
    double first_scheduled = -1;  // -1: not scheduled yet
    double first_token = -1;      // -1: no token yet
    bool touched = false;
    bool pool = false;               // mean pooling (EngineRequest::pool)
    std::vector<double> pooled_sum;  // its prompt's hidden states so far
    std::int32_t pooled_tokens = 0;  // how many positions pooled_sum holds
  };
  struct SeqRef {
    Live* req;
    std::int32_t index;
  };

  sched::ModelRunnerOutput sample(const sched::SchedulerOutput& plan,
                                  std::span<const float> logits);
  void commit(const sched::SchedulerOutput& plan, const sched::ModelRunnerOutput& result);
  void fail_plan(const sched::SchedulerOutput& plan, const std::string& what);
  void verify(const sched::ScheduledRequest& s, SampleStream& st, std::span<const float> logits,
              std::size_t vocab, sched::RequestResult& rr);
  void propose();
  void observe_row_cost(const sched::SchedulerOutput& plan, const RunnerTimes& times);
  void pool(const sched::SchedulerOutput& plan, std::span<const float> pooled);
  void forget_seq(kv::SeqId seq);
  void end_sample(Live& r, SampleStream& s, FinishReason reason);
  void emit(Live& r, const std::string& error = {});
  void publish_stats();

  ModelRunner& runner_;
  std::vector<TokenId> eos_;
  EngineConfig config_;  // resolved
  std::int32_t num_blocks_;
  std::int32_t vocab_;
  RequestLimits limits_;
  sched::Scheduler sched_;
  std::int64_t kv_bytes_ = 0;
  std::unordered_map<RequestId, std::unique_ptr<Live>> requests_;
  std::unordered_map<kv::SeqId, SeqRef> seqs_;  // scheduler sequence -> sample
  std::vector<Live*> touched_;
  std::uint64_t generated_ = 0;
  std::unique_ptr<spec::Proposer> proposer_;  // null: no speculative decoding
  bool adaptive_ = true;                      // per-request draft length (config)
  spec::DraftCostEstimate draft_cost_;        // of one draft forward (config, or measured)
  spec::RowCostEstimate row_cost_;            // of one verification row (config, or measured)
  std::vector<spec::DraftQuery> queries_;     // propose() scratch
  std::vector<SampleStream*> query_streams_;  // propose(): the sample of each query

  mutable std::mutex stats_mu_;
  EngineStats stats_;  // guarded by stats_mu_
  StageTimes stage_;   // engine thread only; copied into stats_
  std::uint64_t steps_ = 0, batched_ = 0;
  std::uint64_t spec_drafts_ = 0, spec_draft_tokens_ = 0, spec_accepted_ = 0;
  std::vector<std::uint64_t> spec_accepted_per_pos_;
};

}  // namespace folio::engine
