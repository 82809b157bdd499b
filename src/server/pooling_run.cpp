#include "server/pooling_run.h"

#include "base/timer.h"
#include "server/engine_submit.h"

namespace folio::server {

PoolingRun::PoolingRun(ServerContext& ctx, ServedModel& model,
                       std::vector<std::vector<TokenId>> prompts)
    : ctx_(ctx), model_(model), prompts_(std::move(prompts)) {
  items_.resize(prompts_.size());
  means_.resize(prompts_.size());
}

PoolingRun::~PoolingRun() {
  for (Item& i : items_) {
    if (i.channel) i.channel->set_notify(nullptr);
  }
  release_all(!done_);
}

void PoolingRun::submit() {
  const double now = monotonic_seconds();
  std::vector<engine::EngineRequest> requests;
  for (const auto& prompt : prompts_) {
    engine::EngineRequest er;
    er.id = ctx_.next_request_id();
    er.prompt = prompt;
    er.params.temperature = 0;
    er.pool = true;
    er.arrival_time = now;
    requests.push_back(std::move(er));
  }
  std::vector<engine::AdmittedRequest> admitted =
      admit_requests(ctx_, model_, std::move(requests), now);
  for (std::size_t i = 0; i < admitted.size(); ++i) {
    items_[i].id = admitted[i].request().id;
    items_[i].channel = model_.engine.submit(std::move(admitted[i]));
  }
  model_.metrics.add_prompt_tokens(prompt_tokens());
}

void PoolingRun::attach(const std::function<void()>& notify) {
  for (Item& i : items_) i.channel->set_notify(notify);
}

bool PoolingRun::poll() {
  if (done_) return true;
  bool all = true;
  for (std::size_t k = 0; k < items_.size(); ++k) {
    Item& item = items_[k];
    for (engine::RequestOutput& o : item.channel->drain()) {
      if (!o.error.empty() && error_.empty()) error_ = o.error;
      if (!o.finished) continue;
      item.finished = true;
      ctx_.admission.release(item.id);
      model_.metrics.request_finished(o.error.empty() ? "stop" : "error");
      if (o.pooled.empty() && error_.empty()) error_ = "the engine returned no pooled state";
      means_[k] = std::move(o.pooled);
    }
    all = all && item.finished;
  }
  done_ = all || !error_.empty();
  if (done_ && !all) release_all(true);
  return done_;
}

void PoolingRun::cancel() {
  if (!done_) release_all(true);
  done_ = true;
  if (error_.empty()) error_ = "cancelled";
}

void PoolingRun::release_all(bool aborted) {
  if (released_) return;
  released_ = true;
  for (Item& i : items_) {
    if (i.finished || !i.id.valid()) continue;
    if (aborted && i.channel) {
      model_.engine.abort(i.id);
      model_.metrics.request_finished("abort");
    }
    ctx_.admission.release(i.id);
  }
}

std::int64_t PoolingRun::prompt_tokens() const {
  std::int64_t n = 0;
  for (const auto& p : prompts_) n += static_cast<std::int64_t>(p.size());
  return n;
}

}  // namespace folio::server
