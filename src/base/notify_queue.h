// base/notify_queue.h: a single-consumer output channel for one request.
//
// The producer (the engine thread) pushes items; the last one has
// `finished == true` and nothing is accepted after it. The one consumer
// either blocks (wait_drain / wait_all, for tools and tests) or registers an
// edge-triggered callback (set_notify, for async IO): the callback runs on
// the producer's thread once per transition from "drained" to "has items",
// so a step wakes exactly the consumers whose requests advanced (DESIGN.md:
// nothing wakes all waiters). The callback may call drain(); it must not
// call set_notify(). After set_notify() returns, no call of the previous
// callback is running or will run.
//
// Item: any movable type with a `bool finished` member.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <iterator>
#include <mutex>
#include <utility>
#include <vector>

namespace folio {

template <typename Item>
class NotifyQueue {
 public:
  // Producer side.
  void push(Item item) {
    bool fire = false;
    {
      std::lock_guard lock(mu_);
      if (finished_) return;  // nothing after the final item
      finished_ = item.finished;
      queue_.push_back(std::move(item));
      fire = armed_;
      armed_ = false;
    }
    cv_.notify_all();
    if (fire) {
      std::lock_guard lock(notify_mu_);
      if (notify_) notify_();
    }
  }

  // Consumer side.
  void set_notify(std::function<void()> notify) {
    {
      std::lock_guard lock(notify_mu_);
      notify_ = std::move(notify);
      if (!notify_) return;
    }
    bool pending = false;
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

  // Everything queued so far (possibly nothing); re-arms the notification.
  std::vector<Item> drain() {
    std::lock_guard lock(mu_);
    std::vector<Item> out(std::make_move_iterator(queue_.begin()),
                          std::make_move_iterator(queue_.end()));
    queue_.clear();
    armed_ = true;
    return out;
  }

  // Blocks up to `timeout` for at least one item.
  std::vector<Item> wait_drain(std::chrono::milliseconds timeout) {
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, timeout, [&] { return !queue_.empty(); });
    }
    return drain();
  }

  // Blocks until the final item was pushed; returns everything not drained.
  std::vector<Item> wait_all() {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return finished_; });
    }
    return drain();
  }

  // The final item has been pushed (it may not have been drained yet).
  bool finished() const {
    std::lock_guard lock(mu_);
    return finished_;
  }

 private:
  mutable std::mutex mu_;  // guards queue_, armed_, finished_
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool armed_ = true;
  bool finished_ = false;
  std::mutex notify_mu_;  // held while calling notify_, so set_notify fences it
  std::function<void()> notify_;
};

}  // namespace folio
