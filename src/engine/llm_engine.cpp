// engine/llm_engine.cpp: construction, request admission, abort, stats.
// The step itself is in engine_step.cpp.
#include "engine/llm_engine.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "base/error.h"
#include "engine/kv_budget.h"
#include "base/timer.h"
#include "kv/kv_sizing.h"

namespace folio::engine {

namespace {

double now_s() { return monotonic_seconds(); }

EngineConfig resolve(EngineConfig c, const model::ModelConfig& m) {
  if (c.block_size < 1 || c.block_size > 1024) throw Error("--block-size must be in [1, 1024]");
  if (c.max_model_len <= 0) {
    c.max_model_len = m.n_ctx_train > 0
                          ? static_cast<std::int32_t>(std::min<std::uint64_t>(m.n_ctx_train, 1 << 20))
                          : kFallbackModelLen;
  }
  if (c.kv_cache_memory <= 0) {
    c.kv_cache_memory = default_kv_cache_memory(m, c.block_size, c.kv_cache_dtype, c.max_num_seqs,
                                                c.max_model_len);
  }
  if (c.threads <= 0) c.threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return c;
}

std::int32_t blocks_for(const EngineConfig& c, const model::ModelConfig& m) {
  const auto per_block =
      static_cast<std::int64_t>(PagedKvCache::bytes_per_block(m, c.block_size, c.kv_cache_dtype));
  return kv::kv_blocks_for_budget(c.kv_cache_memory, per_block);
}

sched::SchedulerConfig sched_config(const EngineConfig& c) {
  return {c.max_num_batched_tokens, c.max_num_seqs, c.max_model_len, c.scheduling_policy,
          c.long_prefill_token_threshold};
}

}  // namespace

LLMEngine::LLMEngine(const model::Model& model, const tokenizer::Tokenizer* tok,
                     std::vector<TokenId> eos, const EngineConfig& config)
    : model_(model), tok_(tok), eos_(std::move(eos)), config_(resolve(config, model.config())),
      num_blocks_(blocks_for(config_, model.config())),
      vocab_(static_cast<std::int32_t>(model.n_vocab())),
      sched_(sched_config(config_), {num_blocks_, config_.block_size, config_.enable_prefix_caching}),
      cache_(model.config(), num_blocks_, config_.block_size, config_.kv_cache_dtype),
      pool_(config_.threads) {
  publish_stats();
}

void LLMEngine::validate(const GenerateRequest& r) const {
  r.params.validate(vocab_);
  const auto prompt = static_cast<std::int64_t>(r.prompt.size());
  if (prompt == 0) throw Error("the prompt is empty");
  for (TokenId t : r.prompt) {
    if (t < 0 || t >= vocab_)
      throw Error("prompt token id " + std::to_string(t) + " is outside the vocabulary of " +
                  std::to_string(vocab_) + " tokens");
  }
  if (r.n < 1 || r.n > config_.max_num_seqs)
    throw Error("n = " + std::to_string(r.n) + " must be between 1 and --max-num-seqs (" +
                std::to_string(config_.max_num_seqs) + ")");
  if (prompt >= config_.max_model_len)
    throw Error("the prompt has " + std::to_string(prompt) + " tokens but --max-model-len is " +
                std::to_string(config_.max_model_len) + " (room is needed for one output token)");
  const std::int64_t max_tokens = r.params.max_tokens.value_or(config_.max_model_len - prompt);
  const std::int64_t total = prompt + max_tokens;
  if (total > config_.max_model_len)
    throw Error("request needs " + std::to_string(total) + " tokens (prompt " +
                std::to_string(prompt) + " + max_tokens " + std::to_string(max_tokens) +
                ") but --max-model-len is " + std::to_string(config_.max_model_len));
  const std::int64_t bs = config_.block_size;
  const std::int64_t blocks = (total - 1 + bs - 1) / bs;
  if (blocks > num_blocks_)
    throw Error("request needs " + std::to_string(blocks) + " KV blocks (" +
                std::to_string(total - 1) + " positions) but the KV cache holds only " +
                std::to_string(num_blocks_) +
                " blocks; raise --kv-cache-memory or lower max_tokens");
}

std::shared_ptr<OutputChannel> LLMEngine::add_request(GenerateRequest r,
                                                      std::shared_ptr<OutputChannel> channel) {
  validate(r);
  if (requests_.count(r.id) != 0)
    throw Error("request id " + std::to_string(r.id) + " is already in use");
  const auto prompt_len = static_cast<std::int32_t>(r.prompt.size());
  if (!r.params.max_tokens) r.params.max_tokens = config_.max_model_len - prompt_len;
  auto live = std::make_unique<Live>();
  live->id = r.id;
  live->channel = channel ? std::move(channel) : std::make_shared<OutputChannel>();
  live->num_prompt = prompt_len;
  live->added_at = now_s();
  for (std::int32_t k = 0; k < r.n; ++k)
    live->samples.push_back(
        std::make_unique<SampleStream>(k, r.params, vocab_, eos_, r.prompt, tok_));
  sched::RequestSpec spec;
  spec.prompt = std::move(r.prompt);
  spec.max_tokens = *r.params.max_tokens;
  spec.n = r.n;
  spec.priority = r.priority;
  spec.arrival_time = live->added_at;
  const sched::RequestId seq = sched_.add_request(spec);
  live->samples[0]->seq = seq;
  seqs_[seq] = {live.get(), 0};
  auto out = live->channel;
  requests_.emplace(r.id, std::move(live));
  return out;
}

bool LLMEngine::abort(RequestId id) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return false;
  Live& r = *it->second;
  for (auto& s : r.samples) {
    if (s->done()) continue;
    if (s->seq != 0) {
      sched_.abort(s->seq);  // frees its blocks now
      seqs_.erase(s->seq);
    }
    s->finish(FinishReason::kAbort);
  }
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
  if (s.seq != 0) {
    // A request not yet forked is one sequence for all samples: stop it only
    // when no other sample still needs it.
    const bool shared = index == 0 && std::any_of(r.samples.begin() + 1, r.samples.end(),
                                                  [](const auto& o) { return o->seq == 0 && !o->done(); });
    if (!shared) {
      sched_.finish_request(s.seq, FinishReason::kStop);
      seqs_.erase(s.seq);
    }
  }
  s.finish(FinishReason::kStop);
  emit(r);
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
      if (!d.token_ids.empty() && r.ttft == 0) r.ttft = now_s() - r.added_at;
      out.samples.push_back(std::move(d));
    }
    all_done = all_done && s->done();
  }
  out.ttft_s = r.ttft;
  out.queue_s = std::max(r.queued, 0.0);
  out.finished = all_done;
  if (out.samples.empty() && !all_done) return;
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
  std::lock_guard lock(stats_mu_);
  stats_ = s;
}

}  // namespace folio::engine
