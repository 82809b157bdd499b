// server/generation_job.cpp: engine outputs -> OpenAI responses for one request.
#include "server/generation_job.h"

#include <algorithm>

#include "base/timer.h"
#include "server/api_error.h"
#include "server/engine_submit.h"
#include "server/sse.h"

namespace folio::server {

GenerationJob::GenerationJob(ServerContext& ctx, ServedModel& target, GenerationRequest req)
    : ctx_(ctx), target_(target), req_(std::move(req)) {
  meta_.kind = req_.kind;
  meta_.id = ctx_.response_id(req_.kind == ApiKind::kChat ? "chatcmpl-" : "cmpl-");
  meta_.created = unix_now();
  meta_.model = req_.model;
  meta_.include_usage = req_.include_usage;
  arrival_ = monotonic_seconds();
  rng_.seed(std::random_device{}());
  for (std::size_t p = 0; p < req_.prompts.size(); ++p) {
    // Echo puts the prompt text first, so completions' text offsets start after it.
    engine::OutputOptions opt;
    opt.skip_special_tokens = req_.skip_special_tokens;
    opt.text_offset_base = req_.echo ? req_.prompt_texts[p].size() : 0;
    Engine e;
    e.out = std::make_unique<engine::OutputProcessor>(*target_.model.tokenizer, req_.params, req_.n,
                                                      opt);
    e.prompt_tokens = static_cast<std::int32_t>(req_.prompts[p].size());
    engines_.push_back(std::move(e));
    for (std::int32_t s = 0; s < req_.n; ++s) {
      Choice c;
      if (req_.echo) c.text = req_.prompt_texts[p];
      if (req_.stream && req_.tool_output) c.tools.emplace(req_.tool_output->format);
      choices_.push_back(std::move(c));
    }
  }
}

GenerationJob::~GenerationJob() {
  for (auto& e : engines_) {
    if (e.channel) e.channel->set_notify(nullptr);
  }
  release_all(!done_);
}

void GenerationJob::submit() {
  std::vector<engine::EngineRequest> requests;
  for (std::size_t i = 0; i < req_.prompts.size(); ++i) {
    engine::EngineRequest er;
    er.id = ctx_.next_request_id();
    er.prompt = req_.prompts[i];
    er.params = req_.params;
    if (!er.params.max_tokens && req_.default_max_tokens) {
      // The default never makes a request too long: it takes what the context leaves.
      const std::int64_t left =
          static_cast<std::int64_t>(target_.engine.limits().values().max_model_len) -
          static_cast<std::int64_t>(er.prompt.size());
      if (left > 0) {
        er.params.max_tokens =
            static_cast<std::int32_t>(std::min<std::int64_t>(*req_.default_max_tokens, left));
      }
    }
    if (probe_) er.params.logprobs = std::max(er.params.logprobs.value_or(0), 2);
    er.n = req_.n;
    er.priority = req_.priority;
    er.attention_window = req_.attention_window;
    er.grammar = req_.grammar;
    er.arrival_time = arrival_;
    requests.push_back(std::move(er));
  }
  std::vector<engine::AdmittedRequest> admitted =
      admit_requests(ctx_, target_, std::move(requests), arrival_);
  // From here on the destructor releases every slot (and aborts what was submitted).
  for (std::size_t i = 0; i < admitted.size(); ++i) engines_[i].id = admitted[i].request().id;
  for (std::size_t i = 0; i < admitted.size(); ++i)
    engines_[i].channel = target_.engine.submit(std::move(admitted[i]));
  std::int64_t prompt_tokens = 0;
  for (const auto& p : req_.prompts) prompt_tokens += static_cast<std::int64_t>(p.size());
  target_.metrics.add_prompt_tokens(prompt_tokens);
  target_.metrics.add_stage_seconds("tokenize", req_.tokenize_seconds);
}

void GenerationJob::attach(const std::function<void()>& notify) {
  for (auto& e : engines_) e.channel->set_notify(notify);
}

void GenerationJob::cancel() {
  if (!done_) release_all(true);
  done_ = true;
}

void GenerationJob::release_all(bool aborted) {
  if (released_) return;
  released_ = true;
  for (auto& e : engines_) {
    if (e.finished || !e.id.valid()) continue;
    if (aborted && e.channel) {
      target_.engine.abort(e.id);
      target_.metrics.request_finished("abort");
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
      TextDelta d;
      d.text = choices_[c].text;
      out += sse_data(delta_chunk(meta_, idx, d, false));
    }
  }
}

void GenerationJob::probe_confidence() {
  probe_ = true;
  meters_.assign(choices_.size(), ConfidenceMeter{});
}

std::vector<Confidence> GenerationJob::confidence() const {
  std::vector<Confidence> out;
  for (const ConfidenceMeter& m : meters_) out.push_back(m.result());
  return out;
}

JobOutput GenerationJob::poll() {
  JobOutput out = poll_now();
  if (!probe_) return out;
  held_ += out.bytes;
  if (!out.done) return JobOutput{};
  out.bytes = std::move(held_);
  held_.clear();
  return out;
}

JobOutput GenerationJob::poll_now() {
  JobOutput out;
  if (done_) {
    out.done = true;
    return out;
  }
  if (!started_) start_frames(out.bytes);
  bool all_finished = true;
  for (std::size_t e = 0; e < engines_.size(); ++e) {
    if (!engines_[e].finished) {
      for (const engine::RequestOutput& item : engines_[e].channel->drain())
        apply(e, item, out.bytes);
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

void GenerationJob::apply(std::size_t e, const engine::RequestOutput& item, std::string& out) {
  Engine& eng = engines_[e];
  if (eng.finished) return;
  if (item.num_prompt_tokens > 0) eng.prompt_tokens = item.num_prompt_tokens;
  eng.cached_tokens = item.num_cached_tokens;
  const double detok_before = eng.out->detokenize_seconds();
  std::vector<TextDelta> deltas = eng.out->apply(item);
  target_.metrics.add_stage_seconds("detokenize", eng.out->detokenize_seconds() - detok_before);
  for (TextDelta& d : deltas) apply_delta(e, std::move(d), out);
  if (!item.error.empty()) error_ = item.error;
  if (error_.empty() && !eng.out->error().empty()) {
    error_ = eng.out->error();  // a token without text: stop generating what cannot be shown
    target_.engine.abort(eng.id);
  }
  if (item.finished) finish_engine(e, item);
}

void GenerationJob::apply_delta(std::size_t e, TextDelta d, std::string& out) {
  Engine& eng = engines_[e];
  const std::size_t ci = e * static_cast<std::size_t>(req_.n) + static_cast<std::size_t>(d.index);
  Choice& c = choices_[ci];
  if (probe_) {
    for (const engine::LogprobText& lp : d.logprobs) {
      const auto top = [&](std::size_t k) -> std::optional<double> {
        if (k < lp.top.size()) return lp.top[k].logprob;
        return std::nullopt;
      };
      meters_[ci].add(lp.chosen.logprob, top(0), top(1));
    }
    // The client sees the logprobs it asked for, not the probe's.
    if (!req_.want_logprobs) {
      d.logprobs.clear();
    } else {
      for (engine::LogprobText& lp : d.logprobs) {
        const auto keep = std::min(lp.top.size(), static_cast<std::size_t>(req_.top_logprobs));
        lp.top.erase(lp.top.begin() + static_cast<std::ptrdiff_t>(keep), lp.top.end());
      }
    }
  }
  const double now = monotonic_seconds();
  if (!d.token_ids.empty()) {
    target_.metrics.add_generation_tokens(static_cast<std::int64_t>(d.token_ids.size()));
    if (eng.first_token == 0) {
      eng.first_token = now;
      target_.metrics.observe_ttft(now - arrival_);
    } else if (c.last_token > 0) {
      target_.metrics.observe_itl((now - c.last_token) / static_cast<double>(d.token_ids.size()));
    }
    c.last_token = now;
  }
  if (d.stop_string_hit) target_.engine.finish_sample(eng.id, d.index);
  if (d.finish != FinishReason::kNone) c.finish = d.finish;
  c.text += d.text;
  const bool has_logprobs = req_.want_logprobs && !d.logprobs.empty();
  if (req_.stream && c.tools) {
    stream_with_tools(ci, std::move(d), out);
  } else if (req_.stream) {
    if (!d.text.empty() || d.finish != FinishReason::kNone || has_logprobs) {
      out += sse_data(delta_chunk(meta_, static_cast<std::int32_t>(ci), d, req_.want_logprobs));
    }
  } else if (has_logprobs) {
    d.text.clear();
    c.pieces.push_back(std::move(d));
  }
}

// Text that may be a tool call is held (ToolCallStream); when the choice
// ends, what was held goes out as content or as tool-call deltas, then the
// closing chunk ("tool_calls" when there were calls).
void GenerationJob::stream_with_tools(std::size_t ci, TextDelta d, std::string& out) {
  Choice& c = choices_[ci];
  const auto idx = static_cast<std::int32_t>(ci);
  const FinishReason finish = d.finish;
  d.finish = FinishReason::kNone;
  d.text = c.tools->feed(d.text);
  ParsedOutput parsed;
  if (finish != FinishReason::kNone) {
    parsed = c.tools->finish(req_.tool_output->names);
    d.text += parsed.content;
  }
  if (!d.text.empty() || (req_.want_logprobs && !d.logprobs.empty())) {
    out += sse_data(delta_chunk(meta_, idx, d, req_.want_logprobs));
  }
  if (finish == FinishReason::kNone) return;
  const bool called = !parsed.calls.empty();
  if (called) out += sse_data(tool_calls_chunk(meta_, idx, with_ids(std::move(parsed.calls))));
  out += sse_data(finish_chunk(meta_, idx, called ? "tool_calls" : finish_reason_name(finish)));
}

std::vector<ToolCall> GenerationJob::with_ids(std::vector<ToolCall> calls) {
  for (ToolCall& call : calls) call.id = new_tool_call_id(rng_);
  return calls;
}

void GenerationJob::finish_engine(std::size_t e, const engine::RequestOutput& item) {
  Engine& eng = engines_[e];
  eng.finished = true;
  ctx_.admission.release(eng.id);
  const double now = monotonic_seconds();
  target_.metrics.observe_e2e(now - arrival_);
  if (item.timing) target_.metrics.observe_timing(*item.timing);
  target_.metrics.request_finished(
      finish_reason_name(choices_[e * static_cast<std::size_t>(req_.n)].finish));
}

Usage GenerationJob::usage() const {
  Usage u;
  for (const auto& e : engines_) {
    u.prompt_tokens += e.prompt_tokens;
    u.cached_tokens += e.cached_tokens;
    for (std::int32_t k = 0; k < e.out->n(); ++k)
      u.completion_tokens += e.out->sample(k).num_tokens();
  }
  return u;
}

std::optional<std::pair<int, std::string>> GenerationJob::failure() const {
  if (!error_.empty()) return std::pair{500, "engine error: " + error_};
  if (!ctx_.draining) return std::nullopt;
  for (const Choice& c : choices_) {
    if (c.finish == FinishReason::kAbort) {
      return std::pair{503, std::string("the server shut down before the request finished "
                                        "(--shutdown-grace or a second signal)")};
    }
  }
  return std::nullopt;
}

std::string GenerationJob::final_frames() {
  std::string out;
  if (const auto f = failure()) out += sse_data(error_body(f->first, f->second));
  if (req_.include_usage) out += sse_data(usage_chunk(meta_, usage()));
  out += sse_done();
  return out;
}

JobOutput GenerationJob::final_body() {
  if (const auto f = failure()) {
    if (f->first == 500) ctx_.log.error("request " + meta_.id + ": " + f->second);
    return JobOutput{.bytes = error_body(f->first, f->second), .done = true, .status = f->first};
  }
  std::vector<FinalChoice> fc;
  for (std::size_t i = 0; i < choices_.size(); ++i) {
    FinalChoice f{.index = static_cast<std::int32_t>(i),
                  .text = std::move(choices_[i].text),
                  .pieces = std::move(choices_[i].pieces),
                  .finish = choices_[i].finish,
                  .tool_calls = {}};
    if (req_.tool_output) {
      ParsedOutput p = parse_tool_calls(f.text, req_.tool_output->format, req_.tool_output->names);
      f.text = std::move(p.content);
      f.tool_calls = with_ids(std::move(p.calls));
    }
    fc.push_back(std::move(f));
  }
  return JobOutput{.bytes = server::final_body(meta_, fc, usage(), req_.want_logprobs),
                   .done = true};
}

}  // namespace folio::server
