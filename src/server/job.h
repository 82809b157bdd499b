// server/job.h: a generation in flight, as the HTTP session drives it.
//
// The session attach()es a wake-up, poll()s whenever woken and writes what
// poll() returns, and cancel()s when the client goes away. It writes the
// reply's head once head_ready() (a non-streaming one when done), with the
// job's headers() as they are then: a job that decides late what answers
// (CascadeJob) names it there.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace folio::server {

struct JobOutput {
  std::string bytes;  // SSE frames, or the whole body when done (non-stream)
  bool done = false;
  int status = 200;  // non-stream only: 500 when the engine failed
};

using HeaderList = std::vector<std::pair<std::string, std::string>>;

class Job {
 public:
  virtual ~Job() = default;
  // `notify` runs on an engine thread whenever new output may be ready.
  virtual void attach(const std::function<void()>& notify) = 0;
  virtual JobOutput poll() = 0;
  // The client went away: abort every unfinished engine request now.
  virtual void cancel() = 0;
  virtual bool streaming() const = 0;
  virtual HeaderList headers() const { return {}; }
  // False while the job has not decided what answers (a streaming head,
  // with headers(), waits for it).
  virtual bool head_ready() const { return true; }
};

}  // namespace folio::server
