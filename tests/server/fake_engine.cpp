// tests/server/fake_engine.cpp: the scripted engine loop.
#include "fake_engine.h"

#include <algorithm>

#include "base/error.h"
#include "base/timer.h"

namespace folio::server::testing {

FakeEngine::FakeEngine(FakeEngineOptions opts) : opts_(std::move(opts)), limits_(opts_.limits) {
  thread_ = std::thread([this] { loop(); });
}

FakeEngine::~FakeEngine() {
  {
    std::lock_guard l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::shared_ptr<OutputChannel> FakeEngine::submit(engine::AdmittedRequest admitted) {
  EngineRequest request = std::move(admitted).take();
  FOLIO_CHECK(request.params.max_tokens.has_value(), "admitted requests have max_tokens");
  auto stream = std::make_shared<OutputChannel>();
  std::lock_guard l(mu_);
  submitted_.push_back(request);
  Live lv;
  lv.generated.assign(static_cast<std::size_t>(request.n), 0);
  lv.done.assign(static_cast<std::size_t>(request.n), false);
  lv.req = std::move(request);
  lv.stream = stream;
  const RequestId id = lv.req.id;
  live_.emplace(id, std::move(lv));
  cv_.notify_all();
  return stream;
}

void FakeEngine::abort(RequestId id) {
  std::lock_guard l(mu_);
  if (auto it = live_.find(id); it != live_.end()) it->second.abort = true;
}

void FakeEngine::finish_sample(RequestId id, std::int32_t sample_index) {
  std::lock_guard l(mu_);
  if (auto it = live_.find(id); it != live_.end()) it->second.finish_requested.insert(sample_index);
}

EngineStats FakeEngine::stats() const {
  std::lock_guard l(mu_);
  EngineStats s;
  // As a real engine reports: at most max_num_seqs run, the rest wait.
  const auto live = static_cast<std::int32_t>(live_.size());
  s.num_running = std::min(live, opts_.limits.max_num_seqs);
  s.num_waiting = live - s.num_running;
  s.kv_cache_usage = static_cast<double>(live_.size()) / 100.0;
  s.num_steps = steps_;
  s.prefix_cache_queries = 100;
  s.prefix_cache_hits = 25;
  s.stage.schedule = 0.5;
  s.stage.attention = 1.25;
  s.stage.ffn = 2.0;
  return s;
}

void FakeEngine::pause(bool p) {
  {
    std::lock_guard l(mu_);
    paused_ = p;
  }
  cv_.notify_all();
}

std::size_t FakeEngine::live() const {
  std::lock_guard l(mu_);
  return live_.size();
}

std::vector<EngineRequest> FakeEngine::submitted() const {
  std::lock_guard l(mu_);
  return submitted_;
}

std::set<RequestId> FakeEngine::aborted() const {
  std::lock_guard l(mu_);
  return aborted_;
}

bool FakeEngine::wait_aborted(std::size_t count, std::chrono::milliseconds timeout) const {
  std::unique_lock l(mu_);
  return cv_.wait_for(l, timeout, [&] { return aborted_.size() >= count; });
}

bool FakeEngine::wait_live(std::size_t count, std::chrono::milliseconds timeout) const {
  std::unique_lock l(mu_);
  return cv_.wait_for(l, timeout, [&] { return live_.size() == count; });
}

RequestOutput FakeEngine::step(Live& l, bool& finished) {
  RequestOutput item;
  item.request_id = l.req.id;
  item.num_prompt_tokens = static_cast<std::int32_t>(l.req.prompt.size());
  item.num_cached_tokens = opts_.cached_tokens;
  const auto& p = l.req.params;
  const double now = monotonic_seconds();
  if (l.first_scheduled == 0) l.first_scheduled = now;
  for (std::int32_t s = 0; s < l.req.n; ++s) {
    const auto si = static_cast<std::size_t>(s);
    if (l.done[si]) continue;
    engine::SampleDelta d;
    d.index = s;
    if (l.abort || l.finish_requested.contains(s)) {
      d.finish = l.abort ? FinishReason::kAbort : FinishReason::kStop;
    } else {
      const std::size_t pos =
          (static_cast<std::size_t>(l.generated[si]) + si) % opts_.script.size();
      const TokenId tok = opts_.script[pos];
      d.token_ids.push_back(tok);
      const std::int32_t count = ++l.generated[si];
      if (p.logprobs) {
        sampling::Logprobs lp{{tok, -0.5f}, {}};
        for (std::int32_t k = 0; k < *p.logprobs; ++k)
          lp.top.push_back({tok + k, -0.5f - static_cast<float>(k)});
        d.logprobs.push_back(lp);
      }
      const bool stop_tok = std::find(p.stop_token_ids.begin(), p.stop_token_ids.end(), tok) !=
                                p.stop_token_ids.end() ||
                            (opts_.eos && tok == *opts_.eos && !p.ignore_eos);
      if (count >= p.min_tokens && stop_tok)
        d.finish = FinishReason::kStop;
      else if (count >= *p.max_tokens)
        d.finish = FinishReason::kLength;
    }
    if (d.finish != FinishReason::kNone) l.done[si] = true;
    item.samples.push_back(std::move(d));
  }
  if (l.first_token == 0) l.first_token = now;
  finished = std::all_of(l.done.begin(), l.done.end(), [](bool b) { return b; });
  if (finished) {
    item.finished = true;
    if (l.req.pool && !l.abort) item.pooled = fake_pooled(l.req.prompt);
    item.timing = engine::RequestTiming{l.first_scheduled - l.req.arrival_time,
                                        l.first_token - l.first_scheduled, now - l.first_token};
  }
  return item;
}

void FakeEngine::loop() {
  std::unique_lock lk(mu_);
  while (!stop_) {
    cv_.wait_for(lk, opts_.step_latency, [&] { return stop_; });
    if (stop_) break;
    if (paused_) {
      // Aborts still land while paused, as a real engine frees blocks of a
      // waiting request; only token generation stops.
      bool any = false;
      for (auto& [id, l] : live_) any = any || l.abort;
      if (!any) continue;
    }
    std::vector<std::pair<std::shared_ptr<OutputChannel>, RequestOutput>> out;
    for (auto it = live_.begin(); it != live_.end();) {
      Live& l = it->second;
      if (paused_ && !l.abort) {
        ++it;
        continue;
      }
      bool finished = false;
      RequestOutput item = step(l, finished);
      out.emplace_back(l.stream, std::move(item));
      if (finished) {
        if (l.abort) aborted_.insert(it->first);
        it = live_.erase(it);
      } else {
        ++it;
      }
    }
    ++steps_;
    lk.unlock();
    for (auto& [stream, item] : out) stream->push(std::move(item));
    cv_.notify_all();
    lk.lock();
  }
}

}  // namespace folio::server::testing
