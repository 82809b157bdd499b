// sched/request_queue.h: the waiting queue, ordered by the scheduling policy.
//
// FCFS orders by (arrival_time, id), priority by (priority, arrival_time,
// id). A preempted request keeps its arrival time, so it goes back near the
// front rather than behind requests that arrived after it.
#pragma once

#include <cstddef>
#include <set>

#include "sched/request.h"

namespace folio::sched {

class RequestQueue {
 public:
  explicit RequestQueue(SchedulingPolicy policy) : set_(Order{policy}) {}

  bool empty() const { return set_.empty(); }
  std::size_t size() const { return set_.size(); }
  Request* front() const { return *set_.begin(); }
  void push(Request* r) { set_.insert(r); }
  void pop_front() { set_.erase(set_.begin()); }
  // Returns false when `r` is not queued.
  bool remove(Request* r) { return set_.erase(r) > 0; }

  auto begin() const { return set_.begin(); }
  auto end() const { return set_.end(); }

 private:
  struct Order {
    SchedulingPolicy policy;
    bool operator()(const Request* a, const Request* b) const {
      return served_before(*a, *b, policy);
    }
  };
  std::set<Request*, Order> set_;
};

}  // namespace folio::sched
