// server/request_stream.cpp: the per-request output channel (see engine_client.h).
#include "server/engine_client.h"

namespace folio::server {

void RequestStream::push(StreamItem item) {
  bool fire = false;
  {
    std::lock_guard lock(mu_);
    if (finished_) return;  // contract: nothing after the final item
    finished_ = item.finished;
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

void RequestStream::set_notify(std::function<void()> notify) {
  bool pending = false;
  {
    std::lock_guard lock(notify_mu_);
    notify_ = std::move(notify);
    if (!notify_) return;
  }
  {
    std::lock_guard lock(mu_);
    pending = !queue_.empty();
    if (pending) armed_ = false;
  }
  if (pending) {
    std::lock_guard lock(notify_mu_);
    if (notify_) notify_();
  }
}

std::vector<StreamItem> RequestStream::drain() {
  std::lock_guard lock(mu_);
  std::vector<StreamItem> out(std::make_move_iterator(queue_.begin()),
                              std::make_move_iterator(queue_.end()));
  queue_.clear();
  armed_ = true;
  return out;
}

std::vector<StreamItem> RequestStream::wait_drain(std::chrono::milliseconds timeout) {
  {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return !queue_.empty(); });
  }
  return drain();
}

bool RequestStream::finished() const {
  std::lock_guard lock(mu_);
  return finished_;
}

}  // namespace folio::server
