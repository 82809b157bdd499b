#include "engine/paged_model_runner.h"

#include <algorithm>
#include <thread>

#include "base/error.h"
#include "base/timer.h"

namespace folio::engine {

namespace {

int resolve_threads(int threads) {
  if (threads < 0) throw Error("-t/--threads must be >= 0");
  return threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace

PagedModelRunner::PagedModelRunner(const model::Model& model, int threads)
    : PagedModelRunner(model, std::make_shared<kernels::ThreadPool>(resolve_threads(threads))) {}

PagedModelRunner::PagedModelRunner(const model::Model& model,
                                   std::shared_ptr<kernels::ThreadPool> pool)
    : model_(model), pool_(std::move(pool)) {
  FOLIO_CHECK(pool_ != nullptr, "a model runner needs a thread pool");
}

std::int32_t PagedModelRunner::vocab_size() const {
  return static_cast<std::int32_t>(model_.n_vocab());
}

std::int32_t PagedModelRunner::hidden_size() const {
  return static_cast<std::int32_t>(model_.config().n_embd);
}

std::int64_t PagedModelRunner::context_length() const {
  return static_cast<std::int64_t>(model_.config().n_ctx_train);
}

std::vector<kv::KvGroup> PagedModelRunner::kv_groups() const {
  return PagedKvCache::layout(model_.config()).groups;
}

std::int64_t PagedModelRunner::kv_bytes_per_block(std::int32_t block_size,
                                                  kernels::KvDtype dtype) const {
  std::size_t bytes = PagedKvCache::bytes_per_block(model_.config(), block_size, dtype);
  if (draft_model_ != nullptr)
    bytes += DraftKvCache::bytes_per_block(draft_model_->config(), block_size, dtype);
  return static_cast<std::int64_t>(bytes);
}

std::int64_t PagedModelRunner::init_kv(const KvLayout& layout) {
  FOLIO_CHECK(!cache_, "the KV pool is allocated once");
  cache_.emplace(model_.config(), layout.num_blocks, layout.block_size, layout.dtype);
  // The draft's K/V follows the table of group 0, which keeps every
  // position only when the model has a full-attention layer.
  if (draft_model_ != nullptr && cache_->groups().groups.front().window != 0)
    throw Error(
        "--speculative-config: method draft_model needs a target with full-attention "
        "layers; every layer of this model uses a sliding window");
  std::size_t bytes = cache_->total_bytes();
  if (draft_model_ != nullptr) {
    draft_kv_.emplace(draft_model_->config(), layout.num_blocks, layout.block_size, layout.dtype);
    bytes += draft_kv_->kv().total_bytes();
  }
  return static_cast<std::int64_t>(bytes);
}

// Batch sequence id i is plan.requests[i]; an entry's last num_logits tokens
// are logit rows, so logits come back in plan order; a pooled entry's tokens
// are one pool range (hidden sums in plan order too).
void PagedModelRunner::build_batch(const sched::SchedulerOutput& plan) {
  batch_.clear();
  for (std::size_t i = 0; i < plan.requests.size(); ++i) {
    const sched::ScheduledRequest& s = plan.requests[i];
    FOLIO_CHECK(s.num_logits >= 0 && s.num_logits <= s.num_tokens(),
                "logit rows beyond the tokens");
    const std::int32_t first_row = s.num_tokens() - s.num_logits;
    if (s.pool) batch_.pools.push_back({static_cast<std::int32_t>(batch_.size()), s.num_tokens()});
    for (std::int32_t j = 0; j < s.num_tokens(); ++j) {
      batch_.add(s.tokens[static_cast<std::size_t>(j)], s.start_pos + j,
                 static_cast<std::int32_t>(i), j >= first_row, s.attention_window);
    }
  }
}

RunnerOutput PagedModelRunner::execute(const sched::SchedulerOutput& plan) {
  FOLIO_CHECK(cache_.has_value(), "execute() before init_kv()");
  RunnerOutput out;
  Stopwatch sw;
  cache_->apply(plan);
  if (draft_kv_) draft_kv_->apply(plan);
  cache_->bind(plan);
  build_batch(plan);
  out.times.prepare = sw.seconds();
  if (batch_.empty()) return out;  // a plan of finishes only
  out.logits = model_.forward(batch_, *cache_, ws_, *pool_);
  out.pooled = ws_.pooled;
  out.times.attention = ws_.times.attention;
  out.times.ffn = ws_.times.ffn;
  out.times.lm_head = ws_.times.lm_head;
  return out;
}

void PagedModelRunner::enable_layer_skip(std::vector<std::size_t> layers, float p_min) {
  FOLIO_CHECK(draft_model_ == nullptr, "one drafter per runner");
  drafter_.emplace(model_, std::move(layers), p_min);
}

void PagedModelRunner::enable_draft_model(const model::Model& draft, float p_min,
                                          std::int32_t catch_up_rows) {
  FOLIO_CHECK(!cache_ && !drafter_, "the draft model is set up once, before the KV pool");
  if (catch_up_rows < 1) throw Error("draft model: the catch-up chunk must be >= 1 position");
  if (draft.n_vocab() != model_.n_vocab()) {
    throw Error("speculative decoding: the draft model has " + std::to_string(draft.n_vocab()) +
                " output rows, the target " + std::to_string(model_.n_vocab()) +
                " (they must share one vocabulary)");
  }
  draft_model_ = &draft;
  draft_catch_up_rows_ = catch_up_rows;
  drafter_.emplace(draft, spec::all_layers(draft), p_min);
}

spec::SpeculativeConfig PagedModelRunner::configure_speculation(spec::SpeculativeConfig c,
                                                                const model::Model* draft) {
  // A draft token's cost against a target step: weight bytes per token.
  const auto cost_of = [&](std::size_t draft_bytes) {
    if (c.draft_cost < 0)
      c.draft_cost = static_cast<float>(static_cast<double>(draft_bytes) /
                                        static_cast<double>(model_.forward_weight_bytes()));
  };
  if (c.method == spec::SpecMethod::kDraftModel) {
    if (draft == nullptr) throw Error("speculative decoding: method draft_model needs the model");
    enable_draft_model(*draft, c.draft_p_min);
    cost_of(draft->forward_weight_bytes());
    return c;
  }
  if (c.method != spec::SpecMethod::kLayerSkip) return c;
  const auto n_layer = static_cast<std::int32_t>(model_.config().n_layer);
  enable_layer_skip(spec::draft_layer_list(c, n_layer), c.draft_p_min);
  if (c.num_layers == 0) c.num_layers = spec::default_draft_layers(n_layer);
  cost_of(model_.forward_weight_bytes(drafter_->layers()));
  return c;
}

double PagedModelRunner::draft(std::span<DraftRequest> requests) {
  FOLIO_CHECK(cache_.has_value(), "draft() before init_kv()");
  if (!drafter_) return ModelRunner::draft(requests);  // throws: no drafter
  const Stopwatch sw;
  if (draft_kv_) {
    draft_with_own_kv(requests);
    return sw.seconds();
  }
  draft_seqs_.clear();
  draft_runs_.clear();
  for (const DraftRequest& r : requests) {
    draft_runs_.push_back(
        {static_cast<std::int32_t>(draft_seqs_.size()), {}, r.last(), r.pos(), r.k, {}, 0});
    draft_seqs_.push_back(r.seq);
  }
  cache_->bind(draft_seqs_);
  drafter_->draft(draft_runs_, *cache_, draft_ws_, *pool_);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    requests[i].out = std::move(draft_runs_[i].out);
    requests[i].rounds = draft_runs_[i].rounds;
    requests[i].caught_up = 0;  // the target's own K/V
  }
  return sw.seconds();
}

// A long catch-up runs in chunks of at most draft_catch_up_rows_ positions,
// alone, before the draft (as the target's prefill is chunked); returns
// where the rest begins (within one chunk of pos).
std::int32_t PagedModelRunner::catch_up(sched::SeqId seq, std::span<const TokenId> tokens,
                                        std::int32_t from, std::int32_t pos) {
  const std::int32_t chunk = draft_catch_up_rows_;
  if (pos - from <= chunk) return from;
  const sched::SeqId one[] = {seq};
  draft_kv_->kv().bind(one);
  while (pos - from > chunk) {
    batch_.clear();
    for (std::int32_t p = from; p < from + chunk; ++p)
      batch_.add(tokens[static_cast<std::size_t>(p)], p, 0, false);
    drafter_->model().forward(batch_, draft_kv_->kv(), draft_ws_, *pool_);
    draft_kv_->mark(seq, from, from + chunk);
    from += chunk;
  }
  return from;
}

// draft_model: each sequence catches up on what its draft K/V lacks
// (DraftKvCache::sync; a long catch-up in chunks first), then drafts; the catch-up is final, the
// K/V at the draft positions tentative until the next round confirms it.
void PagedModelRunner::draft_with_own_kv(std::span<DraftRequest> requests) {
  draft_seqs_.clear();
  draft_runs_.clear();
  draft_from_.clear();
  for (DraftRequest& r : requests) {
    const std::int32_t pos = r.pos();
    const std::int32_t synced = draft_kv_->sync(r.seq, r.tokens, pos);
    r.caught_up = pos - synced;
    const std::int32_t from = catch_up(r.seq, r.tokens, synced, pos);
    draft_runs_.push_back(
        {static_cast<std::int32_t>(draft_seqs_.size()),
         r.tokens.subspan(static_cast<std::size_t>(from), static_cast<std::size_t>(pos - from)),
         r.last(),
         pos,
         r.k,
         {},
         0});
    draft_from_.push_back(from);
    draft_seqs_.push_back(r.seq);
  }
  draft_kv_->kv().bind(draft_seqs_);
  drafter_->draft(draft_runs_, draft_kv_->kv(), draft_ws_, *pool_);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    spec::DraftRun& run = draft_runs_[i];
    draft_kv_->mark(requests[i].seq, draft_from_[i], run.pos);
    written_.assign(1, run.last);
    written_.insert(
        written_.end(), run.out.begin(),
        run.out.begin() +
            std::min<std::ptrdiff_t>(run.rounds - 1, static_cast<std::ptrdiff_t>(run.out.size())));
    draft_kv_->record_ahead(requests[i].seq, run.pos, written_);
    requests[i].out = std::move(run.out);
    requests[i].rounds = run.rounds;
  }
}

}  // namespace folio::engine
