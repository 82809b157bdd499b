// server/generation_job.cpp: engine deltas -> OpenAI responses for one request.
#include "server/generation_job.h"

#include "server/api_error.h"
#include "server/sse.h"

namespace folio::server {

GenerationJob::GenerationJob(ServerContext& ctx, GenerationRequest req)
    : ctx_(ctx), req_(std::move(req)) {
  meta_.kind = req_.kind;
  meta_.id = ctx_.response_id(req_.kind == ApiKind::kChat ? "chatcmpl-" : "cmpl-");
  meta_.created = unix_now();
  meta_.model = req_.model;
  meta_.include_usage = req_.include_usage;
  arrival_ = steady_seconds();
  for (std::size_t p = 0; p < req_.prompts.size(); ++p) {
    // Echo puts the prompt text first, so completions' text offsets start after it.
    const std::size_t base = req_.echo ? req_.prompt_texts[p].size() : 0;
    for (std::int32_t s = 0; s < req_.n; ++s) {
      Choice c;
      c.out = std::make_unique<ChoiceOutput>(*ctx_.model.tokenizer, req_.params,
                                             req_.skip_special_tokens, base);
      if (req_.echo) c.text = req_.prompt_texts[p];
      choices_.push_back(std::move(c));
    }
  }
}

GenerationJob::~GenerationJob() {
  for (auto& e : engines_) {
    if (e.stream) e.stream->set_notify(nullptr);
  }
  release_all(!done_);
}

void GenerationJob::submit() {
  if (ctx_.draining) throw ApiError(503, "the server is shutting down");
  std::vector<RequestId> ids;
  for (std::size_t i = 0; i < req_.prompts.size(); ++i) ids.push_back(ctx_.next_request_id());
  if (!ctx_.admission.try_acquire(ids)) {
    throw ApiError(429, "the server is at capacity (" + std::to_string(ctx_.config.max_queue) +
                            " requests in flight, --max-queue); retry later");
  }
  for (std::size_t i = 0; i < req_.prompts.size(); ++i) {
    Engine e;
    e.id = ids[i];
    engines_.push_back(std::move(e));  // before submit: the destructor releases all ids
  }
  for (std::size_t i = 0; i < req_.prompts.size(); ++i) {
    EngineRequest er;
    er.id = ids[i];
    er.prompt = req_.prompts[i];
    er.params = req_.params;
    er.params.max_tokens = req_.max_tokens[i];
    er.n = req_.n;
    er.arrival_time = arrival_;
    er.priority = req_.priority;
    try {
      engines_[i].stream = ctx_.engine.submit(std::move(er));
    } catch (const EngineOverloaded& e) {
      throw ApiError(503, e.what());
    } catch (const Error& e) {
      throw ApiError(400, e.what());
    }
    engines_[i].prompt_tokens = static_cast<std::int32_t>(req_.prompts[i].size());
  }
  std::int64_t prompt_tokens = 0;
  for (const auto& p : req_.prompts) prompt_tokens += static_cast<std::int64_t>(p.size());
  ctx_.metrics.add_prompt_tokens(prompt_tokens);
  ctx_.metrics.add_stage_seconds("tokenize", req_.tokenize_seconds);
}

void GenerationJob::attach(const std::function<void()>& notify) {
  for (auto& e : engines_) e.stream->set_notify(notify);
}

void GenerationJob::cancel() {
  if (!done_) release_all(true);
  done_ = true;
}

void GenerationJob::release_all(bool aborted) {
  if (released_) return;
  released_ = true;
  for (auto& e : engines_) {
    if (e.finished) continue;
    if (aborted && e.stream) {
      ctx_.engine.abort(e.id);
      ctx_.metrics.request_finished("abort");
    }
    ctx_.admission.release(e.id);
  }
}

void GenerationJob::start_frames(std::string& out) {
  started_ = true;
  if (!req_.stream) return;
  for (std::size_t c = 0; c < choices_.size(); ++c) {
    const auto idx = static_cast<std::int32_t>(c);
    if (req_.kind == ApiKind::kChat) {
      out += sse_data(chat_role_chunk(meta_, idx));
    } else if (req_.echo) {
      ChoiceDelta d;
      d.text = choices_[c].text;
      out += sse_data(delta_chunk(meta_, idx, d, *ctx_.model.tokenizer, false));
    }
  }
}

JobOutput GenerationJob::poll() {
  JobOutput out;
  if (done_) {
    out.done = true;
    return out;
  }
  if (!started_) start_frames(out.bytes);
  bool all_finished = true;
  for (std::size_t e = 0; e < engines_.size(); ++e) {
    if (!engines_[e].finished) {
      for (const StreamItem& item : engines_[e].stream->drain()) apply(e, item, out.bytes);
    }
    all_finished = all_finished && engines_[e].finished;
  }
  if (!all_finished) return out;
  done_ = true;
  if (!req_.stream) return final_body();
  out.bytes += final_frames();
  out.done = true;
  return out;
}

void GenerationJob::apply(std::size_t e, const StreamItem& item, std::string& out) {
  Engine& eng = engines_[e];
  if (eng.finished) return;
  if (item.num_prompt_tokens > 0) eng.prompt_tokens = item.num_prompt_tokens;
  eng.cached_tokens = item.num_cached_tokens;
  for (const SampleDelta& d : item.samples) {
    if (d.index >= 0 && d.index < req_.n) apply_sample(e, d, out);
  }
  if (!item.error.empty()) error_ = item.error;
  if (item.finished) finish_engine(e, item, out);
}

void GenerationJob::apply_sample(std::size_t e, const SampleDelta& d, std::string& out) {
  Engine& eng = engines_[e];
  const std::size_t ci = e * static_cast<std::size_t>(req_.n) + static_cast<std::size_t>(d.index);
  Choice& c = choices_[ci];
  if (c.out->finished()) return;
  const double now = steady_seconds();
  const double detok_before = c.out->detokenize_seconds();
  ChoiceDelta cd = c.out->apply(d);
  ctx_.metrics.add_stage_seconds("detokenize", c.out->detokenize_seconds() - detok_before);
  if (!cd.tokens.empty()) {
    ctx_.metrics.add_generation_tokens(static_cast<std::int64_t>(cd.tokens.size()));
    if (eng.first_token == 0) {
      eng.first_token = now;
      ctx_.metrics.observe_ttft(now - arrival_);
    } else if (c.last_token > 0) {
      ctx_.metrics.observe_itl((now - c.last_token) / static_cast<double>(cd.tokens.size()));
    }
    c.last_token = now;
  }
  if (cd.stop_string_hit) ctx_.engine.finish_sample(eng.id, d.index);
  if (cd.finish_reason) c.finish_reason = *cd.finish_reason;
  c.text += cd.text;
  const bool has_logprobs = req_.want_logprobs && !cd.logprobs.empty();
  if (req_.stream) {
    if (!cd.text.empty() || cd.finish_reason || has_logprobs) {
      out += sse_data(delta_chunk(meta_, static_cast<std::int32_t>(ci), cd, *ctx_.model.tokenizer,
                                  req_.want_logprobs));
    }
  } else if (has_logprobs) {
    cd.text.clear();
    c.pieces.push_back(std::move(cd));
  }
}

void GenerationJob::finish_engine(std::size_t e, const StreamItem& item, std::string& out) {
  Engine& eng = engines_[e];
  // Contract: every sample has finished by the final item; be robust if not.
  for (std::int32_t s = 0; s < req_.n; ++s) {
    Choice& c = choices_[e * static_cast<std::size_t>(req_.n) + static_cast<std::size_t>(s)];
    if (!c.out->finished()) {
      SampleDelta end;
      end.index = s;
      end.finish = item.error.empty() ? FinishReason::kAbort : FinishReason::kError;
      apply_sample(e, end, out);
    }
  }
  eng.finished = true;
  ctx_.admission.release(eng.id);
  const double now = steady_seconds();
  ctx_.metrics.observe_e2e(now - arrival_);
  if (item.timing) ctx_.metrics.observe_timing(*item.timing);
  ctx_.metrics.request_finished(choices_[e * static_cast<std::size_t>(req_.n)].finish_reason);
}

Usage GenerationJob::usage() const {
  Usage u;
  for (const auto& e : engines_) {
    u.prompt_tokens += e.prompt_tokens;
    u.cached_tokens += e.cached_tokens;
  }
  for (const auto& c : choices_) u.completion_tokens += c.out->num_tokens();
  return u;
}

std::string GenerationJob::final_frames() {
  std::string out;
  if (!error_.empty()) out += sse_data(error_body(500, "engine error: " + error_));
  if (req_.include_usage) out += sse_data(usage_chunk(meta_, usage()));
  out += sse_done();
  return out;
}

JobOutput GenerationJob::final_body() {
  if (!error_.empty()) {
    ctx_.log.error("request " + meta_.id + ": engine error: " + error_);
    return JobOutput{.bytes = error_body(500, "engine error: " + error_), .done = true, .status = 500};
  }
  std::vector<FinalChoice> fc;
  for (std::size_t i = 0; i < choices_.size(); ++i) {
    fc.push_back(FinalChoice{.index = static_cast<std::int32_t>(i),
                             .text = std::move(choices_[i].text),
                             .pieces = std::move(choices_[i].pieces),
                             .finish_reason = choices_[i].finish_reason});
  }
  return JobOutput{.bytes = server::final_body(meta_, fc, usage(), *ctx_.model.tokenizer,
                                                req_.want_logprobs),
                   .done = true};
}

}  // namespace folio::server
