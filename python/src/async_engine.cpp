// python/src/async_engine.cpp: the engine thread and its wake-ups.
#include "async_engine.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"

namespace folio::python {

AsyncEngine::AsyncEngine(const std::string& model, const cli::EngineFlags& flags)
    : session_(model, flags) {
  fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd_ < 0) throw Error(std::string("eventfd: ") + std::strerror(errno));
  loop_ = std::make_unique<engine::EngineLoop>(session_.core());
}

AsyncEngine::~AsyncEngine() {
  loop_.reset();  // joins the engine thread: no callback runs after this
  ::close(fd_);
}

void AsyncEngine::submit(std::uint64_t id, const Request& request) {
  const engine::RequestId rid{id};
  engine::AdmittedRequest admitted = session_.admit(request, rid);
  Stream s;
  s.out = session_.output_processor(request);
  s.result = make_result(s.out->n());
  {
    const std::lock_guard lock(mu_);
    if (streams_.count(id) != 0) throw Error("request id " + std::to_string(id) + " is live");
    streams_.emplace(id, std::move(s));
  }
  std::shared_ptr<engine::OutputChannel> channel = loop_->submit(std::move(admitted));
  {
    const std::lock_guard lock(mu_);
    streams_.at(id).channel = channel;
  }
  // After the stream is in place: the callback may fire at once.
  channel->set_notify([this, id] {
    {
      const std::lock_guard lock(mu_);
      ready_.push_back(id);
    }
    const std::uint64_t one = 1;
    // A full counter (2^64 - 2 wake-ups unread) cannot happen; EAGAIN would
    // only mean the reader is already due to wake.
    [[maybe_unused]] const ssize_t n = ::write(fd_, &one, sizeof one);
  });
}

std::vector<std::uint64_t> AsyncEngine::take_ready() {
  std::uint64_t count = 0;
  [[maybe_unused]] const ssize_t n = ::read(fd_, &count, sizeof count);  // EAGAIN: none
  const std::lock_guard lock(mu_);
  std::vector<std::uint64_t> out;
  out.swap(ready_);
  return out;
}

std::optional<Result> AsyncEngine::drain(std::uint64_t id) {
  std::shared_ptr<engine::OutputChannel> channel;
  {
    const std::lock_guard lock(mu_);
    const auto it = streams_.find(id);
    if (it == streams_.end() || !it->second.channel) return std::nullopt;
    channel = it->second.channel;
  }
  const std::vector<engine::RequestOutput> items = channel->drain();
  if (items.empty()) return std::nullopt;
  // Only this request's consumer drains it (one coroutine per id): the
  // stream is not touched by anyone else while it is rendered.
  Stream* s = nullptr;
  {
    const std::lock_guard lock(mu_);
    s = &streams_.at(id);
  }
  for (const std::int32_t index : apply(s->result, *s->out, items))
    loop_->finish_sample(engine::RequestId{id}, index);
  if (!s->result.finished && !s->result.error.empty()) loop_->abort(engine::RequestId{id});
  return s->result;
}

void AsyncEngine::abort(std::uint64_t id) {
  loop_->abort(engine::RequestId{id});
}

void AsyncEngine::release(std::uint64_t id) {
  std::shared_ptr<engine::OutputChannel> channel;
  {
    const std::lock_guard lock(mu_);
    const auto it = streams_.find(id);
    if (it == streams_.end()) return;
    channel = it->second.channel;
  }
  if (channel) {
    channel->set_notify(nullptr);  // no callback for this id runs after this
    if (!channel->finished()) loop_->abort(engine::RequestId{id});
  }
  const std::lock_guard lock(mu_);
  streams_.erase(id);
}

std::size_t AsyncEngine::num_live() const {
  const std::lock_guard lock(mu_);
  return streams_.size();
}

}  // namespace folio::python
