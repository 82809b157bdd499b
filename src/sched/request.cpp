#include "sched/request.h"

#include <string>
#include <tuple>

#include "base/error.h"

namespace folio::sched {

const char* status_name(RequestStatus s) {
  switch (s) {
    case RequestStatus::kWaiting:
      return "WAITING";
    case RequestStatus::kRunning:
      return "RUNNING";
    case RequestStatus::kPreempted:
      return "PREEMPTED";
    case RequestStatus::kFinishedStopped:
      return "FINISHED_STOPPED";
    case RequestStatus::kFinishedLength:
      return "FINISHED_LENGTH";
    case RequestStatus::kFinishedAborted:
      return "FINISHED_ABORTED";
    case RequestStatus::kFinishedError:
      return "FINISHED_ERROR";
  }
  return "?";
}

bool is_finished(RequestStatus s) {
  return s != RequestStatus::kWaiting && s != RequestStatus::kRunning &&
         s != RequestStatus::kPreempted;
}

RequestStatus finished_status(FinishReason r) {
  switch (r) {
    case FinishReason::kStop:
      return RequestStatus::kFinishedStopped;
    case FinishReason::kLength:
      return RequestStatus::kFinishedLength;
    case FinishReason::kAbort:
      return RequestStatus::kFinishedAborted;
    case FinishReason::kError:
      return RequestStatus::kFinishedError;
    case FinishReason::kNone:
      break;
  }
  FOLIO_CHECK(false, "no finished status for FinishReason::kNone");
}

void transition(Request& r, RequestStatus to) {
  const RequestStatus from = r.status;
  bool ok = false;
  if (is_finished(to)) {
    ok = !is_finished(from);
  } else if (to == RequestStatus::kRunning) {
    ok = from == RequestStatus::kWaiting || from == RequestStatus::kPreempted;
  } else if (to == RequestStatus::kPreempted) {
    ok = from == RequestStatus::kRunning;
  }
  FOLIO_CHECK(ok, std::string("request state ") + status_name(from) + " -> " + status_name(to));
  r.status = to;
}

bool served_before(const Request& a, const Request& b, SchedulingPolicy policy) {
  if (policy == SchedulingPolicy::kPriority)
    return std::tie(a.priority, a.arrival_time, a.id) < std::tie(b.priority, b.arrival_time, b.id);
  return std::tie(a.arrival_time, a.id) < std::tie(b.arrival_time, b.id);
}

}  // namespace folio::sched
