// engine/llm_engine.cpp: construction, request admission, abort, stats.
// The step itself is in engine_step.cpp.
#include "engine/llm_engine.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "base/timer.h"
#include "engine/kv_budget.h"
#include "engine/runner_proposer.h"
#include "kv/kv_sizing.h"
#include "spec/ngram_proposer.h"

namespace folio::engine {

namespace {

sched::SchedulerConfig sched_config(const EngineConfig& c) {
  const std::int32_t ahead =
      c.speculative.drafts_with_model() ? c.speculative.num_speculative_tokens : 0;
  return {c.max_num_batched_tokens,       c.max_num_seqs, c.max_model_len, c.scheduling_policy,
          c.long_prefill_token_threshold, ahead};
}

EngineConfig resolve(EngineConfig c, const ModelRunner& runner) {
  if (c.block_size < 1 || c.block_size > 1024) throw Error("--block-size must be in [1, 1024]");
  if (c.max_model_len <= 0) {
    const std::int64_t ctx = runner.context_length();
    c.max_model_len = ctx > 0 ? static_cast<std::int32_t>(std::min<std::int64_t>(ctx, 1 << 20))
                              : kFallbackModelLen;
  }
  if (c.kv_cache_memory <= 0) {
    const std::vector<kv::KvGroup> groups = runner.kv_groups();
    const std::int64_t per_seq =
        kv::max_blocks_per_seq(groups, c.block_size, c.max_model_len,
                               sched::max_step_tokens(sched_config(c)), c.attention_window);
    c.kv_cache_memory =
        default_kv_cache_memory(runner.kv_bytes_per_block(c.block_size, c.kv_cache_dtype), per_seq,
                                c.max_num_seqs, c.kv_cache_memory_cap);
  }
  return c;
}

std::int32_t blocks_for(const EngineConfig& c, const ModelRunner& runner) {
  return kv::kv_blocks_for_budget(c.kv_cache_memory,
                                  runner.kv_bytes_per_block(c.block_size, c.kv_cache_dtype));
}

RequestLimits::Values limit_values(const EngineConfig& c, std::int32_t blocks, std::int32_t vocab,
                                   const ModelRunner& runner) {
  return {c.max_model_len,
          c.max_num_seqs,
          blocks,
          c.block_size,
          vocab,
          runner.kv_groups(),
          sched::max_step_tokens(sched_config(c)),
          c.attention_window};
}

std::unique_ptr<spec::Proposer> make_proposer(const spec::SpeculativeConfig& c, ModelRunner& runner,
                                              const sched::Scheduler& s) {
  switch (c.method) {
    case spec::SpecMethod::kNone:
      return nullptr;
    case spec::SpecMethod::kNgram:
      return std::make_unique<spec::NgramProposer>(c.prompt_lookup_min, c.prompt_lookup_max);
    case spec::SpecMethod::kDraftModel:
      return std::make_unique<RunnerProposer>(runner, s, "draft_model");
    case spec::SpecMethod::kLayerSkip:
      return std::make_unique<RunnerProposer>(runner, s, "layer_skip");
  }
  return nullptr;
}

}  // namespace

LLMEngine::LLMEngine(ModelRunner& runner, std::vector<TokenId> eos, const EngineConfig& config,
                     std::unique_ptr<spec::Proposer> proposer)
    : runner_(runner),
      eos_(std::move(eos)),
      config_(resolve(config, runner)),
      num_blocks_(blocks_for(config_, runner)),
      vocab_(runner.vocab_size()),
      limits_(limit_values(config_, num_blocks_, vocab_, runner)),
      sched_(sched_config(config_), {num_blocks_, config_.block_size, config_.enable_prefix_caching,
                                     nullptr, runner.kv_groups()}) {
  kv_bytes_ = runner_.init_kv({num_blocks_, config_.block_size, config_.kv_cache_dtype});
  if (config_.speculative.enabled()) {
    proposer_ =
        proposer ? std::move(proposer) : make_proposer(config_.speculative, runner_, sched_);
    adaptive_ = config_.speculative.adaptive;
    const double draft_cost = std::max(0.0, static_cast<double>(config_.speculative.draft_cost));
    draft_cost_ = config_.speculative.draft_cost_pinned
                      ? spec::DraftCostEstimate::pinned(draft_cost)
                      : spec::DraftCostEstimate(draft_cost);  // measured from here
    if (config_.speculative.row_cost >= 0)
      row_cost_ = spec::RowCostEstimate::pinned(config_.speculative.row_cost);
    spec_accepted_per_pos_.assign(
        static_cast<std::size_t>(config_.speculative.num_speculative_tokens), 0);
  }
  publish_stats();
}

void LLMEngine::forget_seq(kv::SeqId seq) {
  seqs_.erase(seq);
  if (proposer_) proposer_->release(seq.value());
}

std::shared_ptr<OutputChannel> LLMEngine::add_request(EngineRequest r) {
  return add_request(limits_.admit(std::move(r), monotonic_seconds()));
}

std::shared_ptr<OutputChannel> LLMEngine::add_request(AdmittedRequest admitted,
                                                      std::shared_ptr<OutputChannel> channel) {
  EngineRequest r = std::move(admitted).take();
  if (requests_.count(r.id) != 0)
    throw Error("request id " + to_string(r.id) + " is already in use");
  auto live = std::make_unique<Live>();
  live->id = r.id;
  live->channel = channel ? std::move(channel) : std::make_shared<OutputChannel>();
  live->num_prompt = static_cast<std::int32_t>(r.prompt.size());
  live->arrival = r.arrival_time;
  for (std::int32_t k = 0; k < r.n; ++k)
    live->samples.push_back(
        std::make_unique<SampleStream>(k, r.params, vocab_, eos_, r.prompt, r.grammar));
  sched::RequestSpec spec;
  spec.prompt = std::move(r.prompt);
  spec.max_tokens = *r.params.max_tokens;  // admitted: always set
  spec.n = r.n;
  spec.priority = r.priority;
  spec.arrival_time = r.arrival_time;
  spec.attention_window = r.attention_window.value_or(AttentionWindow{});
  spec.pool = r.pool;
  live->pool = r.pool;
  const kv::SeqId seq = sched_.add_request(spec);
  live->samples[0]->seq = seq;
  seqs_[seq] = {live.get(), 0};
  auto out = live->channel;
  requests_.emplace(r.id, std::move(live));
  return out;
}

// Ends one sample in the scheduler (its blocks freed now) and in the stream.
void LLMEngine::end_sample(Live& r, SampleStream& s, FinishReason reason) {
  if (s.done()) return;
  if (s.seq.valid()) {
    // A request not yet forked is one sequence for all samples: sample 0's
    // sequence stays while another sample still needs it.
    const bool shared =
        s.index() == 0 && std::any_of(r.samples.begin() + 1, r.samples.end(),
                                      [](const auto& o) { return !o->seq.valid() && !o->done(); });
    if (!shared || reason == FinishReason::kAbort || reason == FinishReason::kError) {
      sched_.finish_request(s.seq, reason);
      forget_seq(s.seq);
    }
  }
  s.finish(reason);
}

bool LLMEngine::abort(RequestId id) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return false;
  Live& r = *it->second;
  for (auto& s : r.samples) end_sample(r, *s, FinishReason::kAbort);
  emit(r);
  publish_stats();
  return true;
}

void LLMEngine::abort_all() {
  std::vector<RequestId> ids;
  for (const auto& [id, r] : requests_) ids.push_back(id);
  for (RequestId id : ids) abort(id);
}

bool LLMEngine::finish_sample(RequestId id, std::int32_t index) {
  auto it = requests_.find(id);
  if (it == requests_.end() || index < 0 ||
      static_cast<std::size_t>(index) >= it->second->samples.size())
    return false;
  Live& r = *it->second;
  SampleStream& s = *r.samples[static_cast<std::size_t>(index)];
  if (s.done()) return false;
  end_sample(r, s, FinishReason::kStop);
  emit(r);
  publish_stats();
  return true;
}

void LLMEngine::run_until_idle() {
  while (has_unfinished()) {
    if (!step()) FOLIO_CHECK(!has_unfinished(), "engine made no progress with live requests");
  }
}

void LLMEngine::emit(Live& r, const std::string& error) {
  RequestOutput out;
  out.request_id = r.id;
  out.num_prompt_tokens = r.num_prompt;
  out.num_cached_tokens = std::max(r.num_cached, 0);
  out.error = error;
  bool all_done = true;
  for (auto& s : r.samples) {
    if (s->has_pending()) {
      SampleDelta d = s->take_pending();
      if (!d.token_ids.empty() && r.first_token < 0) r.first_token = monotonic_seconds();
      out.samples.push_back(std::move(d));
    }
    all_done = all_done && s->done();
  }
  out.finished = all_done;
  if (out.samples.empty() && !all_done) return;
  if (all_done) {
    const double now = monotonic_seconds();
    RequestTiming t;
    if (r.first_scheduled >= 0) t.queued_s = std::max(r.first_scheduled - r.arrival, 0.0);
    if (r.first_token >= 0) {
      t.prefill_s = std::max(r.first_token - std::max(r.first_scheduled, r.arrival), 0.0);
      t.decode_s = std::max(now - r.first_token, 0.0);
    }
    out.timing = t;
    // The mean when every prompt position was pooled (not after an abort or error).
    if (r.pool && error.empty() && r.pooled_tokens == r.num_prompt && r.num_prompt > 0) {
      out.pooled.resize(r.pooled_sum.size());
      for (std::size_t c = 0; c < r.pooled_sum.size(); ++c)
        out.pooled[c] = static_cast<float>(r.pooled_sum[c] / r.num_prompt);
    }
  }
  const RequestId id = r.id;
  r.channel->push(std::move(out));
  if (all_done) requests_.erase(id);  // `r` is gone
}

EngineStats LLMEngine::stats() const {
  std::lock_guard lock(stats_mu_);
  return stats_;
}

void LLMEngine::publish_stats() {
  const kv::KvStats kv = sched_.kv().stats();
  EngineStats s;
  s.num_running = sched_.num_running();
  s.num_waiting = sched_.num_waiting();
  s.kv_blocks_total = kv.blocks_total;
  s.kv_blocks_used = kv.blocks_used;
  s.kv_cache_usage = kv.blocks_total > 0 ? double(kv.blocks_used) / kv.blocks_total : 0.0;
  s.kv_live_tokens = kv.live_tokens;
  s.kv_allocated_slots = kv.allocated_slots;
  s.prefix_cache_queries = kv.prefix_query_tokens;
  s.prefix_cache_hits = kv.prefix_hit_tokens;
  s.num_preemptions = sched_.num_preemptions();
  s.num_steps = steps_;
  s.num_batched_tokens = batched_;
  s.num_generated_tokens = generated_;
  s.stage = stage_;
  s.spec_num_drafts = spec_drafts_;
  s.spec_num_draft_tokens = spec_draft_tokens_;
  s.spec_num_accepted_tokens = spec_accepted_;
  s.spec_accepted_per_pos = spec_accepted_per_pos_;
  if (proposer_) {
    s.spec_row_cost = row_cost_.value();
    s.spec_draft_cost = draft_cost_.value(row_cost_.one_row_seconds());
  }
  std::lock_guard lock(stats_mu_);
  stats_ = s;
}

}  // namespace folio::engine
