// engine/engine_step.cpp: LLMEngine::step(), the loop of DESIGN.md.
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
  for (const sched::ScheduledRequest& s : plan.requests) {  // prefix hit, known once admitted
    Live* r = seqs_.at(s.id).req;
    if (r->num_cached < 0) r->num_cached = std::max(sched_.find(s.id)->num_cached_tokens, 0);
    if (r->queued < 0) r->queued = monotonic_seconds() - r->added_at;
  }
  sched::ModelRunnerOutput result;
  try {
    sw.reset();
    cache_.apply(plan);  // 2
    cache_.bind(plan);
    build_batch(plan);
    stage_.prepare += sw.seconds();
    const std::span<const float> logits = model_.forward(batch_, cache_, ws_, pool_);  // 3
    stage_.attention += ws_.times.attention;
    stage_.ffn += ws_.times.ffn;
    stage_.lm_head += ws_.times.lm_head;
    batched_ += batch_.size();
    result = sample(plan, logits);  // 4
  } catch (const std::exception& e) {
    fail_plan(plan, e.what());
    publish_stats();
    return true;
  }
  sw.reset();
  commit(plan, result);  // 5, 6
  stage_.update += sw.seconds();
  publish_stats();
  return !plan.requests.empty();
}

// Batch sequence id i is plan.requests[i]; the last token of a request that
// samples is a logit row, so logits come back in plan order.
void LLMEngine::build_batch(const sched::SchedulerOutput& plan) {
  batch_.clear();
  for (std::size_t i = 0; i < plan.requests.size(); ++i) {
    const sched::ScheduledRequest& s = plan.requests[i];
    for (std::int32_t j = 0; j < s.num_tokens(); ++j) {
      const bool last = j + 1 == s.num_tokens();
      batch_.add(s.tokens[static_cast<std::size_t>(j)], s.start_pos + j,
                 static_cast<std::int32_t>(i), s.sample && last);
    }
  }
}

sched::ModelRunnerOutput LLMEngine::sample(const sched::SchedulerOutput& plan,
                                           std::span<const float> logits) {
  sched::ModelRunnerOutput out;
  const auto n_vocab = static_cast<std::size_t>(vocab_);
  std::size_t row = 0;
  for (const sched::ScheduledRequest& s : plan.requests) {
    if (!s.sample) continue;
    const SeqRef ref = seqs_.at(s.id);
    const auto row_logits = logits.subspan(row++ * n_vocab, n_vocab);
    sched::RequestResult rr{s.id, {}};
    // Before the fork one sequence draws for all n samples, each with its own RNG.
    const std::int32_t first = s.num_samples > 1 ? 0 : ref.index;
    for (std::int32_t k = first; k < first + s.num_samples; ++k) {
      SampleStream& st = *ref.req->samples[static_cast<std::size_t>(k)];
      Stopwatch sw;
      const sampling::SampledToken t = st.draw(row_logits);
      stage_.sampling += sw.seconds();
      sw.reset();
      // A sample already finished (finish_sample before its fork) just ends.
      const FinishReason verdict = st.done() ? FinishReason::kStop : st.accept(t);
      stage_.detokenize += sw.seconds();
      rr.samples.push_back({t.id, verdict});
      ++generated_;
    }
    out.results.push_back(std::move(rr));
  }
  return out;
}

void LLMEngine::commit(const sched::SchedulerOutput& plan, const sched::ModelRunnerOutput& result) {
  const std::vector<sched::SequenceOutput> outs = sched_.update(plan, result);  // 5
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
    if (o.finish != FinishReason::kNone) seqs_.erase(o.id);
  for (Live* r : touched_) {  // 6: one item per request that advanced
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
  for (Live* r : failed) {
    for (auto& st : r->samples) {
      if (st->done()) continue;
      if (st->seq != 0) {
        sched_.finish_request(st->seq, FinishReason::kError);
        seqs_.erase(st->seq);
      }
      st->finish(FinishReason::kError);
    }
  }
  sched_.update(plan, {});
  for (Live* r : failed) {
    r->touched = false;
    emit(*r, "engine step failed: " + what);
  }
}

}  // namespace folio::engine
