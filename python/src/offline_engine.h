// python/src/offline_engine.h: `LLM.generate`: a batch of requests through
// the continuous-batching engine on the calling thread.
//
// All requests are admitted first (a bad one fails the call before anything
// runs, naming its position), then queued together, and the engine steps
// until every one finished, as `folio generate` does: the same scheduling,
// hence the same greedy tokens. Between steps `poll(done, total)` runs (the
// bindings re-take the GIL there to check for Ctrl-C and report progress);
// when it returns false every request is aborted and generate() returns
// nothing. One generate() runs at a time per engine (a mutex).
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "model_session.h"
#include "request.h"

namespace folio::python {

class OfflineEngine {
 public:
  OfflineEngine(const std::string& model, const cli::EngineFlags& flags) : session_(model, flags) {}

  ModelSession& session() { return session_; }
  const ModelSession& session() const { return session_; }

  using Poll = std::function<bool(std::size_t done, std::size_t total)>;
  // Results in request order; empty when poll() stopped the run.
  std::vector<Result> generate(const std::vector<Request>& requests, const Poll& poll);

 private:
  ModelSession session_;
  std::mutex mu_;
  std::uint64_t next_id_ = 1;
};

}  // namespace folio::python
