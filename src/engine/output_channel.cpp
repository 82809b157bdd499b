#include "engine/output_channel.h"

#include <utility>

namespace folio::engine {

void OutputChannel::push(RequestOutput item) {
  bool fire = false;
  {
    std::lock_guard lock(mu_);
    if (item.finished) finished_ = true;
    queue_.push_back(std::move(item));
    fire = armed_;
    armed_ = false;
  }
  cv_.notify_one();
  if (fire) {
    std::lock_guard lock(notify_mu_);
    if (notify_) notify_();
  }
}

void OutputChannel::set_notify(std::function<void()> notify) {
  bool pending = false;
  {
    std::lock_guard lock(notify_mu_);
    notify_ = std::move(notify);
    std::lock_guard q(mu_);
    pending = !queue_.empty();
    if (pending) armed_ = false;
  }
  if (pending) {
    std::lock_guard lock(notify_mu_);
    if (notify_) notify_();
  }
}

std::vector<RequestOutput> OutputChannel::drain() {
  std::lock_guard lock(mu_);
  std::vector<RequestOutput> out(std::make_move_iterator(queue_.begin()),
                                 std::make_move_iterator(queue_.end()));
  queue_.clear();
  armed_ = true;
  return out;
}

std::vector<RequestOutput> OutputChannel::wait_drain(std::chrono::milliseconds timeout) {
  {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return !queue_.empty(); });
  }
  return drain();
}

std::vector<RequestOutput> OutputChannel::wait_all() {
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return finished_; });
  }
  return drain();
}

bool OutputChannel::finished() const {
  std::lock_guard lock(mu_);
  return finished_;
}

}  // namespace folio::engine
