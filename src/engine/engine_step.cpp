// engine/engine_step.cpp: LLMEngine::step(), the loop of DESIGN.md.
#include <algorithm>
#include <exception>
#include <string>

#include "base/error.h"
#include "base/timer.h"
#include "engine/llm_engine.h"

namespace folio::engine {

bool LLMEngine::step() {
  if (!sched_.has_unfinished()) {
    publish_stats();
    return false;
  }
  Stopwatch sw;
  const sched::SchedulerOutput plan = sched_.schedule();  // 1
  stage_.schedule += sw.seconds();
  ++steps_;
  const double now = monotonic_seconds();
  for (const sched::ScheduledRequest& s : plan.requests) {  // prefix hit, known once admitted
    Live* r = seqs_.at(s.id).req;
    if (r->num_cached < 0) r->num_cached = std::max(sched_.find(s.id)->num_cached_tokens, 0);
    if (r->first_scheduled < 0) r->first_scheduled = now;
  }
  sched::ModelRunnerOutput result;
  try {
    const RunnerOutput out = runner_.execute(plan);  // 2
    stage_.prepare += out.times.prepare;
    stage_.attention += out.times.attention;
    stage_.ffn += out.times.ffn;
    stage_.lm_head += out.times.lm_head;
    batched_ += static_cast<std::uint64_t>(plan.total_tokens);
    pool(plan, out.pooled);
    result = sample(plan, out.logits);  // 3
    observe_row_cost(plan, out.times);
  } catch (const std::exception& e) {
    fail_plan(plan, e.what());
    publish_stats();
    return true;
  }
  sw.reset();
  commit(plan, result);  // 4, 5
  stage_.update += sw.seconds();
  sw.reset();
  propose();  // 6
  stage_.propose += sw.seconds();
  publish_stats();
  return !plan.requests.empty();
}

// The runner returns each plan entry's num_logits rows in plan order; the
// next token comes from the entry's last row.
sched::ModelRunnerOutput LLMEngine::sample(const sched::SchedulerOutput& plan,
                                           std::span<const float> logits) {
  sched::ModelRunnerOutput out;
  const auto n_vocab = static_cast<std::size_t>(vocab_);
  std::size_t rows = 0;
  for (const sched::ScheduledRequest& s : plan.requests)
    rows += static_cast<std::size_t>(s.num_logits);
  if (logits.size() != rows * n_vocab) {
    throw Error("the model runner returned " + std::to_string(logits.size()) + " logits for " +
                std::to_string(rows) + " rows of " + std::to_string(n_vocab));
  }
  std::size_t row = 0;
  for (const sched::ScheduledRequest& s : plan.requests) {
    row += static_cast<std::size_t>(s.num_logits);
    if (!s.sample()) continue;
    const SeqRef ref = seqs_.at(s.id);
    sched::RequestResult rr{s.id, {}, 0};
    if (s.num_samples == 1) {  // one sample: its token, or its drafts verified
      SampleStream& st = *ref.req->samples[static_cast<std::size_t>(ref.index)];
      const std::size_t first_row = row - static_cast<std::size_t>(s.num_logits);
      verify(s, st, logits.subspan(first_row * n_vocab, s.num_logits * n_vocab), n_vocab, rr);
      out.results.push_back(std::move(rr));
      continue;
    }
    FOLIO_CHECK(s.num_logits == 1, "drafts on a request that has not forked");
    const auto row_logits = logits.subspan((row - 1) * n_vocab, n_vocab);
    // Before the fork one sequence draws for all n samples, each with its own RNG.
    for (std::int32_t k = 0; k < s.num_samples; ++k) {
      SampleStream& st = *ref.req->samples[static_cast<std::size_t>(k)];
      Stopwatch sw;
      const sampling::SampledToken t = st.draw(row_logits);
      // A sample already finished (finish_sample before its fork) just ends.
      const FinishReason verdict = st.done() ? FinishReason::kStop : st.accept(t);
      stage_.sampling += sw.seconds();
      rr.samples.push_back({t.id, verdict});
      ++generated_;
    }
    out.results.push_back(std::move(rr));
  }
  return out;
}

// Adds each pooled entry's hidden-state sum to its request's. A request
// computed again from position 0 (preempted) starts over, so every prompt
// position counts once.
void LLMEngine::pool(const sched::SchedulerOutput& plan, std::span<const float> pooled) {
  const auto width = static_cast<std::size_t>(runner_.hidden_size());
  std::size_t entries = 0;
  for (const sched::ScheduledRequest& s : plan.requests) entries += s.pool ? 1 : 0;
  if (entries == 0) return;
  if (width == 0) throw Error("this model runner does not pool hidden states");
  if (pooled.size() != entries * width) {
    throw Error("the model runner returned " + std::to_string(pooled.size()) +
                " pooled values for " + std::to_string(entries) + " entries of " +
                std::to_string(width));
  }
  std::size_t at = 0;
  for (const sched::ScheduledRequest& s : plan.requests) {
    if (!s.pool) continue;
    Live& r = *seqs_.at(s.id).req;
    if (s.start_pos == 0 || r.pooled_sum.size() != width) {
      r.pooled_sum.assign(width, 0.0);
      r.pooled_tokens = 0;
    }
    for (std::size_t c = 0; c < width; ++c) r.pooled_sum[c] += pooled[at * width + c];
    r.pooled_tokens += s.num_tokens();
    ++at;
  }
}

// Row i of `logits` follows the entry's token at num_tokens - num_logits + i:
// row 0 decides the first draft, row num_spec is the target's own next
// token. Tokens are committed one at a time (penalties see each), and the
// run ends at the first rejection or stop.
void LLMEngine::verify(const sched::ScheduledRequest& s, SampleStream& st,
                       std::span<const float> logits, std::size_t vocab, sched::RequestResult& rr) {
  Stopwatch sw;
  const auto drafts = s.drafts();
  for (std::int32_t i = 0; i <= s.num_spec; ++i) {
    const auto row = logits.subspan(static_cast<std::size_t>(i) * vocab, vocab);
    SampleStream::Verified v;
    if (i < s.num_spec)
      v = st.verify(row, drafts[static_cast<std::size_t>(i)]);
    else
      v.token = st.draw(row);
    const FinishReason verdict = st.done() ? FinishReason::kStop : st.accept(v.token);
    rr.samples.push_back({v.token.id, verdict});
    ++generated_;
    if (v.accepted) {
      ++rr.num_accepted;
      ++spec_accepted_per_pos_[static_cast<std::size_t>(i)];
    }
    if (!v.accepted || verdict != FinishReason::kNone) break;
  }
  if (s.num_spec > 0) {
    st.acceptance.observe(s.num_spec, rr.num_accepted);
    ++spec_drafts_;
    spec_draft_tokens_ += static_cast<std::uint64_t>(s.num_spec);
    spec_accepted_ += static_cast<std::uint64_t>(rr.num_accepted);
  }
  stage_.sampling += sw.seconds();
}

// A step that ran one sequence's decode (one row, or one plus its drafts)
// tells what a verification row costs on this machine (spec/row_cost.h):
// the forward's seconds as the runner timed them, by rows.
void LLMEngine::observe_row_cost(const sched::SchedulerOutput& plan, const RunnerTimes& t) {
  if (!proposer_ || plan.requests.size() != 1) return;
  const sched::ScheduledRequest& s = plan.requests[0];
  if (s.num_samples == 1 && s.num_logits == s.num_tokens())
    row_cost_.observe(s.num_tokens(), t.prepare + t.attention + t.ffn + t.lm_head);
}

// Drafts for every caught-up single-sample sequence, as many as the load
// rule allows this step (spec::draft_tokens_per_request), its own record of
// accepted drafts makes worth a row and the draft's making (both costs
// measured; spec::AcceptanceEstimate) and max_tokens leaves room for; the
// next schedule() takes them.
void LLMEngine::propose() {
  if (!proposer_) return;
  const std::int32_t k = spec::draft_tokens_per_request(config_.speculative, sched_.num_running());
  if (k < 1) return;
  queries_.clear();
  query_streams_.clear();
  const bool with_model = config_.speculative.drafts_with_model();
  const bool lags = config_.speculative.method == spec::SpecMethod::kDraftModel;  // own K/V
  const spec::DraftCosts costs{row_cost_.value(), draft_cost_.value(row_cost_.one_row_seconds())};
  for (const sched::Request* r : sched_.running()) {
    const std::int32_t room = r->draft_room();
    if (!r->can_draft() || room < 1) continue;
    // A model drafter attends over every position of its K/V; a sequence
    // under a sink + window policy has released the middle of it.
    if (with_model && r->attention_window.on()) continue;
    const SeqRef& ref = seqs_.at(r->id);
    SampleStream& st = *ref.req->samples[static_cast<std::size_t>(ref.index)];
    const std::int32_t want =
        adaptive_ ? st.acceptance.draft_length(std::min(k, room), costs) : std::min(k, room);
    if (want < 1) continue;
    // A draft model that fell behind (no drafts while the batch was full)
    // catches up only where the rest of the output repays it. Behind by a
    // round (the accepted drafts it wrote) or a probe's idle steps (which
    // probe_pays charged) it just drafts: at the low acceptance that made
    // the request idle, the rest would never repay a probe.
    const std::int32_t lag = r->num_tokens() - st.drafted_to;
    if (adaptive_ && lags &&
        lag > spec::AcceptanceEstimate::kProbeEvery + config_.speculative.num_speculative_tokens +
                  1 &&
        !spec::catch_up_pays(st.acceptance.value(), want, costs, st.acceptance.spare, lag,
                             r->max_tokens - r->num_output_tokens(), sched_.num_running()))
      continue;
    st.drafted_to = r->num_tokens();
    queries_.push_back({r->id.value(), r->tokens, want, {}, 0});
    query_streams_.push_back(&st);
  }
  if (queries_.empty()) return;
  proposer_->propose(queries_);
  // One sequence's caught-up proposal times a draft forward on this machine
  // (spec/draft_cost.h): a batch's forwards share their weight reads, and a
  // long catch-up is not drafting.
  if (queries_.size() == 1 && queries_[0].caught_up <= 1)
    draft_cost_.observe(queries_[0].forwards, queries_[0].seconds);
  for (std::size_t i = 0; i < queries_.size(); ++i) {
    spec::DraftQuery& q = queries_[i];
    query_streams_[i]->acceptance.observe_forwards(q.forwards,
                                                   static_cast<std::int32_t>(q.draft.size()));
    if (q.draft.empty()) continue;
    if (static_cast<std::int32_t>(q.draft.size()) > q.max_tokens) q.draft.resize(q.max_tokens);
    sched_.set_spec_tokens(kv::SeqId{q.key}, std::move(q.draft));
  }
}

void LLMEngine::commit(const sched::SchedulerOutput& plan, const sched::ModelRunnerOutput& result) {
  const std::vector<sched::SequenceOutput> outs = sched_.update(plan, result);  // 4
  for (const sched::SequenceOutput& o : outs) {
    auto it = seqs_.find(o.id);
    if (it == seqs_.end()) {  // a child forked from o.parent_id
      Live* r = seqs_.at(o.parent_id).req;
      r->samples[static_cast<std::size_t>(o.sample_index)]->seq = o.id;
      it = seqs_.emplace(o.id, SeqRef{r, o.sample_index}).first;
    }
    const SeqRef ref = it->second;
    SampleStream& st = *ref.req->samples[static_cast<std::size_t>(ref.index)];
    if (o.finish != FinishReason::kNone) st.finish(o.finish);
    if (!ref.req->touched) {
      ref.req->touched = true;
      touched_.push_back(ref.req);
    }
  }
  for (const sched::SequenceOutput& o : outs)
    if (o.finish != FinishReason::kNone) forget_seq(o.id);
  for (Live* r : touched_) {  // 5: one item per request that advanced
    r->touched = false;
    emit(*r);  // may erase r
  }
  touched_.clear();
}

// The step failed before update(): every scheduled request ends with
// kError (its blocks freed), and the plan is closed so the next step works.
void LLMEngine::fail_plan(const sched::SchedulerOutput& plan, const std::string& what) {
  std::vector<Live*> failed;
  for (const sched::ScheduledRequest& s : plan.requests) {
    auto it = seqs_.find(s.id);
    if (it == seqs_.end()) continue;
    Live* r = it->second.req;
    if (r->touched) continue;
    r->touched = true;
    failed.push_back(r);
  }
  for (Live* r : failed)
    for (auto& st : r->samples) end_sample(*r, *st, FinishReason::kError);
  sched_.update(plan, {});
  for (Live* r : failed) {
    r->touched = false;
    emit(*r, "engine step failed: " + what);
  }
}

}  // namespace folio::engine
