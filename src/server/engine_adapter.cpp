#include "server/engine_adapter.h"

#include <algorithm>
#include <utility>

#include "base/timer.h"

namespace folio::server {

namespace {

StreamItem to_stream_item(engine::RequestOutput&& o, double submitted_at) {
  StreamItem it;
  it.num_prompt_tokens = o.num_prompt_tokens;
  it.num_cached_tokens = o.num_cached_tokens;
  it.finished = o.finished;
  it.error = std::move(o.error);
  it.samples.reserve(o.samples.size());
  for (engine::SampleDelta& d : o.samples) {
    SampleDelta s;
    s.index = d.index;
    s.tokens = std::move(d.token_ids);
    s.logprobs = std::move(d.logprobs);
    s.finish = d.finish;
    it.samples.push_back(std::move(s));
  }
  if (o.finished) {
    RequestTiming t;
    t.queued_s = o.queue_s;
    if (o.ttft_s > 0) {
      t.prefill_s = std::max(o.ttft_s - o.queue_s, 0.0);
      t.decode_s = std::max(monotonic_seconds() - submitted_at - o.ttft_s, 0.0);
    }
    it.timing = t;
  }
  return it;
}

}  // namespace

EngineAdapter::EngineAdapter(engine::EngineLoop& loop, double model_load_s)
    : loop_(loop), model_load_s_(model_load_s), last_progress_(monotonic_seconds()) {}

std::shared_ptr<RequestStream> EngineAdapter::submit(EngineRequest request) {
  engine::GenerateRequest g;
  g.id = request.id;
  g.prompt = std::move(request.prompt);
  g.params = std::move(request.params);
  g.params.stop.clear();  // matched by the server on detokenized text
  g.n = request.n;
  g.priority = request.priority;
  const double submitted_at = monotonic_seconds();
  std::shared_ptr<engine::OutputChannel> channel = loop_.add_request(std::move(g));
  auto stream = std::make_shared<RequestStream>();
  // The channel invokes this on the engine thread (or here, if items are
  // already waiting); the channel is alive while it runs, so a raw pointer
  // avoids a reference cycle channel -> callback -> channel.
  engine::OutputChannel* raw = channel.get();
  channel->set_notify([raw, stream, submitted_at] {
    for (engine::RequestOutput& o : raw->drain()) {
      stream->push(to_stream_item(std::move(o), submitted_at));
    }
  });
  return stream;
}

EngineStats EngineAdapter::stats() const {
  const engine::EngineStats e = loop_.stats();
  EngineStats s;
  s.num_running = e.num_running;
  s.num_waiting = e.num_waiting;
  s.kv_cache_usage = e.kv_cache_usage;
  s.prefix_cache_queries = static_cast<std::uint64_t>(std::max<std::int64_t>(e.prefix_cache_queries, 0));
  s.prefix_cache_hits = static_cast<std::uint64_t>(std::max<std::int64_t>(e.prefix_cache_hits, 0));
  s.num_preemptions = static_cast<std::uint64_t>(std::max<std::int64_t>(e.num_preemptions, 0));
  s.num_steps = e.num_steps;
  s.stage_seconds = e.stage.named();
  s.stage_seconds.emplace_back("model_load", model_load_s_);
  return s;
}

bool EngineAdapter::healthy() const {
  const engine::EngineStats e = loop_.stats();
  const double now = monotonic_seconds();
  std::lock_guard lock(mu_);
  if (e.num_steps != last_steps_ || (e.num_running == 0 && e.num_waiting == 0)) {
    last_steps_ = e.num_steps;
    last_progress_ = now;
  }
  return now - last_progress_ < kStallSeconds;
}

}  // namespace folio::server
