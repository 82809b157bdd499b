// server/post_gate.h: lets engine threads post into the IO context safely.
//
// Engine threads wake sessions by posting to their strands. At shutdown the
// io_context is destroyed; close() waits for any post in progress and makes
// later ones no-ops, so no engine thread ever touches a dead io_context.
#pragma once

#include <shared_mutex>

namespace folio::server {

class PostGate {
 public:
  // Runs `post()` unless the gate is closed; returns whether it ran.
  template <class F>
  bool run(F&& post) {
    std::shared_lock lock(mu_);
    if (!open_) return false;
    post();
    return true;
  }
  void close() {
    std::unique_lock lock(mu_);
    open_ = false;
  }

 private:
  std::shared_mutex mu_;
  bool open_ = true;
};

}  // namespace folio::server
